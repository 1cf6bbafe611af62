/**
 * The consumer worker: a kafkajs consumer group feeding the batch pipeline (worker-batches.ts).
 * eachBatch walks each fetch into per-partition cutters (worker-fetch.ts), waiting (with
 * heartbeats) when the in-flight byte budget is reached and pausing a partition at its
 * outstanding-batch cap — so a ClickHouse outage stops fetching instead of growing memory.
 * Offsets are committed only by the pipeline's committer (autoCommit off). Every new assignment
 * installs fresh partition states from the committed offsets and cut journals; the previous ones
 * are killed, never committed again.
 */
import type { Admin, Consumer, Producer } from 'kafkajs';
import type { Logger } from '../../common/src/log';
import { sleep } from '../../common/src/timing';
import { isKafkaUnavailable, rerunConsumer } from './consumer-restart';
import type { WorkerConfig } from '../../common/src/worker-config';
import { ByteBudget, Slots } from './delivery/flow-control';
import { OffsetCommitter } from './delivery/offset-committer';
import { generationCommitSender } from './delivery/group-generation';
import { PartitionState } from './delivery/partition-state';
import type { WorkerMetrics } from './observability/metrics';
import { BatchDelivery } from './sink/batch-delivery';
import { createIntegrityStage } from './integrity/integrity-stage';
import type { ClickHouseSink } from './sink/clickhouse-sink';
import { errorReason } from './sink/retry';
import { ValueIntake } from './worker-values';
import { tokenSalt } from './sink/token';
import { BatchPipeline } from './worker-batches';
import { FetchIntake } from './worker-fetch';
import { resolveTuning, type WorkerSecrets, type WorkerTuning } from './worker-tuning';
import { makeCommitSender, observeCommits, observeDelivery } from './worker-hooks';
import {
  createCoverage,
  createEncoder,
  createKafkaParts,
  createSink,
  installKafkaDecoding,
  loadJournals,
} from './worker-parts';
import { IdentityStats } from './encode/identity-stats';
import { workerReadiness } from './worker-readiness';
import type { CoverageReporter } from './observability/parser-coverage';

/** One worker process's consumer, pipeline and health state. */
export class Worker {
  readonly tuning: WorkerTuning;
  private readonly consumer: Consumer;
  private readonly admin: Admin;
  private readonly producer?: Producer;
  private readonly sink: ClickHouseSink;
  private readonly pipeline: BatchPipeline;
  private readonly committer: OffsetCommitter;
  private readonly budget: ByteBudget;
  private partitions = new Map<number, PartitionState>();
  private readonly intake: FetchIntake;
  private readonly integrity?: ReturnType<typeof createIntegrityStage>;
  private timer?: NodeJS.Timeout;
  private draining = false;
  private listening = false;
  private joined = false;
  private crashed = false;
  /** Why the consumer stopped for good (main.ts writes it to the termination message and exits). */
  private crashError?: unknown;
  private clickhouseOk = false;
  /** The consumer's last crash error since it last joined (readiness names a Kafka outage by it). */
  private consumerError?: unknown;
  private lastClickHouseCheck = 0;
  private readonly coverage: CoverageReporter;
  /** Process CPU seconds when the first assignment arrived (the benchmark's steady-state start). */
  private firstJoinCpuSeconds?: number;

