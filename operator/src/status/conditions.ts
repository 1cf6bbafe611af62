/**
 * Status conditions (metav1.Condition semantics): each has a one-word CamelCase reason and a
 * human message; `lastTransitionTime` moves only when the status flips, so an unchanged state
 * renders byte-identical and the status write can be skipped.
 */
import type { Condition } from '../api/types';
import type { DeploymentView } from './views';
import type { ParserCoverage } from '../apply/parser-coverage';
import {
  onlyCountChanges,
  replicaFailure,
  startingWorkers,
  type StartingInput,
  type WorkersVerdict,
} from './workers-starting';
import { rollingUpdate } from './workers-rollout';

/** The condition types this operator owns, in display order. */
export const CONDITION_TYPES = [
  'Ready',
  'TopicReady',
  'TableReady',
  'WorkersReady',
  'IngestReady',
  'Scaling',
  'Sealed',
  'ChainLinked',
  'Stalled',
  'Reconciling',
  'ParserCoverage',
] as const;
/**
 * kstatus' "abnormal-true" types (status/kstatus.ts): True is the bad news, so a flip to True is the
 * Warning and their appearing as False is no news. Reconciling flips are not worth an Event.
 */
const ABNORMAL_TRUE = new Set<string>(['Stalled', 'Reconciling']);
const NO_EVENTS = new Set<string>(['Reconciling']);
/**
 * Types where neither status is bad news: Scaling True is a scale under way, False a settled count.
 * Their flips are Normal Events, and their first appearance is none.
 */
const NEUTRAL = new Set<string>(['Scaling']);
/** One of CONDITION_TYPES. */
export type ConditionType = (typeof CONDITION_TYPES)[number];

/** A condition before it is stamped with generation and transition time. */
export interface ConditionInput {
  type: ConditionType;
  status: Condition['status'];
  reason: string;
  message: string;
}

/** Reason of a part condition when no implementation of that part is registered. */
export const NOT_CONFIGURED = 'NotConfigured';

/** Reason of a part (and of Ready) whose table or topic belongs to another LogPipeline. */
export const CONFLICT = 'Conflict';

/**
 * Stamps `next` with `generation`, keeping each condition's lastTransitionTime when its status did
 * not change; conditions of other types (written by someone else) are kept after ours.
 */
export function mergeConditions(
  prev: Condition[] | undefined,
  next: ConditionInput[],
  generation: number,
  now: string,
): Condition[] {
  const byType = new Map((prev ?? []).map((c) => [c.type, c]));
  const ours = next.map((c) => {
    const old = byType.get(c.type);
    const lastTransitionTime = old && old.status === c.status ? old.lastTransitionTime : now;
    return {
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message,
      observedGeneration: generation,
      lastTransitionTime,
    };
  });
  const owned = new Set<string>(next.map((c) => c.type));
  return [...ours, ...(prev ?? []).filter((c) => !owned.has(c.type))];
}

/** A condition whose status changed (or that appeared as False). */
export interface ConditionFlip {
  type: string;
  from?: Condition['status'];
  to: Condition['status'];
  reason: string;
  message: string;
}

/** True when `status` is the bad news for this condition type (False, or True for Stalled). */
export function isWarning(type: string, status: Condition['status']): boolean {
  return !NEUTRAL.has(type) && status === badStatus(type);
}

/** The status that is bad news for `type` (True for kstatus' abnormal-true types, else False). */
function badStatus(type: string): Condition['status'] {
  return ABNORMAL_TRUE.has(type) ? 'True' : 'False';
}

/** Scaling reasons the autoscaler turns into its own Event when it decides the scale. */
const SCALE_REASONS = new Set(['ScaledUp', 'ScaledDown']);

/** The part conditions Ready is made of (readyCondition's inputs). */
const READY_PARTS = new Set<string>(['TopicReady', 'TableReady', 'WorkersReady', 'IngestReady']);

/**
 * The flips between two condition lists, for Events. A part turning True in the same write as
 * Ready turning True says nothing the Ready Event ("all parts of the pipeline are ready") does not:
 * it is left out, so a new pipeline's way to Ready is one Event, not one per part (issue 18).
 * Ready turning True from nothing or Unknown (a new pipeline, a finished rollout) is no Event at
 * all: nothing went wrong on the way and the Ready condition says it (issue 18: one apiserver
 * write fewer per new pipeline); a recovery from False is. Flips to False or Unknown, and part
 * flips while Ready stays, are always reported.
 */
