/**
 * How many workers a pipeline wants (pure). The formula, also in docs/autoscaling.md:
 *
 *   needByLag   = smoothedLag / lagPerReplica                       (lagPerReplica is PER REPLICA)
 *   needByDrain = smoothedLag / (ratePerConsumer * drainSecs)       (ratePerConsumer = rate / consumers)
 *   need        = max(needByLag, needByDrain)     over the targets that are set
 *   raw         = current            when |need / current - 1| <= tolerance (0.1, as the HPA)
 *               = ceil(need)         otherwise, at least 1
 *   bounds      = [minReplicas, min(maxReplicas, partitions)]   (a consumer beyond the partitions idles)
 *
 * Activation: with the INSTANT lag at or below `activationLag` the pipeline falls to minReplicas
 * (0 allowed). The smoothed lag is not consulted here: an EWMA only approaches zero, so it would
 * never let a pipeline reach zero; the scale-down window is what keeps a noisy pipeline up. From
 * zero, any instant lag above activation wakes one worker at least.
 */

/** Default dead band around the current count (HPA's --horizontal-pod-autoscaler-tolerance). */
export const DEFAULT_TOLERANCE = 0.1;

/** Inputs of one recommendation. */
export interface RecommendInput {
  smoothedLag: number;
  instantLag: number;
  /** Consumption rate of the whole group, messages per second (smoothed). */
  rate: number;
  /** Replicas the Deployment asks for now. */
  current: number;
  /** Consumers that produced `rate` (ready pods); defaults to `current`. */
  consumers?: number;
  partitions: number;
  minReplicas: number;
  maxReplicas: number;
  lagPerReplica?: number;
  targetDrainTimeMs?: number;
  activationLag: number;
  /** Relative dead band around `current`; default DEFAULT_TOLERANCE. */
  tolerance?: number;
}

/** A recommendation and the reason for it (a one-word CamelCase reason for status/events). */
export interface Recommendation {
  replicas: number;
  reason:
    | 'BelowActivation'
    | 'Activated'
    | 'LagTarget'
    | 'DrainTarget'
    | 'WithinTolerance'
    | 'AtMaximum'
    | 'AtMinimum';
  /** Replicas the targets asked for before the bounds (for messages); 0 below activation. */
  unbounded: number;
  /** The upper bound applied: min(maxReplicas, partitions). */
  ceiling: number;
}

/** The fractional number of workers each target asks for, and which one dominates. */
function need(i: RecommendInput): { need: number; byDrain: boolean } {
  let byLag = 0;
  let byDrain = 0;
  if (i.lagPerReplica && i.lagPerReplica > 0) byLag = i.smoothedLag / i.lagPerReplica;
  const consumers = i.consumers ?? i.current;
  if (i.targetDrainTimeMs && consumers > 0 && i.rate > 0) {
    const perConsumer = i.rate / consumers;
    byDrain = i.smoothedLag / (perConsumer * (i.targetDrainTimeMs / 1000));
  }
  return { need: Math.max(byLag, byDrain), byDrain: byDrain > byLag };
}

/** Recommends replicas for the current lag; see the module comment for the formula. */
export function recommendReplicas(i: RecommendInput): Recommendation {
  const ceiling = Math.max(0, Math.min(i.maxReplicas, i.partitions));
  const floor = Math.min(i.minReplicas, ceiling);
  if (i.instantLag <= i.activationLag)
    return { replicas: floor, reason: 'BelowActivation', unbounded: 0, ceiling };
  const n = need(i);
  const tolerance = i.tolerance ?? DEFAULT_TOLERANCE;
  let replicas: number;
  let reason: Recommendation['reason'];
  if (i.current === 0) {
    replicas = Math.max(1, Math.ceil(n.need));
    reason = 'Activated';
  } else if (Math.abs(n.need / i.current - 1) <= tolerance) {
    replicas = i.current;
    reason = 'WithinTolerance';
  } else {
    replicas = Math.max(1, Math.ceil(n.need));
    reason = n.byDrain ? 'DrainTarget' : 'LagTarget';
  }
  if (replicas > ceiling) return { replicas: ceiling, reason: 'AtMaximum', unbounded: replicas, ceiling };
  if (replicas < floor) return { replicas: floor, reason: 'AtMinimum', unbounded: replicas, ceiling };
  return { replicas, reason, unbounded: replicas, ceiling };
}