  /** Builds every component from the config; throws on invalid configuration (columns, identifiers). */
  constructor(
    private readonly cfg: WorkerConfig,
    secrets: WorkerSecrets,
    private readonly metrics: WorkerMetrics,
    private readonly log: Logger,
  ) {
    installKafkaDecoding(cfg.kafka.maxValueBytes, log);
    this.tuning = resolveTuning(cfg);
    const t = this.tuning;
    const identity = new IdentityStats();
    const encoder = createEncoder(cfg, identity, t.insertFormat);
    this.coverage = createCoverage(cfg, secrets, identity, metrics, log);
    const kafka = createKafkaParts(cfg, secrets, t, log, (partition) =>
      metrics.offsetResets.inc({ partition: String(partition) }),
    );
    this.consumer = kafka.consumer;
    this.admin = kafka.admin;
    this.producer = kafka.producer;
    this.sink = createSink(cfg, secrets, t, encoder.plan.names);
    const p = cfg.pipeline;
    const delivery = new BatchDelivery(
      this.sink,
      kafka.deadLetterProducer,
      `${p.namespace}/${p.name}`,
      observeDelivery(metrics, log, () => this.onInsertOutcome()),
    );
    // Commits are bound to the generation of their assignment (a stale one is refused by the broker).
    const send = generationCommitSender(kafka.generations, makeCommitSender(this.consumer));
    this.committer = new OffsetCommitter(send, observeCommits(metrics, log));
    this.budget = new ByteBudget(t.maxInFlightBytes);
    if (cfg.integrity.enabled) {
      this.integrity = createIntegrityStage(
        cfg,
        { username: secrets.clickhouseUser, password: secrets.clickhousePassword },
        (msg, fields) => log.warn(msg, fields),
      );
    }
    this.pipeline = new BatchPipeline({
      encoder,
      delivery,
      committer: this.committer,
      budget: this.budget,
      slots: new Slots(t.insertConcurrency),
      metrics,
      log,
      tokenSalt: tokenSalt(p.uid, cfg.clickhouse.database, cfg.clickhouse.table),
      integrity: this.integrity?.stage,
    });
    this.intake = new FetchIntake({
      consumer: this.consumer,
      topic: cfg.kafka.topic,
      budget: this.budget,
      values: new ValueIntake(cfg.kafka.maxValueBytes, metrics, log),
      pipeline: this.pipeline,
      metrics,
      maxOutstandingBatchesPerPartition: t.maxOutstandingBatchesPerPartition,
      draining: () => this.draining,
    });
  }

  /** Connects, subscribes and starts consuming; resolves once the consumer runs. */
  async start(): Promise<void> {
    if (!this.listening) this.listen();
    await this.admin.connect();
    if (this.producer) await this.producer.connect();
    await this.runConsumer();
    const tickMs = Math.min(200, Math.max(10, Math.floor(this.cfg.batch.maxDelayMs / 5)));
    this.timer = setInterval(() => {
      this.pipeline.tick(this.partitions.values(), Date.now());
      this.intake.resumeReady(this.partitions);
    }, tickMs);
    void this.checkClickHouse();
    this.coverage.start();
  }

