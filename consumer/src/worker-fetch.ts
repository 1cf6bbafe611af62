/**
 * The worker's fetch intake: kafkajs's eachBatch walk over one fetched batch and the flow control
 * around it. Messages are taken one by one (record runs read in place: common/src/kafka/record-run.ts)
 * into the partition's cutter, each offset resolved once its message is owned by the pipeline,
 * heartbeating between chunks and waiting (with heartbeats) when the in-flight byte budget is
 * reached; a partition at its outstanding-batch cap is paused instead (the tick resumes it), so a
 * ClickHouse outage stops fetching instead of growing memory. Kept apart from worker.ts so the
 * worker root holds only wiring, assignment and lifecycle.
 */
import type { Consumer, EachBatchPayload } from 'kafkajs';
import { FetchCursor } from '../../common/src/kafka/fetch-cursor';
import { IntakeClock } from '../../common/src/stage-cpu';
import type { ByteBudget } from './delivery/flow-control';
import type { PartitionState } from './delivery/partition-state';
import { senderHeader } from './encode/batch-io';
import type { WorkerMetrics } from './observability/metrics';
import { countLines } from './sink/row-lines';
import type { BatchPipeline } from './worker-batches';
import type { ValueIntake } from './worker-values';

const HEARTBEAT_EVERY_MS = 1_000;

/** What the fetch intake needs from the worker that owns it. */
export interface FetchIntakeDeps {
  consumer: Pick<Consumer, 'pause' | 'resume'>;
  topic: string;
  budget: ByteBudget;
  values: ValueIntake;
  pipeline: BatchPipeline;
  metrics: WorkerMetrics;
  /** How many outstanding (cut, unfolded) batches one partition may hold before it is paused. */
  maxOutstandingBatchesPerPartition: number;
  /** True once the worker drains (SIGTERM): no message is taken after that. */
  draining: () => boolean;
}

/**
 * The state of one eachBatch call: counters, the heartbeat clock and lazy offset resolution.
 * Offsets are resolved lazily (kafkajs parses each one as a Long): the last taken offset is
 * resolved before every await and at the end, which is all kafkajs ever looks at. A record run
 * read to its end resolves through its batch's last offset (records compacted away included).
 */
class FetchWalk {
  lines = 0;
  bytes = 0;
  count = 0;
  unresolved = -1;
  private resolved = -1;
  lastBeat = Date.now();
  now = this.lastBeat;
  /** CPU of taking messages (value decode, line count, cutter), without the encodes it launches. */
  readonly intake = new IntakeClock();

  constructor(
    readonly records: FetchCursor,
    private readonly resolveOffset: (offset: string) => void,
  ) {}

  /** Resolves the furthest offset taken or skipped so far, once. */
  settle(): void {
    const through = Math.max(this.unresolved, this.records.exhaustedThrough);
    if (through > this.resolved) this.resolveOffset(String(through));
    this.resolved = Math.max(this.resolved, through);
  }

  /** Reads the clock; true when a heartbeat is due. */
  beatDue(): boolean {
    this.now = Date.now();
    return this.now - this.lastBeat >= HEARTBEAT_EVERY_MS;
  }

  /** Resolves what was taken and heartbeats (outside the intake CPU count). */
  async beat(heartbeat: () => Promise<void>): Promise<void> {
    this.intake.pause();
    this.settle();
    await heartbeat();
    this.intake.resume();
    this.lastBeat = this.now;
  }
}

/** Walks fetched batches into the pipeline and pauses/resumes partitions by their outstanding batches. */
export class FetchIntake {
  /** Partitions paused because their outstanding batches reached the cap (resumed by the tick). */
  private readonly paused = new Set<number>();

  constructor(private readonly deps: FetchIntakeDeps) {}

  /** kafkajs's eachBatch for the partition's current state (nothing when the partition is not ours). */
  async eachBatch(payload: EachBatchPayload, state: PartitionState | undefined): Promise<void> {
    if (!state) return;
    await state.ready;
    const { batch } = payload;
    // Message objects or record runs (record-run.ts), read record by record without objects of ours.
    const fetchedOffset = Number((batch as { fetchedOffset?: string }).fetchedOffset ?? 0);
    const records = new FetchCursor(batch.messages, fetchedOffset);
    // What this fetch brought counts as backlog while it is taken (the tick may run at an await).
    state.backlog = Math.max(0, Number(batch.highWatermark) - state.nextIn);
    const walk = new FetchWalk(records, payload.resolveOffset);
    // The fetch follows on from what was taken (no gap before it): only then can its tail be passed.
    const contiguous = fetchedOffset <= state.nextIn;
    let complete = false;
    for (let i = 0; ; i++) {
      if (!records.next()) {
        complete = true;
        break;
      }
      if ((i & 255) === 0) {
        if (this.mustLeave(state, payload)) break;
        if (walk.beatDue()) await walk.beat(payload.heartbeat);
      }
      const offset = records.offset;
      if (offset < state.nextIn) {
        // Already stored (below the committed offset) or already taken (a re-fetch).
        walk.unresolved = offset;
        continue;
      }
      if (this.partitionFull(state)) {
        // Never wait inside eachBatch for one partition: kafkajs would not fetch the others meanwhile.
        // Pause it instead; the tick resumes it once its batches drain (Kafka re-delivers from here).
        walk.settle();
        this.pausePartition(batch.partition);
        break;
      }
      // The partition has room (checked just above): only the shared byte budget can make it wait.
      if (this.deps.budget.exhausted() && !(await this.waitInWalk(walk, state, payload))) break;
      this.takeRecord(walk, state, batch.topic, batch.partition, offset);
    }
    // Every record with data was taken: what follows in the fetch (markers, aborted records) is passed.
    if (complete && contiguous && state.alive) this.passOver(state, Number(batch.lastOffset()));
    this.finish(walk, state, batch.partition, batch.highWatermark);
  }

