/**
 * When the autoscaler samples which pipelines, outside of any reconcile (PLAN 18, decision 3).
 * A poll used to be a whole reconcile per pipeline per interval (resolveSpec, rendering, hashes,
 * status compute: ~10 ms each, 0.67 core at 1000 pipelines). Now a background tick picks the
 * pipelines that are due, grouped by Kafka cluster so that one observer round serves all of them,
 * decides in memory, and wakes a reconcile only for a pipeline whose outcome changed.
 */
import type { ScalingOutcome } from '../external';

/** What the schedule needs to know of one pipeline's sampling. */
export interface SampledPipeline {
  /** Identity of the pipeline's Kafka cluster (the observer key); undefined until first polled. */
  cluster?: string;
  pollMs: number;
  lastPollAt: number;
  /** A sample is in flight. */
  polling?: boolean;
  /** A changed outcome waits for its reconcile (no new decision on top of an unapplied one). */
  pending?: boolean;
}

/**
 * Pipelines to sample now: a cluster is due when one of its pipelines is past its interval; then
 * every pipeline of that cluster past `alignFraction` (half) of its interval joins the same round,
 * so pipelines created at different times converge on one round per cluster and interval within
 * an interval or two (a round fetches every pair it holds anyway). A pending
 * outcome is not re-decided until its reconcile consumed it (deciding again on the old replica
 * count would scale and report the same step twice), unless it waited pendingLimitMs: the
 * reconcile could not get to the autoscaler (e.g. children refused), so decide from fresh offsets.
 */
export function dueForSampling<T extends SampledPipeline>(
  entries: Iterable<T>,
  t: number,
  alignFraction = 0.5,
): T[] {
  const candidates: T[] = [];
  const dueClusters = new Set<string>();
  for (const e of entries) {
    if (e.cluster === undefined || e.polling) continue;
    const age = t - e.lastPollAt;
    if (e.pending && age < pendingLimitMs(e.pollMs)) continue;
    if (age >= alignFraction * e.pollMs) candidates.push(e);
    if (age >= e.pollMs) dueClusters.add(e.cluster);
  }
  return candidates.filter((e) => dueClusters.has(e.cluster!));
}

/** How long a pending outcome blocks new decisions: ten intervals, at least a minute. */
export function pendingLimitMs(pollMs: number): number {
  return Math.max(10 * pollMs, 60_000);
}

/**
 * True when `next` would change what the reconciler does or writes: a replica count other than the
 * Deployment's, or a different condition, lag block or partition stall than the last outcome.
 */
export function outcomeChanged(
  prev: ScalingOutcome | undefined,
  next: ScalingOutcome,
  currentReplicas: number,
): boolean {
  if (next.replicas !== undefined && next.replicas !== currentReplicas) return true;
  if (!prev) return true;
  // Compared field by field, allocating nothing: this runs for every pipeline at every poll.
  return (
    prev.status !== next.status ||
    prev.reason !== next.reason ||
    prev.message !== next.message ||
    prev.kafkaUnreachable !== next.kafkaUnreachable ||
    prev.retentionLoss !== next.retentionLoss ||
    !samePlain(prev.lag, next.lag) ||
    !samePlain(prev.stall, next.stall)
  );
}

/** Same flat record (undefined fields count as absent, as in the stored status). */
function samePlain(a: object | undefined, b: object | undefined): boolean {
  if (a === b) return true;
  if (!a || !b) return definedCount(a) === 0 && definedCount(b) === 0;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  for (const k in x) if (x[k] !== y[k]) return false;
  return definedCount(a) === definedCount(b);
}

function definedCount(o: object | undefined): number {
  let n = 0;
  for (const k in o) if ((o as Record<string, unknown>)[k] !== undefined) n++;
  return n;
}
