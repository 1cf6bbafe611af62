/**
 * The consumer worker: a kafkajs consumer group feeding the batch pipeline (worker-batches.ts).
 * eachBatch takes messages one by one (record runs read in place: common/src/kafka/record-run.ts)
 * into per-partition cutters, resolving each offset once its
 * message is owned by the pipeline, heartbeating between chunks and waiting (with heartbeats)
 * when the in-flight byte budget or a partition's outstanding-batch cap is reached — so a
 * ClickHouse outage stops fetching instead of growing memory. Offsets are committed only by the
 * pipeline's committer (autoCommit off). Every new assignment installs fresh partition states from
 * the committed offsets and cut journals; the previous ones are killed, never committed again.
 */
import type { Admin, Consumer, EachBatchPayload, Producer } from 'kafkajs';
import type { Logger } from '../../common/src/log';
import { sleep } from '../../common/src/timing';
import { isKafkaUnavailable, rerunConsumer } from './consumer-restart';
import type { WorkerConfig } from '../../common/src/worker-config';
import { ByteBudget, Slots } from './delivery/flow-control';
import { registerKafkaCodecs } from '../../common/src/kafka/codecs';
import { installFastRecordDecoder } from '../../common/src/kafka/record-decoder';
import { recordBatchLimitFor, setRecordBatchOutputLimit } from '../../common/src/kafka/batch-bound';
import { installFastFetchBatch } from '../../common/src/kafka/fetch-batch';
import { FetchCursor } from '../../common/src/kafka/fetch-cursor';
import { OffsetCommitter } from './delivery/offset-committer';
import { generationCommitSender } from './delivery/group-generation';
import { PartitionState } from './delivery/partition-state';
import type { WorkerMetrics } from './observability/metrics';
import { IntakeClock } from '../../common/src/stage-cpu';
import { BatchDelivery } from './sink/batch-delivery';
import { createIntegrityStage } from './integrity/integrity-stage';
import type { ClickHouseSink } from './sink/clickhouse-sink';
import { errorReason } from './sink/retry';
import { countLines } from './sink/row-lines';
import { senderHeader } from './encode/batch';
import { ValueIntake } from './worker-values';
import { tokenSalt } from './sink/token';
import { BatchPipeline } from './worker-batches';
import { resolveTuning, type WorkerSecrets, type WorkerTuning } from './worker-tuning';
import { makeCommitSender, observeDelivery } from './worker-hooks';
import { createEncoder, createKafkaParts, createSink, loadJournals } from './worker-parts';
import { IdentityStats } from './encode/identity-stats';
import { workerReadiness } from './worker-readiness';
import { CoverageReporter } from './observability/parser-coverage';
import { hostname } from 'node:os';