  /**
   * A fetch of the partition that held nothing for the pipeline (only transaction markers or
   * aborted records: kafkajs then skips eachBatch and reports it by END_BATCH_PROCESS with no
   * messages), from `firstOffset` through `lastOffset`.
   */
  filteredFetch(state: PartitionState | undefined, firstOffset: number, lastOffset: number): void {
    if (!state || !state.alive || firstOffset > state.nextIn) return;
    this.passOver(state, lastOffset);
    state.backlog = 0;
  }

  private passOver(state: PartitionState, lastOffset: number): void {
    if (!Number.isSafeInteger(lastOffset)) return;
    state.passOver(lastOffset);
    this.deps.pipeline.foldPassedOver(state);
  }

  /** Hands the cursor's current record to the pipeline and counts it. */
  private takeRecord(
    walk: FetchWalk,
    state: PartitionState,
    topic: string,
    partition: number,
    offset: number,
  ): void {
    const { records } = walk;
    const { values } = this.deps;
    const headers = records.headers;
    const value = values.take(records.value, headers, records.notDecodable, offset, partition);
    // A value that did not decode is one dead letter for the whole message (worker-values.ts).
    const undecodable = values.failure;
    const n = undecodable === undefined ? countLines(value) : 1;
    const sender = senderHeader(headers);
    const message = { topic, partition, offset, value, sender, undecodable };
    this.deps.pipeline.take(state, message, n, walk.now);
    state.nextIn = offset + 1;
    walk.unresolved = offset;
    walk.lines += n;
    walk.bytes += value.length;
    walk.count++;
  }

  /** Resolves the walk's offsets and publishes its counters, backlog and lag. */
  private finish(walk: FetchWalk, state: PartitionState, partition: number, highWatermark: string): void {
    walk.settle();
    walk.intake.pause();
    const { metrics, budget } = this.deps;
    metrics.messagesIn.inc(walk.count);
    metrics.linesIn.inc(walk.lines);
    metrics.bytesIn.inc(walk.bytes);
    metrics.bytesInFlight.set(budget.bytes);
    if (state.alive) {
      state.backlog = Math.max(0, Number(highWatermark) - state.nextIn);
      metrics.lag.set({ partition: String(partition) }, state.backlog);
    }
  }

  /** The batch must be left: kafkajs stopped or rebalanced, the assignment changed, or the worker drains. */
  private mustLeave(state: PartitionState, p: EachBatchPayload): boolean {
    return !p.isRunning() || p.isStale() || !state.alive || this.deps.draining();
  }

  /** Waits for byte-budget room inside a walk (outside the intake CPU count); false to leave the batch. */
  private async waitInWalk(walk: FetchWalk, state: PartitionState, p: EachBatchPayload): Promise<boolean> {
    walk.settle();
    walk.intake.pause();
    const room = await this.waitForCapacity(state, p);
    walk.intake.resume();
    if (room) walk.now = Date.now();
    return room;
  }

  private mustWait(state: PartitionState): boolean {
    return this.deps.budget.exhausted() || this.partitionFull(state);
  }

  /** The partition holds as many outstanding (cut, unfolded) batches as it may. */
  private partitionFull(state: PartitionState): boolean {
    return state.tracker.pending() >= this.deps.maxOutstandingBatchesPerPartition;
  }

  private pausePartition(partition: number): void {
    if (this.paused.has(partition)) return;
    this.paused.add(partition);
    try {
      this.deps.consumer.pause([{ topic: this.deps.topic, partitions: [partition] }]);
    } catch {
      /* not running: nothing to pause */
    }
  }

  /** Resumes paused partitions that have room again (or are no longer ours). */
  resumeReady(partitions: ReadonlyMap<number, PartitionState>): void {
    if (this.deps.draining()) return;
    for (const partition of this.paused) {
      const state = partitions.get(partition);
      if (state && state.alive && this.partitionFull(state)) continue;
      this.paused.delete(partition);
      try {
        this.deps.consumer.resume([{ topic: this.deps.topic, partitions: [partition] }]);
      } catch {
        /* not running */
      }
    }
  }

  /** Waits for room while heartbeating; false when the batch must be left (rebalance, stop, drain). */
  private async waitForCapacity(state: PartitionState, p: EachBatchPayload): Promise<boolean> {
    while (this.mustWait(state)) {
      if (this.mustLeave(state, p)) return false;
      await this.deps.budget.changed(HEARTBEAT_EVERY_MS);
      // Throws on a rebalance: kafkajs then rejoins, and the new assignment replaces this state.
      await p.heartbeat();
    }
    return state.alive && !this.deps.draining();
  }
}
