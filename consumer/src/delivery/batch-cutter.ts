/**
 * Cuts one partition's message stream into batches on message-offset boundaries. A batch closes
 * when it reaches maxRows lines or maxBytes bytes, or has waited maxDelayMs; while a journaled
 * plan (see cut-journal.ts) is pending, batches close exactly at the planned offsets with the
 * planned ingest time instead, so a re-read reproduces the previous owner's batches. Pure: the
 * caller supplies the clock.
 */
import type { JournalEntry } from '../../../common/src/cut-journal';

/** Limits of one batch (the worker config's batch section). */
export interface BatchLimits {
  maxRows: number;
  maxBytes: number;
  maxDelayMs: number;
}

/** A Kafka message as the cutter keeps it (the encoder's MessageInput with a numeric offset). */
export interface CutMessage {
  topic: string;
  partition: number;
  offset: number;
  value: Buffer;
  /** SENDER_HEADER of the message, when present (kept for the encoder's sender_ip source). */
  sender?: Buffer;
}

/** A closed batch: its messages, inclusive offset range, line and byte totals, fixed ingest time. */
export interface CutBatch {
  firstOffset: number;
  lastOffset: number;
  ingestMs: number;
  messages: CutMessage[];
  lines: number;
  bytes: number;
  /** True when the range came from the journal (re-cut of an earlier owner's batch). */
  replayed: boolean;
  /** Last offset naming the dedup token (the planned range's), when the batch was cut short. */
  tokenLastOffset?: number;
}

const NONE: CutBatch[] = [];

/** A backlog defers a batch's delay cut at most this many times maxDelayMs (poll()). */
export const BACKLOG_DELAY_FACTOR = 4;

/** A planned batch whose last message never shows up is cut after this long, to never stall. */
export const PLAN_STALL_MS = 60_000;

/** Accumulates messages of one partition and closes batches by limits, timer or journal plan. */
export class BatchCutter {
  private messages: CutMessage[] = [];
  private lines = 0;
  private bytes = 0;
  private openedAtMs = 0;
  private readonly plan: JournalEntry[];

  /** `plan` is the decoded journal of the partition (oldest first); it is consumed as batches close. */
  constructor(
    private readonly limits: BatchLimits,
    plan: readonly JournalEntry[] = [],
  ) {
    this.plan = plan.slice();
  }

  /**
   * Adds one message (with its line count) and returns the batches it closed, oldest first:
   * zero, one, or two when the message both ends a planned range early and starts a new batch.
   */
  add(message: CutMessage, lines: number, nowMs: number): readonly CutBatch[] {
    const { offset, value } = message;
    // Most messages close nothing: share one empty result instead of allocating per message.
    let closed: CutBatch[] = NONE;
    // A planned range whose last message is gone (retention, compaction) ends where data ended.
    while (this.plan.length > 0 && offset > this.plan[0].lastOffset) {
      if (this.messages.length > 0) closed = [this.close(nowMs)];
      else this.plan.shift();
    }
    if (this.plan.length > 0) {
      // Replaying: only the plan decides where batches end.
    } else if (
      this.messages.length > 0 &&
      (this.lines + lines > this.limits.maxRows || this.bytes + value.length > this.limits.maxBytes)
    ) {
      closed = [this.close(nowMs)];
    }
    if (this.messages.length === 0) this.openedAtMs = nowMs;
    this.messages.push(message);
    this.lines += lines;
    this.bytes += value.length;
    const next = this.plan[0];
    if (
      next
        ? offset >= next.lastOffset
        : this.lines >= this.limits.maxRows || this.bytes >= this.limits.maxBytes
    ) {
      closed = closed === NONE ? [this.close(nowMs)] : [...closed, this.close(nowMs)];
    }
    return closed;
  }