export function conditionFlips(prev: Condition[] | undefined, next: Condition[]): ConditionFlip[] {
  const byType = new Map((prev ?? []).map((c) => [c.type, c]));
  const flips: ConditionFlip[] = [];
  for (const c of next) {
    if (NO_EVENTS.has(c.type)) continue;
    // A scale is recorded by the autoscaler itself, once per decision (controller/parts/scaling-part.ts).
    if (c.type === 'Scaling' && SCALE_REASONS.has(c.reason)) continue;
    const old = byType.get(c.type);
    const appearsBad = !NEUTRAL.has(c.type) && c.status === badStatus(c.type);
    if (old ? old.status !== c.status : appearsBad)
      flips.push({ type: c.type, from: old?.status, to: c.status, reason: c.reason, message: c.message });
  }
  const ready = flips.find((f) => f.type === 'Ready' && f.to === 'True');
  if (!ready) return flips;
  const recovered = ready.from === 'False';
  return flips.filter((f) => (f === ready ? recovered : !(READY_PARTS.has(f.type) && f.to === 'True')));
}

/**
 * ParserCoverage from the workers' stats of the last window: False when more than the threshold
 * share of parsed rows lack src_ip (such rows cannot answer a legal request), naming the most
 * frequent hashed line shapes; Unknown without rows or stats. Not part of Ready: data quality,
 * not pipeline health.
 */
export function parserCoverageCondition(
  coverage: ParserCoverage | undefined,
  maxPercent: number,
): ConditionInput {
  const c = (status: Condition['status'], reason: string, message: string): ConditionInput => ({
    type: 'ParserCoverage',
    status,
    reason,
    message,
  });
  if (!coverage) return c('Unknown', 'NoCoverageStats', 'parser coverage stats are not readable yet');
  const window = `${Math.round(coverage.windowMs / 60_000)}m`;
  if (coverage.rows === 0) return c('Unknown', 'NoRecentRows', `no rows parsed in the last ${window}`);
  const share = `${coverage.missingSrcIpPercent}% of ${coverage.rows} rows in the last ${window} lack src_ip`;
  if (coverage.missingSrcIpPercent <= maxPercent)
    return c('True', 'SourceAddressesPresent', `${share} (threshold ${maxPercent}%)`);
  const shapes = coverage.topShapes.map((s) => `${s.shape} (${s.rows})`).join(', ');
  return c(
    'False',
    'SourceAddressMissing',
    `${share} (threshold ${maxPercent}%); most frequent line shapes without src_ip: ${shapes || 'none recorded'} ` +
      "(find them with `logpipeline parse -f pipeline.yaml`, which prints each line's shape)",
  );
}

/** WorkersReady from the Deployment as observed (status written by the Deployment controller). */
export function workersCondition(
  dep: DeploymentView | undefined,
  desired: number,
  name: string,
): ConditionInput {
  return workersVerdict(dep, desired, name).condition;
}

/** The pods and the clock a scale-up's start-up is judged by (status/workers-starting.ts). */
export type StartupObservation = Pick<
  StartingInput,
  'pods' | 'nowMs' | 'budgetMs' | 'budgetText' | 'startingSinceMs'
>;

/**
 * WorkersReady from the Deployment as observed and, given `startup`, a scale-up's new workers
 * starting within their budget (True, WorkersStarting) with the time to judge them again.
 */
export function workersVerdict(
  dep: DeploymentView | undefined,
  desired: number,
  name: string,
  startup?: StartupObservation,
): WorkersVerdict {
  const c = (status: Condition['status'], reason: string, message: string): WorkersVerdict => ({
    condition: { type: 'WorkersReady', status, reason, message },
  });
  if (!dep) return c('False', 'DeploymentNotFound', `worker Deployment ${name} does not exist yet`);
  const st = dep.status;
  // A scale of a running Deployment changes nothing the controller must roll out: judged by the
  // counts it last reported (and the pods), not as a pending rollout (the scale-up must not flap).
  const countOnly = startup !== undefined && onlyCountChanges(dep);
  const pending = (st.observedGeneration ?? 0) < dep.generation && !neverAskedForPods(dep) && !countOnly;
  // Serving workers being replaced: Ready stays True, Reconciling says so (workers-rollout.ts).
  const rolling = startup && rollingUpdate(dep, desired, name, pending, startup);
  if (rolling) return rolling;
  // No generation number in the message: a new pipeline's Deployment goes through generations 1
  // and 2 (created, then scaled) before the controller answers, and a message naming each would
  // cost one more status write per pipeline for no news.
  if (pending)
    return c(
      'Unknown',
      'RolloutPending',
      `Deployment ${name}: latest change not yet observed by the Deployment controller`,
    );
  const progressing = st.conditions?.find((x) => x.type === 'Progressing');
  if (progressing?.status === 'False')
    return c(
      'False',
      progressing.reason || 'ProgressDeadlineExceeded',
      progressing.message || `Deployment ${name} is not progressing`,
    );
  const ready = st.readyReplicas ?? 0;
  const updated = st.updatedReplicas ?? 0;
  if (desired === 0) return c('True', 'ScaledToZero', 'no workers requested (scaled to zero)');
  if (updated < desired && !countOnly)
    return c('False', 'RollingOut', `${updated} of ${desired} workers updated to the current template`);
  if (ready < desired) {
    const starting =
      startup && startingWorkers({ ...startup, replicaFailure: replicaFailure(dep), ready, desired });
    return starting ?? c('False', 'WorkersUnavailable', `${ready} of ${desired} workers ready`);
  }
  return c('True', 'WorkersAvailable', `${ready} of ${desired} workers ready`);
}

