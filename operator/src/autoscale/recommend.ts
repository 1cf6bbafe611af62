/**
 * How many workers a pipeline wants (pure). The formula, also in docs/autoscaling.md:
 *
 *   byLag   = ceil(smoothedLag / lagPerReplica)                 (lagPerReplica is PER REPLICA)
 *   byDrain = ceil(smoothedLag / (ratePerReplica * drainSecs))  (ratePerReplica = rate / current)
 *   raw     = max(byLag, byDrain)          over the targets that are set
 *   bounds  = [minReplicas, min(maxReplicas, partitions)]   (an idle consumer does nothing)
 *
 * Activation: with lag at or below `activationLag` the pipeline falls to minReplicas (0 allowed);
 * from zero, any lag above activation wakes one worker at least.
 */

/** Inputs of one recommendation. */
export interface RecommendInput {
  smoothedLag: number;
  instantLag: number;
  rate: number;
  current: number;
  partitions: number;
  minReplicas: number;
  maxReplicas: number;
  lagPerReplica?: number;
  targetDrainTimeMs?: number;
  activationLag: number;
}

/** A recommendation and the reason for it (a one-word CamelCase reason for status/events). */
export interface Recommendation {
  replicas: number;
  reason: 'BelowActivation' | 'Activated' | 'LagTarget' | 'DrainTarget' | 'AtMaximum' | 'AtMinimum';
}

/** Recommends replicas for the current lag; see the module comment for the formula. */
export function recommendReplicas(i: RecommendInput): Recommendation {
  const ceiling = Math.max(0, Math.min(i.maxReplicas, i.partitions));
  const floor = Math.min(i.minReplicas, ceiling);
  if (i.instantLag <= i.activationLag && i.smoothedLag <= i.activationLag) {
    return { replicas: floor, reason: 'BelowActivation' };
  }
  let byLag = 0;
  let byDrain = 0;
  if (i.lagPerReplica && i.lagPerReplica > 0) byLag = Math.ceil(i.smoothedLag / i.lagPerReplica);
  if (i.targetDrainTimeMs && i.current > 0 && i.rate > 0) {
    const perReplica = i.rate / i.current;
    byDrain = Math.ceil(i.smoothedLag / (perReplica * (i.targetDrainTimeMs / 1000)));
  }
  let replicas = Math.max(byLag, byDrain);
  let reason: Recommendation['reason'] = byDrain > byLag ? 'DrainTarget' : 'LagTarget';
  if (i.current === 0) {
    replicas = Math.max(1, replicas);
    reason = 'Activated';
  }
  if (replicas > ceiling) return { replicas: ceiling, reason: 'AtMaximum' };
  if (replicas < floor) return { replicas: floor, reason: 'AtMinimum' };
  return { replicas: Math.max(replicas, ceiling > 0 ? 1 : 0), reason };
}