  /**
   * Closes the open batch when its delay is over (or a stalled planned range); else null.
   * `backlogMessages` (messages already waiting in Kafka past the last one taken) defers the delay
   * cut while they would fill the batch to its row or byte limit anyway: a backlog then makes
   * INSERTs of full size instead of one per delay (ClickHouse pays per INSERT), and the lines are
   * late already. Deferred at most until BACKLOG_DELAY_FACTOR × maxDelayMs; never for a plan.
   */
  poll(nowMs: number, backlogMessages = 0): CutBatch | null {
    if (this.messages.length === 0) return null;
    const waited = nowMs - this.openedAtMs;
    if (this.plan.length > 0) return waited >= PLAN_STALL_MS ? this.close(nowMs, true) : null;
    if (waited < this.limits.maxDelayMs) return null;
    if (waited < this.limits.maxDelayMs * BACKLOG_DELAY_FACTOR && this.backlogFills(backlogMessages))
      return null;
    return this.close(nowMs);
  }

  /** True when `backlog` more messages of the open batch's average size would reach a limit. */
  private backlogFills(backlog: number): boolean {
    if (backlog <= 0) return false;
    const n = this.messages.length;
    const roomLines = ((this.limits.maxRows - this.lines) * n) / Math.max(1, this.lines);
    const roomBytes = ((this.limits.maxBytes - this.bytes) * n) / Math.max(1, this.bytes);
    return backlog >= Math.min(roomLines, roomBytes);
  }

  /** Closes the open batch now whatever its age (drain); null when nothing is open. */
  flush(nowMs: number): CutBatch | null {
    if (this.messages.length === 0) return null;
    return this.close(nowMs, this.plan.length > 0);
  }

  /** Milliseconds until poll() would close the open batch; null when nothing is open. */
  dueInMs(nowMs: number): number | null {
    if (this.messages.length === 0) return null;
    const limit = this.plan.length > 0 ? PLAN_STALL_MS : this.limits.maxDelayMs;
    return Math.max(0, this.openedAtMs + limit - nowMs);
  }

  /** Bytes of messages held in the open (not yet closed) batch. */
  pendingBytes(): number {
    return this.bytes;
  }

  /** Messages held in the open (not yet closed) batch. */
  pendingMessages(): number {
    return this.messages.length;
  }

  /** True while journaled ranges remain to be reproduced. */
  replaying(): boolean {
    return this.plan.length > 0;
  }

  /**
   * Journaled ranges not yet reproduced (including the one being accumulated). Commits must keep
   * carrying them: the previous owner may have inserted them, so whoever reads the partition next
   * has to cut them the same way even if this owner never gets to.
   */
  remainingPlan(): readonly JournalEntry[] {
    return this.plan;
  }

  private close(nowMs: number, stalled = false): CutBatch {
    const planned = this.plan.shift();
    const messages = this.messages;
    let firstOffset = messages[0].offset;
    let lastOffset = messages[messages.length - 1].offset;
    // Ingest time is fixed here, once: a retry or a re-cut must produce the same bytes.
    let ingestMs = nowMs;
    let replayed = false;
    let tokenLastOffset: number | undefined;
    if (planned && !stalled) {
      // The planned range (not the messages seen) names the batch, so its token survives gaps.
      ({ firstOffset, lastOffset, ingestMs } = planned);
      tokenLastOffset = planned.tokenLastOffset;
      replayed = true;
    } else if (planned) {
      // Cut short: it covers only the offsets seen (later ones form the next batch) but keeps the
      // planned token and ingest time, so an earlier owner's INSERT of the range deduplicates it.
      ({ firstOffset, ingestMs } = planned);
      tokenLastOffset = planned.tokenLastOffset ?? planned.lastOffset;
      replayed = true;
    }
    const batch: CutBatch = {
      firstOffset,
      lastOffset,
      ingestMs,
      messages,
      lines: this.lines,
      bytes: this.bytes,
      replayed,
    };
    if (tokenLastOffset !== undefined && tokenLastOffset !== lastOffset)
      batch.tokenLastOffset = tokenLastOffset;
    this.messages = [];
    this.lines = 0;
    this.bytes = 0;
    return batch;
  }
}