  /** Connects, subscribes and runs the consumer (at start, and again after a Kafka outage). */
  private async runConsumer(): Promise<void> {
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: [this.cfg.kafka.topic], fromBeginning: true });
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.tuning.partitionsConsumedConcurrently,
      eachBatch: (payload) => this.intake.eachBatch(payload, this.partitions.get(payload.batch.partition)),
    });
  }

  private listen(): void {
    this.listening = true;
    const { events } = this.consumer;
    this.consumer.on(events.REBALANCING, () => {
      this.joined = false;
      this.committer.fence();
    });
    this.consumer.on(events.GROUP_JOIN, (e) =>
      this.onAssignment(e.payload.memberAssignment[this.cfg.kafka.topic] ?? []),
    );
    this.consumer.on(events.END_BATCH_PROCESS, (e) => {
      const b = e.payload;
      // batchSize 0: kafkajs filtered the whole fetch (markers, aborted records) and skipped eachBatch.
      if (b.batchSize === 0 && b.firstOffset !== null && b.topic === this.cfg.kafka.topic)
        this.intake.filteredFetch(
          this.partitions.get(b.partition),
          Number(b.firstOffset),
          Number(b.lastOffset),
        );
    });
    this.consumer.on(events.CRASH, (e) => {
      this.joined = false;
      this.consumerError = e.payload.error;
      this.committer.fence();
      // Kafka unreachable is an outage to wait out, not a reason to stop for good.
      const rerun = !e.payload.restart && !this.draining && isKafkaUnavailable(e.payload.error);
      this.crashed = !e.payload.restart && !rerun;
      if (this.crashed) this.crashError = e.payload.error;
      this.log.error('consumer crashed', {
        err: errorReason(e.payload.error),
        restart: e.payload.restart || rerun,
      });
      if (rerun)
        void rerunConsumer(
          () => this.runConsumer(),
          () => this.draining,
          this.log,
        );
    });
  }

  /** The error that stopped the consumer for good, if it did. */
  fatalError(): unknown {
    return this.crashError;
  }

  /** Process CPU seconds used before the first assignment (start-up cost), once joined. */
  cpuAtFirstJoinSeconds(): number | undefined {
    return this.firstJoinCpuSeconds;
  }

  /** Liveness: false once the consumer stopped for good. */
  alive(): boolean {
    return !this.crashed;
  }

  /** Readiness: joined with an assignment installed and ClickHouse reachable (worker-readiness.ts). */
  ready(): { ready: boolean; reason: string } {
    if (Date.now() - this.lastClickHouseCheck > 5_000) void this.checkClickHouse();
    const { draining, joined, clickhouseOk, consumerError } = this;
    return workerReadiness({ draining, joined, clickhouseOk, consumerError });
  }

  private onInsertOutcome(): void {
    this.clickhouseOk = true;
    this.lastClickHouseCheck = Date.now();
  }

  private async checkClickHouse(): Promise<void> {
    this.lastClickHouseCheck = Date.now();
    this.clickhouseOk = await this.sink.reachable();
  }

  /** Installs the states of a new assignment and kills the previous ones. */
  private onAssignment(assigned: number[]): void {
    if (this.firstJoinCpuSeconds === undefined) {
      const cpu = process.cpuUsage();
      this.firstJoinCpuSeconds = (cpu.user + cpu.system) / 1e6;
    }
    const revoked = [...this.partitions.keys()].filter((p) => !assigned.includes(p));
    for (const s of this.partitions.values()) s.kill();
    // A last signed checkpoint, then the chains this worker no longer owns are forgotten; the stage
    // makes every later seal wait for it, so a kept or re-assigned partition never loses its head.
    if (revoked.length > 0) void this.integrity?.stage.revoke(revoked);
    this.committer.reap();
    this.partitions = new Map();
    for (const p of assigned)
      this.partitions.set(p, new PartitionState(this.cfg.kafka.topic, p, this.cfg.batch));
    this.metrics.lag.reset();
    this.budget.wake();
    this.joined = true;
    this.consumerError = undefined;
    this.committer.unfence();
    this.log.info('partitions assigned', { partitions: assigned });
    void loadJournals(this.admin, this.cfg, new Map(this.partitions), this.log);
  }

  /**
   * SIGTERM: stop taking messages, close open batches, wait for in-flight ones (bounded), commit
   * what is stored, leave the group. Never throws; resolves within about `timeoutMs`.
   */
  async drain(timeoutMs = this.tuning.drainTimeoutMs): Promise<{ clean: boolean }> {
    const deadline = Date.now() + timeoutMs;
    this.draining = true;
    this.budget.wake();
    if (this.timer) clearInterval(this.timer);
    const states = [...this.partitions.values()];
    try {
      this.consumer.pause([{ topic: this.cfg.kafka.topic }]);
    } catch {
      /* not running yet */
    }
    this.pipeline.closeOpen(states, Date.now());
    // Keep a few seconds for the final commit and the LeaveGroup.
    const finished = await Promise.race([
      this.pipeline.idle().then(() => true),
      sleep(Math.max(0, deadline - Date.now() - 4_000)).then(() => false),
    ]);
    if (!finished)
      this.log.warn('drain deadline: abandoning in-flight batches', {
        inflight: this.pipeline.inflightBatches,
      });
    await Promise.race([
      Promise.allSettled(states.filter((s) => s.alive).map((s) => this.committer.flush(s))),
      sleep(Math.max(0, deadline - Date.now() - 2_000)),
    ]);
    for (const s of states) s.kill();
    this.committer.reap();
    await Promise.race([this.disconnectAll(), sleep(Math.max(500, deadline - Date.now()))]);
    return { clean: finished };
  }

  private async disconnectAll(): Promise<void> {
    await Promise.allSettled([
      this.consumer.disconnect(),
      this.producer?.disconnect(),
      this.admin.disconnect(),
    ]);
    await this.coverage.stop();
    await this.sink.close().catch(() => undefined);
    if (this.integrity) {
      await this.integrity.stage.stop();
      await this.integrity.close().catch(() => undefined);
    }
  }
}
