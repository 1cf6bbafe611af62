/**
 * Consumer lag from offsets (pure). A partition the group never committed counts from the log
 * start: the workers consume new groups from the earliest offset (nothing produced before the
 * workers started is lost), so all of it is backlog.
 */

/** Offsets of one partition as read from Kafka. */
export interface PartitionOffsets {
  partition: number;
  /** Log-end offset (high watermark). */
  end: number;
  /** Log-start offset (earliest retained). */
  start: number;
  /** Committed group offset, or -1 when the group has none for this partition. */
  committed: number;
}

/** Lag of a whole topic for one group. */
export interface LagSnapshot {
  total: number;
  maxPartition: number;
  perPartition: Map<number, number>;
  /** Sum of committed offsets (uncommitted partitions count at their log start): rate numerator. */
  consumedPosition: number;
}

/** Computes per-partition and total lag; never negative (a committed offset past the end is 0). */
export function computeLag(partitions: PartitionOffsets[]): LagSnapshot {
  const perPartition = new Map<number, number>();
  let total = 0;
  let maxPartition = 0;
  let consumedPosition = 0;
  for (const p of partitions) {
    const position = p.committed >= 0 ? Math.max(p.committed, p.start) : p.start;
    const lag = Math.max(0, p.end - position);
    perPartition.set(p.partition, lag);
    total += lag;
    maxPartition = Math.max(maxPartition, lag);
    consumedPosition += position;
  }
  return { total, maxPartition, perPartition, consumedPosition };
}

/** Smoothed lag and consumption rate carried between polls of one pipeline. */
export interface LagTrend {
  at: number;
  smoothedLag: number;
  /** Lines (messages) per second consumed by the group, smoothed. */
  rate: number;
  consumedPosition: number;
}

/**
 * Folds a new snapshot into the trend with an EWMA whose time constant is `tauMs`: noisy instant
 * lag (KEDA #1556) is damped, while a sustained rise still shows within a few polls.
 */
export function updateTrend(
  prev: LagTrend | undefined,
  snap: LagSnapshot,
  now: number,
  tauMs: number,
): LagTrend {
  if (!prev || now <= prev.at) {
    return { at: now, smoothedLag: snap.total, rate: 0, consumedPosition: snap.consumedPosition };
  }
  const dt = now - prev.at;
  const alpha = 1 - Math.exp(-dt / tauMs);
  const instantRate = Math.max(0, snap.consumedPosition - prev.consumedPosition) / (dt / 1000);
  return {
    at: now,
    smoothedLag: prev.smoothedLag + alpha * (snap.total - prev.smoothedLag),
    rate: prev.rate + alpha * (instantRate - prev.rate),
    consumedPosition: snap.consumedPosition,
  };
}
