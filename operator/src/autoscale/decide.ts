/**
 * One autoscaler poll of one pipeline, from offsets to a replica count and a condition (pure):
 *
 *   computeLag -> updateTrend (EWMA, tau = TAU_POLLS x pollInterval) -> recommendReplicas
 *   -> sink hold (no scale-up while ClickHouse is the bottleneck) -> stabilize (windows, steps)
 *
 * Hold: while the sink is unhealthy the recommendation is capped at the current count, so
 * scale-ups wait and scale-downs follow the usual window (fewer inserters never hurt a struggling
 * database, and a pipeline whose lag fell keeps shrinking). From zero one worker may still wake:
 * with no consumer the sink cannot be the bottleneck, and someone must drain once it recovers.
 *
 * The Scaling condition: True while the autoscaler is free to act (ScaledUp, ScaledDown, Stable,
 * BelowActivation, NoCommittedOffsets), False while it cannot add the workers the lag asks for
 * (HoldSinkUnhealthy, AtMaximum), Unknown when the lag cannot be read (LagUnavailable, set by the
 * caller). Condition flips become Events, so only those transitions are Warnings, not every scale.
 */
import type { ResolvedSpec } from '../api/defaults';
import { computeLag, updateTrend, type LagTrend, type PartitionOffsets } from './lag';
import { recommendReplicas, type Recommendation } from './recommend';
import { stabilize, type Sample } from './stabilize';

/** Resolved spec.workers.autoscaling. */
export type AutoscalingSettings = ResolvedSpec['workers']['autoscaling'];

/** The EWMA time constant in poll intervals: a step in lag shows 28% after one poll, 95% after nine. */
export const TAU_POLLS = 3;

/** The last change the autoscaler made (kept for status.lag and the condition while pods converge). */
export interface LastScale {
  at: number;
  direction: 'up' | 'down';
  from: number;
  to: number;
  summary: string;
}

/** What the autoscaler remembers of a pipeline between polls (a few numbers and a tiny history). */
export interface ScalerState {
  trend?: LagTrend;
  history: Sample[];
  lastScale?: LastScale;
  /** First poll of this state: a scale-down needs a whole window of recommendations (after an operator restart too). */
  since?: number;
}

/** Everything one poll observed. */
export interface DecideInput {
  settings: AutoscalingSettings;
  offsets: PartitionOffsets[];
  /** spec.replicas of the Deployment now. */
  current: number;
  /** Pods that exist and pods that are ready (Deployment status). */
  running: number;
  ready: number;
  /** Why the sink is unhealthy; undefined when healthy. */
  sink?: { kind: string; message: string };
  now: number;
}

/** Lag numbers for status.lag (lastScale* are added by the caller from state). */
export interface LagNumbers {
  total: number;
  maxPartition: number;
  smoothed: number;
  ratePerSecond: number;
}

/** The outcome of one poll. */
export interface Decision {
  replicas: number;
  direction: 'up' | 'down' | 'none';
  /** A scale-up was wanted but withheld because the sink is unhealthy. */
  withheld: boolean;
  reason: string;
  status: 'True' | 'False';
  message: string;
  lag: LagNumbers;
  recommendation: Recommendation;
  /**
   * A scale with no pods to start or stop (e.g. a new pipeline's Deployment, defaulted to 1 and
   * never running, scaled to 0): the Scaling condition as the next poll will state it, so the
   * status is written once instead of "ScaledDown" now and the steady wording one poll later.
   * The scale itself is still the Event (reason and message above) and status.lag.lastScale*.
   */
  settled?: { reason: string; status: 'True' | 'False'; message: string };
}

/** Runs one poll; returns the decision and the state to keep. */
export function decide(prev: ScalerState, input: DecideInput): { decision: Decision; state: ScalerState } {
  const s = input.settings;
  const snap = computeLag(input.offsets);
  const trend = updateTrend(prev.trend, snap, input.now, TAU_POLLS * s.pollIntervalMs);
  const rec = recommendReplicas({
    smoothedLag: trend.smoothedLag,
    instantLag: snap.total,
    rate: trend.rate,
    current: input.current,
    consumers: input.ready > 0 ? Math.min(input.ready, input.current || input.ready) : input.current,
    partitions: input.offsets.length,
    minReplicas: s.minReplicas,
    maxReplicas: s.maxReplicas,
    lagPerReplica: s.lagPerReplica,
    targetDrainTimeMs: s.targetDrainTimeMs,
    activationLag: s.activationLag,
  });
  const cap = input.sink ? Math.max(input.current, input.current === 0 ? 1 : 0) : Infinity;
  const target = Math.min(rec.replicas, cap);
  const stable = stabilize(prev.history, { at: input.now, replicas: target }, input.current, {
    scaleUpWindowMs: s.scaleUpStabilizationMs,
    scaleDownWindowMs: s.scaleDownStabilizationMs,
    maxScaleUpStep: s.maxScaleUpStep,
    maxScaleDownStep: s.maxScaleDownStep,
  });
  const lag: LagNumbers = {
    total: snap.total,
    maxPartition: snap.maxPartition,
    smoothed: Math.round(trend.smoothedLag),
    ratePerSecond: Math.round(trend.rate * 10) / 10,
  };
  const since = prev.since ?? input.now;
  // An empty history would let the first poll scale down at once; wait for a full window instead.
  const replicas =
    stable.replicas < input.current && input.now - since < s.scaleDownStabilizationMs
      ? input.current
      : stable.replicas;
  const direction = replicas > input.current ? 'up' : replicas < input.current ? 'down' : 'none';
  const committed = input.offsets.some((p) => p.committed >= 0);
  const ctx: Ctx = { input, rec, lag, replicas, withheld: rec.replicas > target, committed };
  const state: ScalerState = { trend, history: stable.history, lastScale: prev.lastScale, since };
  if (direction !== 'none') {
    const summary = scaleSummary(ctx);
    state.lastScale = { at: input.now, direction, from: input.current, to: replicas, summary };
    const reason = direction === 'up' ? 'ScaledUp' : 'ScaledDown';
    const settled =
      input.running === replicas
        ? steadyCondition({ ...ctx, input: { ...input, current: replicas } }, state.lastScale)
        : undefined;
    return {
      decision: {
        replicas,
        direction,
        withheld: ctx.withheld,
        reason,
        status: 'True',
        message: summary,
        lag,
        recommendation: rec,
        ...(settled ? { settled } : {}),
      },
      state,
    };
  }
  const c = steadyCondition(ctx, prev.lastScale);
  return { decision: { replicas, direction, withheld: ctx.withheld, ...c, lag, recommendation: rec }, state };
}