const HEARTBEAT_EVERY_MS = 1_000;

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
  /** Partitions paused because their outstanding batches reached the cap (resumed by the tick). */
  private readonly paused = new Set<number>();
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
  private readonly values: ValueIntake;
  /** Process CPU seconds when the first assignment arrived (the benchmark's steady-state start). */
  private firstJoinCpuSeconds?: number;

  /** Builds every component from the config; throws on invalid configuration (columns, identifiers). */
  constructor(
    private readonly cfg: WorkerConfig,
    secrets: WorkerSecrets,
    private readonly metrics: WorkerMetrics,
    private readonly log: Logger,
  ) {
    registerKafkaCodecs();
    // No record batch decompresses past this (an inflating batch is dead-lettered whole: worker-values.ts).
    setRecordBatchOutputLimit(recordBatchLimitFor(cfg.kafka.maxValueBytes));
    // Before the consumer's first fetch loads kafkajs's own decoder (false inside jest's registry).
    const fastBatch = installFastFetchBatch(); // in place only when main.ts loaded it before kafkajs
    // Record runs (one lazily decompressed object per record batch) need the fast Batch, which
    // expands them for kafkajs's own filtering of aborted transactions.
    const runs = fastBatch && process.env.LOGPIPELINE_RECORD_RUNS !== '0';
    const fastDecoder = installFastRecordDecoder(true, { runs });
    log.info('kafka record decoder', {
      decoder: fastDecoder ? (runs ? 'runs' : 'fast') : 'kafkajs',
      batch: fastBatch ? 'fast' : 'kafkajs',
    });
    this.tuning = resolveTuning(cfg);
    this.values = new ValueIntake(cfg.kafka.maxValueBytes, metrics, log);
    const t = this.tuning;
    const identity = new IdentityStats();
    const encoder = createEncoder(cfg, identity, t.insertFormat);
    // Identity metrics always; stats rows only when the operator configured the stats table.
    const c = cfg.clickhouse;
    this.coverage = new CoverageReporter(
      identity,
      metrics,
      {
        ...{ url: c.url, username: secrets.clickhouseUser, password: secrets.clickhousePassword },
        ...{ database: c.database, table: cfg.coverage?.table, windowMs: cfg.coverage?.windowMs ?? 60_000 },
        worker: process.env.HOSTNAME ?? hostname(),
      },
      log,
    );
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
    this.committer = new OffsetCommitter(send, (ok, err) => {
      metrics.commits.inc({ outcome: ok ? 'ok' : 'failed' });
      if (!ok) log.warn('offset commit failed', { err: errorReason(err) });
    });
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
      this.resumeReady();
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
      eachBatch: (payload) => this.eachBatch(payload),
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

  private async eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, isRunning, isStale } = payload;
    const state = this.partitions.get(batch.partition);
    if (!state) return;
    await state.ready;
    const topic = batch.topic;
    const partition = batch.partition;
    // Message objects or record runs (record-run.ts), read record by record without objects of ours.
    const fetchedOffset = Number((batch as { fetchedOffset?: string }).fetchedOffset ?? 0);
    const records = new FetchCursor(batch.messages, fetchedOffset);
    // What this fetch brought counts as backlog while it is taken (the tick may run at an await).
    state.backlog = Math.max(0, Number(batch.highWatermark) - state.nextIn);
    let lastBeat = Date.now();
    let now = lastBeat;
    let lines = 0;
    let bytes = 0;
    let count = 0;
    // Offsets are resolved lazily (kafkajs parses each one as a Long): the last taken offset is
    // resolved before every await and at the end, which is all kafkajs ever looks at. A record run
    // read to its end resolves through its batch's last offset (records compacted away included).
    let unresolved = -1;
    let resolved = -1;
    const settle = () => {
      const through = Math.max(unresolved, records.exhaustedThrough);
      if (through > resolved) resolveOffset(String(through));
      resolved = Math.max(resolved, through);
    };
    // CPU of taking messages (value decode, line count, cutter), without the encodes it launches.
    const intake = new IntakeClock();
    for (let i = 0; records.next(); i++) {
      if ((i & 255) === 0) {
        if (!isRunning() || isStale() || !state.alive || this.draining) break;
        now = Date.now();
        if (now - lastBeat >= HEARTBEAT_EVERY_MS) {
          intake.pause();
          settle();
          await heartbeat();
          intake.resume();
          lastBeat = now;
        }
      }
      const offset = records.offset;
      if (offset < state.nextIn) {
        // Already stored (below the committed offset) or already taken (a re-fetch).
        unresolved = offset;
        continue;
      }
      if (this.partitionFull(state)) {
        // Never wait inside eachBatch for one partition: kafkajs would not fetch the others meanwhile.
        // Pause it instead; the tick resumes it once its batches drain (Kafka re-delivers from here).
        settle();
        this.pausePartition(partition);
        break;
      }
      // The partition has room (checked just above): only the shared byte budget can make it wait.
      if (this.budget.exhausted()) {
        settle();
        intake.pause();
        const room = await this.waitForCapacity(state, payload);
        intake.resume();
        if (!room) break;
        now = Date.now();
      }
      const headers = records.headers;
      const value = this.values.take(records.value, headers, records.notDecodable, offset, partition);
      // A value that did not decode is one dead letter for the whole message (worker-values.ts).
      const undecodable = this.values.failure;
      const n = undecodable === undefined ? countLines(value) : 1;
      const sender = senderHeader(headers);
      this.pipeline.take(state, { topic, partition, offset, value, sender, undecodable }, n, now);
      state.nextIn = offset + 1;
      unresolved = offset;
      lines += n;
      bytes += value.length;
      count++;
    }
    settle();
    intake.pause();
    this.metrics.messagesIn.inc(count);
    this.metrics.linesIn.inc(lines);
    this.metrics.bytesIn.inc(bytes);
    this.metrics.bytesInFlight.set(this.budget.bytes);
    if (state.alive) {
      state.backlog = Math.max(0, Number(batch.highWatermark) - state.nextIn);
      this.metrics.lag.set({ partition: String(partition) }, state.backlog);
    }
  }

  private mustWait(state: PartitionState): boolean {
    return this.budget.exhausted() || this.partitionFull(state);
  }

  /** The partition holds as many outstanding (cut, unfolded) batches as it may. */
  private partitionFull(state: PartitionState): boolean {
    return state.tracker.pending() >= this.tuning.maxOutstandingBatchesPerPartition;
  }

  private pausePartition(partition: number): void {
    if (this.paused.has(partition)) return;
    this.paused.add(partition);
    try {
      this.consumer.pause([{ topic: this.cfg.kafka.topic, partitions: [partition] }]);
    } catch {
      /* not running: nothing to pause */
    }
  }

  /** Resumes paused partitions that have room again (or are no longer ours). */
  private resumeReady(): void {
    if (this.draining) return;
    for (const partition of this.paused) {
      const state = this.partitions.get(partition);
      if (state && state.alive && this.partitionFull(state)) continue;
      this.paused.delete(partition);
      try {
        this.consumer.resume([{ topic: this.cfg.kafka.topic, partitions: [partition] }]);
      } catch {
        /* not running */
      }
    }
  }

  /** Waits for room while heartbeating; false when the batch must be left (rebalance, stop, drain). */
  private async waitForCapacity(state: PartitionState, p: EachBatchPayload): Promise<boolean> {
    while (this.mustWait(state)) {
      if (!p.isRunning() || p.isStale() || !state.alive || this.draining) return false;
      await this.budget.changed(HEARTBEAT_EVERY_MS);
      // Throws on a rebalance: kafkajs then rejoins, and the new assignment replaces this state.
      await p.heartbeat();
    }
    return state.alive && !this.draining;
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
