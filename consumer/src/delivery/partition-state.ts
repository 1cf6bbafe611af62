/**
 * What one worker holds for one assigned partition during one assignment (epoch): where reading
 * started, the batch cutter, the offset tracker, the abort signal of its in-flight batches and the
 * version counters the committer uses. A rebalance kills the whole state: in-flight batches are
 * abandoned (their cut is journaled, so the next owner re-cuts and deduplicates them) and nothing
 * of it is ever committed again.
 */
import { BatchCutter, type BatchLimits } from './batch-cutter';
import { encodeJournal, type JournalEntry } from '../../../common/src/cut-journal';
import { OffsetTracker } from './offset-tracker';

/** The commit a partition wants: watermark plus cut journal. */
export interface PartitionCommit {
  topic: string;
  partition: number;
  offset: string;
  metadata: string;
}

/** Per-partition, per-assignment state. */
export class PartitionState {
  readonly abort = new AbortController();
  cutter: BatchCutter;
  tracker: OffsetTracker;
  /** First offset this owner may take (the committed offset); lower ones are already stored. */
  base = 0;
  /** Next offset expected from Kafka (duplicates from a re-fetch are skipped). */
  nextIn = 0;
  /** Bumped on every change a commit must carry; `committedVersion` is the last one committed. */
  version = 0;
  committedVersion = 0;
  /** Batches cut and not yet finished (stored or abandoned). */
  inflight = 0;
  /**
   * One past the last offset Kafka has shown this owner, records it filtered out (transaction
   * markers, aborted records) included; the watermark follows it once nothing is open or
   * outstanding (`passOver`, BatchPipeline.foldPassedOver).
   */
  passedTo = 0;
  /** Messages waiting in Kafka past `nextIn` at the last fetch (high watermark - nextIn). */
  backlog = 0;
  /** Resolves once the committed offset and journal are loaded. */
  readonly ready: Promise<void>;
  private markReady!: () => void;

  /** Creates the state; call `load` with the committed offset and journal before use. */
  constructor(
    readonly topic: string,
    readonly partition: number,
    private readonly limits: BatchLimits,
  ) {
    this.ready = new Promise((r) => (this.markReady = r));
    this.cutter = new BatchCutter(limits);
    this.tracker = new OffsetTracker(0);
  }

  /** True until the partition is revoked or the worker stops. */
  get alive(): boolean {
    return !this.abort.signal.aborted;
  }

  /** Installs the committed offset (-1: none) and the journaled plan, then opens the gate. */
  load(committedOffset: number, plan: readonly JournalEntry[]): void {
    this.base = committedOffset >= 0 ? committedOffset : 0;
    this.nextIn = this.base;
    this.passedTo = this.base;
    this.cutter = new BatchCutter(this.limits, plan);
    this.tracker = new OffsetTracker(this.base);
    this.markReady();
  }

  /**
   * Records that every offset through `lastOffset` was shown to this owner and each record with
   * data in it was taken: the rest held nothing for the pipeline.
   */
  passOver(lastOffset: number): void {
    if (lastOffset + 1 <= this.passedTo) return;
    this.passedTo = lastOffset + 1;
    if (this.nextIn < this.passedTo) this.nextIn = this.passedTo;
  }

  /** Ends the state: aborts in-flight deliveries and releases anyone waiting on `ready`. */
  kill(): void {
    this.abort.abort();
    this.markReady();
  }

  /** The commit describing this state now (watermark + outstanding cuts + inherited plan). */
  commit(): PartitionCommit {
    return {
      topic: this.topic,
      partition: this.partition,
      offset: String(this.tracker.watermark()),
      // Cut-but-unstored batches, then journaled ranges inherited from the previous owner not yet re-cut.
      metadata: encodeJournal([...this.tracker.outstanding(), ...this.cutter.remainingPlan()]),
    };
  }
}