interface Ctx {
  input: DecideInput;
  rec: Recommendation;
  lag: LagNumbers;
  replicas: number;
  withheld: boolean;
  committed: boolean;
}

/** What the targets are, for messages: "2000 per replica" and/or "drain within 60s". */
function targetText(s: AutoscalingSettings): string {
  const parts: string[] = [];
  if (s.lagPerReplica) parts.push(`target ${s.lagPerReplica} per replica`);
  if (s.targetDrainTimeMs) parts.push(`drain within ${s.targetDrainTimeMs / 1000}s`);
  return parts.join(', ');
}

function lagText(l: LagNumbers): string {
  return `lag ${l.total} (max partition ${l.maxPartition}), smoothed ${l.smoothed}, consuming ${l.ratePerSecond}/s`;
}

/** "wants 400 workers, capped at 2 = min(maxReplicas 2, partitions 2)". */
function capText(c: Ctx): string {
  const why = `min(maxReplicas ${c.input.settings.maxReplicas}, partitions ${c.input.offsets.length})`;
  return `wants ${c.rec.unbounded} workers, capped at ${c.rec.ceiling} = ${why}`;
}

function scaleSummary(c: Ctx): string {
  const verb = c.replicas > c.input.current ? 'scaled up' : 'scaled down';
  const why = c.rec.reason === 'AtMaximum' ? `AtMaximum: ${capText(c)}` : c.rec.reason;
  const sink = c.input.sink ? `; sink unhealthy: ${c.input.sink.message}` : '';
  return `${verb} ${c.input.current} -> ${c.replicas} workers (${why}): ${lagText(c.lag)}; ${targetText(c.input.settings)}${sink}`;
}

/** The condition when this poll changed nothing; see the precedence in the code. */
function steadyCondition(
  c: Ctx,
  last: LastScale | undefined,
): { reason: string; status: 'True' | 'False'; message: string } {
  const { input, rec, lag } = c;
  const n = input.current;
  if (input.sink) {
    const what = c.withheld
      ? `wants ${rec.replicas} workers, holding at ${n}`
      : `holding scale-ups at ${n} workers`;
    return {
      reason: 'HoldSinkUnhealthy',
      status: 'False',
      message: `${what}: ${input.sink.message}; ${lagText(lag)}`,
    };
  }
  if (last && input.running !== n && last.to === n) {
    const reason = last.direction === 'up' ? 'ScaledUp' : 'ScaledDown';
    return { reason, status: 'True', message: `${last.summary}; ${input.running} of ${n} workers running` };
  }
  if (rec.reason === 'AtMaximum' && n === rec.ceiling) {
    return { reason: 'AtMaximum', status: 'False', message: `${capText(c)}; ${lagText(lag)}` };
  }
  if (rec.reason === 'BelowActivation' && n === rec.replicas) {
    return {
      reason: 'BelowActivation',
      status: 'True',
      message: `${n} workers (minReplicas); lag ${lag.total} is at or below activationLag ${input.settings.activationLag}`,
    };
  }
  if (!c.committed) {
    return {
      reason: 'NoCommittedOffsets',
      status: 'True',
      message: `${n} workers; the group has no committed offsets yet, lag counted from the log start: ${lagText(lag)}`,
    };
  }
  const s = input.settings;
  const windowMs = rec.replicas < n ? s.scaleDownStabilizationMs : s.scaleUpStabilizationMs;
  const kind = rec.replicas < n ? 'scale-down' : 'scale-up';
  const pending =
    rec.replicas !== n ? `; ${rec.replicas} recommended, kept by the ${windowMs / 1000}s ${kind} window` : '';
  return {
    reason: 'Stable',
    status: 'True',
    message: `${n} workers: ${lagText(lag)}; ${targetText(s)}${pending}`,
  };
}
