/**
 * Records deleted by retention before the pipeline consumed them (pure). A group whose committed
 * offset is below a partition's log-start offset lost `start - committed` offsets to Kafka's
 * retention (the workers lagged past `retention.ms`, or were stopped too long): the worker's
 * consumer can only jump to the log start, so those lines are gone for good. For a compliance
 * pipeline that must be said loudly, once per occurrence (an occurrence is a partition and the
 * committed offset it was found at), not once per poll.
 */
import type { PartitionOffsets } from './lag';

/** A partition whose committed offset lies below the log start, or that kafkajs reset to it. */
export interface ExpiredPartition {
  partition: number;
  /** Committed offset; RESET_COMMIT when a worker's consumer reset it (the count is then unknown). */
  committed: number;
  start: number;
  /** Offsets deleted before they were consumed (log start minus committed); 0 when unknown. */
  lost: number;
}

/**
 * What kafkajs commits when a fetch finds its position deleted (OFFSET_OUT_OF_RANGE): its default
 * offset, EARLIEST (-2), without metadata. The workers never commit it themselves and a group that
 * never committed reads -1, so a committed -2 is a reset (test/worker-offset-reset.test.ts).
 */
export const RESET_COMMIT = -2;

/** Committed offsets already reported, by partition (carried between polls). */
export type ReportedLoss = ReadonlyMap<number, number>;

/** Partitions with a committed offset (>= 0) below their log start or reset by kafkajs, by partition id. */
export function expiredUnconsumed(offsets: readonly PartitionOffsets[]): ExpiredPartition[] {
  const out: ExpiredPartition[] = [];
  for (const p of offsets)
    if (p.committed >= 0 && p.committed < p.start)
      out.push({
        partition: p.partition,
        committed: p.committed,
        start: p.start,
        lost: p.start - p.committed,
      });
    else if (p.committed === RESET_COMMIT)
      out.push({ partition: p.partition, committed: p.committed, start: p.start, lost: 0 });
  return out;
}

/**
 * What changed since the last poll: the partitions not yet reported at this committed offset
 * (`fresh`, for the Event) and the new reported set. When nothing changed `prev` itself is
 * returned (nothing allocated per steady poll); a partition that caught up is forgotten, so a
 * later loss on it is a new occurrence.
 */
export function trackRetentionLoss(
  prev: ReportedLoss | undefined,
  expired: readonly ExpiredPartition[],
): { reported: ReportedLoss | undefined; fresh: ExpiredPartition[] } {
  const fresh = expired.filter((x) => prev?.get(x.partition) !== x.committed);
  if (fresh.length === 0 && (prev?.size ?? 0) === expired.length) return { reported: prev, fresh };
  if (expired.length === 0) return { reported: undefined, fresh };
  return { reported: new Map(expired.map((x) => [x.partition, x.committed])), fresh };
}

/**
 * "topic logs.fw: 1200 offsets deleted by retention before they were consumed (partition 0:
 * committed 100, log start 1000; partition 3: ...)"; at most five partitions are named.
 */
export function describeRetentionLoss(topic: string, expired: readonly ExpiredPartition[]): string {
  const total = expired.reduce((n, x) => n + x.lost, 0);
  const reset = expired.some((x) => x.committed === RESET_COMMIT);
  const counted = !reset ? `${total}` : total > 0 ? `at least ${total}` : 'an unknown number of';
  const named = expired.slice(0, 5).map((x) => describePartition(x));
  const more = expired.length > 5 ? `; and ${expired.length - 5} more partitions` : '';
  return `topic ${topic}: ${counted} offsets deleted by retention before the pipeline consumed them (${named.join('; ')}${more}); raise the topic's retention or the workers' throughput`;
}

function describePartition(x: ExpiredPartition): string {
  if (x.committed === RESET_COMMIT)
    return `partition ${x.partition}: a worker found its position deleted and jumped to the log start ${x.start}`;
  return `partition ${x.partition}: committed ${x.committed}, log start ${x.start}, ${x.lost} lost`;
}