/**
 * True for a Deployment that has wanted zero pods since it was created (generation 1, replicas 0:
 * every scale or template change bumps the generation): no pod of it can exist, so there is
 * nothing for the Deployment controller to report. A new scaled-to-zero pipeline is Ready in the
 * reconcile that created it, with one status write, not two (issue 18).
 */
export function neverAskedForPods(dep: DeploymentView): boolean {
  return dep.generation === 1 && dep.replicas === 0 && (dep.status.replicas ?? 0) === 0;
}

/**
 * True when `dep` differs from `old` only by the Deployment controller's answer for a Deployment
 * that never asked for pods (observedGeneration, conditions that are not a failed Progressing):
 * `workersCondition` and the status read nothing of it, so the update needs no reconcile (issue
 * 18: the answer cost every new scaled-to-zero pipeline a second, no-op reconcile). Everything
 * else (spec, metadata, generation, replica counts, a False Progressing) still queues the owner.
 */
export function onlyConfirmsNoPods(old: DeploymentView, dep: DeploymentView): boolean {
  if (!neverAskedForPods(old) || !neverAskedForPods(dep)) return false;
  if (dep.status.conditions?.some((c) => c.type === 'Progressing' && c.status === 'False')) return false;
  const counts = (d: DeploymentView) => [
    d.status.replicas ?? 0,
    d.status.updatedReplicas ?? 0,
    d.status.readyReplicas ?? 0,
    d.status.availableReplicas ?? 0,
  ];
  return (
    old.fingerprint === dep.fingerprint &&
    old.appliedHash === dep.appliedHash &&
    old.foreignSpec === dep.foreignSpec &&
    old.ownsReplicas === dep.ownsReplicas &&
    old.metadata.uid === dep.metadata.uid &&
    counts(old).join() === counts(dep).join()
  );
}

/** Scaling: True while the Deployment is changing its number of pods. */
export function scalingCondition(
  dep: DeploymentView | undefined,
  autoscaling: boolean,
  desired: number,
): ConditionInput {
  const c = (status: Condition['status'], reason: string, message: string): ConditionInput => ({
    type: 'Scaling',
    status,
    reason,
    message,
  });
  const mode = autoscaling ? 'autoscaling on' : 'autoscaling off';
  const st = dep?.status;
  // A rolling update's surge pods replace old ones (no scale): its count is the one asked for.
  const updated = st?.updatedReplicas;
  const rolling = updated !== undefined && (st?.replicas ?? 0) > updated;
  const current = dep && rolling ? dep.replicas : (st?.replicas ?? 0);
  if (dep && current !== desired)
    return c(
      'True',
      current < desired ? 'ScalingUp' : 'ScalingDown',
      `${current} -> ${desired} workers (${mode})`,
    );
  return c('False', autoscaling ? 'Stable' : 'AutoscalingDisabled', `${desired} workers (${mode})`);
}

/**
 * Ready summarizes the parts: False if any is False, Unknown if any is Unknown, else True. Parts
 * without a registered implementation (NotConfigured) are not required.
 */
export function readyCondition(parts: ConditionInput[]): ConditionInput {
  const required = parts.filter((p) => p.reason !== NOT_CONFIGURED);
  const ready = (status: Condition['status'], reason: string, message: string): ConditionInput => ({
    type: 'Ready',
    status,
    reason,
    message,
  });
  const conflict = required.find((p) => p.status === 'False' && p.reason === CONFLICT);
  if (conflict) return ready('False', CONFLICT, conflict.message);
  const failed = required.find((p) => p.status === 'False');
  if (failed) return ready('False', `${failed.type.replace(/Ready$/, '')}NotReady`, failed.message);
  const unknown = required.find((p) => p.status === 'Unknown');
  if (unknown) return ready('Unknown', `${unknown.type.replace(/Ready$/, '')}Pending`, unknown.message);
  return ready('True', 'PipelineReady', 'all parts of the pipeline are ready');
}
