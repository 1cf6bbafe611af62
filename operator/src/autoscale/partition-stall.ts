/**
 * Partitions that stopped moving (pure). A partition with lag whose committed offset has not moved
 * for `spec.workers.progressDeadline` is stalled: its lines wait while Kafka's retention clock runs,
 * which for a compliance pipeline is data loss on a timer. The clock is the operator's own (first
 * poll at which it saw that committed position with lag), so it needs no worker clock and restarts
 * with the operator (a stall is then reported one deadline later, never early).
 */
import type { PartitionOffsets } from './lag';

/** Since when a partition has sat at its committed position. */
export interface PartitionMark {
  position: number;
  since: number;
  /** It had lag at `since` (an idle partition's clock starts when lines arrive). */
  lagging: boolean;
}

/** Marks per partition, carried between polls. */
export type PartitionMarks = Map<number, PartitionMark>;

/** A partition stalled past the deadline. */
export interface StalledPartition {
  partition: number;
  /** Committed offset (-1: the group never committed it). */
  committed: number;
  lag: number;
  stalledMs: number;
}

function position(p: PartitionOffsets): number {
  return p.committed >= 0 ? Math.max(p.committed, p.start) : p.start;
}

/**
 * The new marks: a partition that moved or has no lag starts its clock again. The clock of a
 * partition without lag is never read (it restarts when lag appears), so an idle partition keeps
 * its mark, and when no partition changed `prev` itself is returned (nothing allocated per poll).
 */
export function trackPartitions(
  prev: PartitionMarks | undefined,
  offsets: readonly PartitionOffsets[],
  now: number,
): PartitionMarks {
  if (prev && prev.size === offsets.length && offsets.every((p) => unchanged(prev.get(p.partition), p)))
    return prev;
  const next: PartitionMarks = new Map();
  for (const p of offsets) {
    const old = prev?.get(p.partition);
    const pos = position(p);
    next.set(p.partition, unchanged(old, p) ? old! : { position: pos, since: now, lagging: p.end - pos > 0 });
  }
  return next;
}

/** The partition sits where its mark says, with lag or without as then. */
function unchanged(mark: PartitionMark | undefined, p: PartitionOffsets): boolean {
  const pos = position(p);
  return mark !== undefined && mark.position === pos && mark.lagging === p.end - pos > 0;
}

/** Partitions with lag that have not moved for at least `deadlineMs`, longest first. */
export function stalledPartitions(
  marks: PartitionMarks,
  offsets: readonly PartitionOffsets[],
  now: number,
  deadlineMs: number,
): StalledPartition[] {
  const out: StalledPartition[] = [];
  for (const p of offsets) {
    const mark = marks.get(p.partition);
    const lag = p.end - position(p);
    if (!mark || lag <= 0 || now - mark.since < deadlineMs) continue;
    out.push({ partition: p.partition, committed: p.committed, lag, stalledMs: now - mark.since });
  }
  return out.sort((a, b) => b.stalledMs - a.stalledMs || a.partition - b.partition);
}

/** "partition 0 has not moved for 5m0s (committed offset 467, lag 1533)" (and how many more). */
export function describeStall(stalled: readonly StalledPartition[]): string {
  const [first] = stalled;
  const secs = Math.round(first.stalledMs / 1000);
  const at = first.committed >= 0 ? `committed offset ${first.committed}` : 'nothing committed yet';
  const more = stalled.length > 1 ? ` (and ${stalled.length - 1} more partitions)` : '';
  return `partition ${first.partition} has not moved for ${Math.floor(secs / 60)}m${secs % 60}s (${at}, lag ${first.lag})${more}`;
}
