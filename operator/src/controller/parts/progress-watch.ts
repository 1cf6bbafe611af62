/**
 * The progress watch of the scaling part: how often offsets are read and when a partition counts
 * as stalled (the cause of Stalled=True). Pipelines without autoscaling are polled only for this.
 */
import type { ResolvedSpec } from '../../api/defaults';
import type { PartitionOffsets } from '../../autoscale/lag';
import { describeStall, stalledPartitions, type PartitionMarks } from '../../autoscale/partition-stall';
import type { DeploymentView } from '../../status/views';

/** Outcome fields of a pipeline without autoscaling: only its stall is used. */
export const WATCH_ONLY = {
  status: 'Unknown',
  reason: 'AutoscalingDisabled',
  message: 'autoscaling off',
} as const;

/**
 * How often offsets are read: the autoscaler's poll interval, or for a pipeline that is only
 * watched for stalls a quarter of its progress deadline (at least 1 s, at most the poll interval).
 */
export function pollIntervalMs(spec: ResolvedSpec): number {
  const poll = spec.workers.autoscaling.pollIntervalMs;
  if (spec.workers.autoscaling.enabled) return poll;
  return Math.max(1000, Math.min(poll, Math.floor(spec.workers.progressDeadlineMs / 4)));
}

/**
 * Stalled=True cause when a partition with lag has not moved for the progress deadline; undefined
 * when none (or no worker is meant to run). The "last error" is the freshest one the operator can
 * see without scraping pods or widening RBAC: the sink problem (its own ClickHouse ping, TableReady,
 * the workers' outstanding journaled batch); a crash-looping worker is reported from its Pod.
 */
export function stalledPartitionCause(
  spec: ResolvedSpec,
  dep: DeploymentView,
  marks: PartitionMarks | undefined,
  offsets: PartitionOffsets[],
  t: number,
  sinkMessage: string | undefined,
  journalStalledMs: number,
): { reason: string; message: string } | undefined {
  if (dep.replicas === 0 || !marks) return undefined;
  const stalled = stalledPartitions(marks, offsets, t, spec.workers.progressDeadlineMs);
  if (stalled.length === 0) return undefined;
  const journal =
    journalStalledMs > 0
      ? `a journaled batch has waited ${Math.round(journalStalledMs / 1000)}s for its insert (the workers keep retrying it)`
      : undefined;
  const last =
    sinkMessage ?? journal ?? 'none seen by the operator (ClickHouse answers); see the worker logs';
  return {
    reason: 'PartitionStalled',
    message: `${describeStall(stalled)}, progress deadline ${spec.workers.progressDeadline}; last error: ${last}`,
  };
}
