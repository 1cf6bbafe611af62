/**
 * Per-partition bookkeeping of cut batches and their acknowledgements. Kafka offsets may only be
 * committed up to the contiguous prefix of batches that are durably in ClickHouse (or
 * dead-lettered): a later batch finishing first must never move the commit past an earlier one
 * that is still in flight or failing. Pure: no I/O, no clocks.
 */

/** A cut batch as the tracker sees it: an inclusive message-offset range and its state. */
export interface TrackedBatch {
  readonly firstOffset: number;
  readonly lastOffset: number;
  /** Ingest time fixed when the batch was cut (journaled so a re-cut reproduces it). */
  readonly ingestMs: number;
  /** Last offset naming the dedup token, when it differs from lastOffset (see cut-journal.ts). */
  readonly tokenLastOffset?: number;
  state: 'inflight' | 'failed' | 'acked';
}

/** Tracks batches of one partition in offset order and yields the committable watermark. */
export class OffsetTracker {
  private readonly batches: TrackedBatch[] = [];
  private committable: number;
  private nextExpected: number;

  /** `startOffset` is the first offset this owner reads (the committed offset at assignment). */
  constructor(startOffset: number) {
    this.committable = startOffset;
    this.nextExpected = startOffset;
  }

  /** Registers a newly cut batch; ranges must be increasing and never overlap earlier ones. */
  register(
    firstOffset: number,
    lastOffset: number,
    ingestMs: number,
    tokenLastOffset?: number,
  ): TrackedBatch {
    if (lastOffset < firstOffset) throw new RangeError(`empty batch range ${firstOffset}-${lastOffset}`);
    if (firstOffset < this.nextExpected) {
      throw new RangeError(`batch ${firstOffset}-${lastOffset} overlaps offsets before ${this.nextExpected}`);
    }
    const batch: TrackedBatch = { firstOffset, lastOffset, ingestMs, tokenLastOffset, state: 'inflight' };
    this.batches.push(batch);
    this.nextExpected = lastOffset + 1;
    return batch;
  }

  /** Marks the batch starting at `firstOffset` as durably stored; returns false when unknown. */
  ack(firstOffset: number): boolean {
    const batch = this.find(firstOffset);
    if (!batch) return false;
    batch.state = 'acked';
    this.advance();
    return true;
  }

  /** Marks the batch starting at `firstOffset` as failed (it keeps blocking the watermark). */
  fail(firstOffset: number): boolean {
    const batch = this.find(firstOffset);
    if (!batch || batch.state === 'acked') return false;
    batch.state = 'failed';
    return true;
  }

  /**
   * Moves the watermark over offsets that hold nothing for the pipeline (transaction markers,
   * aborted records) up to `offset` (exclusive), only while no batch is outstanding; true when it
   * moved. A log that ends in a marker is otherwise never committed to its end.
   */
  skipTo(offset: number): boolean {
    if (this.batches.length > 0 || offset <= this.committable || offset < this.nextExpected) return false;
    this.committable = offset;
    this.nextExpected = offset;
    return true;
  }

  /** Offset to commit: one past the last offset of the contiguous acknowledged prefix. */
  watermark(): number {
    return this.committable;
  }

  /** Offset the next cut batch must start at or after. */
  nextOffset(): number {
    return this.nextExpected;
  }

  /** Batches not yet folded into the watermark, oldest first (what a commit must journal). */
  outstanding(): readonly TrackedBatch[] {
    return this.batches;
  }

  /**
   * Batches cut and not yet folded into the watermark: in flight, failed, and stored ones waiting
   * behind an unfinished one. This is what the outstanding cap limits, because every one of them
   * is in the cut journal.
   */
  pending(): number {
    return this.batches.length;
  }

  /** Number of batches cut but not yet acknowledged. */
  unacknowledged(): number {
    let n = 0;
    for (const b of this.batches) if (b.state !== 'acked') n++;
    return n;
  }

  private find(firstOffset: number): TrackedBatch | undefined {
    // Outstanding batches are few (bounded by in-flight limits), so a scan beats a map.
    for (const b of this.batches) if (b.firstOffset === firstOffset) return b;
    return undefined;
  }

  private advance(): void {
    while (this.batches.length > 0 && this.batches[0].state === 'acked') {
      this.committable = this.batches[0].lastOffset + 1;
      this.batches.shift();
    }
  }
}
