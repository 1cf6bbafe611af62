/**
 * WorkersReady while a scale-up's new pods start (pure). Raising the replicas of a running
 * Deployment leaves it short of ready pods for as long as the new pods take to schedule, pull and
 * pass their readiness probe; the pipeline processes data the whole time, so that is no outage and
 * must not turn Ready False (an Event, and GitOps tools reporting the pipeline as not Current) on
 * every lag scale-up. The tolerance is bounded: every missing worker must be a pod that has never
 * been ready and was created less than the start-up budget ago (spec.workers.progressDeadline), or
 * one the scale asked for less than the budget ago and that nobody created yet. Kubernetes itself
 * sets no bound here: the Deployment's own progress deadline is not checked after a completed
 * rollout, so a pod that never schedules would leave the Deployment "progressing" forever. Past
 * the budget WorkersReady is False with the cause the pod shows (Unschedulable, ImagePullBackOff,
 * a readiness probe that never passed); a pod that was ready and became unready is no start-up,
 * and is reported at once.
 */
import type { Condition } from '../api/types';
import type { ConditionInput } from './conditions';
import type { PodView } from './pod-view';
import type { DeploymentView } from './views';

/** Reason of WorkersReady (True) while a scale-up's new workers start within their budget. */
export const WORKERS_STARTING = 'WorkersStarting';

/** Reason of WorkersReady (False) for a pod that runs but never passed its readiness probe. */
export const WORKER_NEVER_READY = 'WorkerNeverReady';

/** Reason of WorkersReady (False) for pods a scale asked for that were never created. */
export const WORKERS_NOT_CREATED = 'WorkersNotCreated';

/** What the start-up judgement reads, all observed: counts, the pods, times. */
export interface StartingInput {
  ready: number;
  desired: number;
  pods: readonly PodView[];
  /** status.workers.startingSince as stored (ms): when this start-up was first seen. */
  startingSinceMs?: number;
  /** The Deployment's ReplicaFailure condition when True (pods could not be created, e.g. quota). */
  replicaFailure?: { reason?: string; message?: string };
  nowMs: number;
  /** The start-up budget (spec.workers.progressDeadlineMs) and its spelling for messages. */
  budgetMs: number;
  budgetText: string;
}

/** A WorkersReady condition and, while it tolerates starting pods, when to judge again. */
export interface WorkersVerdict {
  condition: ConditionInput;
  /** The budget of the oldest starting worker runs out in this many ms. */
  recheckInMs?: number;
  /** While tolerated: since when the workers start (kept as status.workers.startingSince). */
  startingSinceMs?: number;
  /** A rollout of serving workers under way: Reconciling True with this reason and message (kstatus.ts). */
  progress?: { reason: string; message: string };
}

/** Waiting reasons that are a container's normal way to running, not a cause worth naming. */
const ROUTINE_WAITING = new Set(['ContainerCreating', 'PodInitializing']);

/** A metav1.Condition reason (CamelCase, no spaces). */
const REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

/**
 * True when the unready pod `p` was ready before: its Ready condition last changed after its
 * container started (the kubelet first writes Ready=False before it starts the container, and only
 * a flip moves the time). A restarted container is a crash (worker-pods.ts), not a start-up.
 */
export function wasReady(p: PodView): boolean {
  if (p.ready) return true;
  if (p.restartCount > 0) return true;
  return p.readyChangedMs !== undefined && p.startedMs !== undefined && p.readyChangedMs > p.startedMs;
}

/**
 * The pods that are not ready and not terminating, by name. A terminating pod (a scale-down's, a
 * rollout's old one) is going away on purpose: no worker to wait for.
 */
export function unreadyPods(pods: readonly PodView[]): PodView[] {
  return pods
    .filter((p) => !p.ready && !p.terminating)
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
}

/**
 * False WorkersUnavailable naming the first of `unready` that was ready before (a worker that
 * served and fell, never a start-up), or undefined when none was; `counts` leads the message.
 */
export function fallenWorker(unready: readonly PodView[], counts: string): WorkersVerdict | undefined {
  const fallen = unready.find(wasReady);
  if (!fallen) return undefined;
  const message = `${counts}; worker pod ${fallen.metadata.name} is no longer ready`;
  return { condition: workers('False', 'WorkersUnavailable', message) };
}

/**
 * WorkersReady for `ready` < `desired` with at least one ready worker, or undefined when the
 * shortfall is not a start-up (no worker ready, or a pod's times are unknown): the caller then
 * says WorkersUnavailable as before.
 */
export function startingWorkers(input: StartingInput): WorkersVerdict | undefined {
  const { ready, desired } = input;
  if (ready < 1 || ready >= desired) return undefined;
  const unready = unreadyPods(input.pods);
  const counts = `${ready} of ${desired} workers ready`;
  const fallen = fallenWorker(unready, counts);
  if (fallen) return fallen;
  // Pods the controller has not created yet (or the cache has not shown); a pod the cache shows
  // ready is no missing worker, whatever the Deployment's count (it lags the pods).
  const readyPods = input.pods.filter((p) => p.ready && !p.terminating).length;
  const uncreated = Math.max(0, desired - Math.max(ready, readyPods) - unready.length);
  if (uncreated > 0 && input.replicaFailure) {
    const f = input.replicaFailure;
    const reason = f.reason && REASON.test(f.reason) ? f.reason : 'FailedCreate';
    return {
      condition: workers('False', reason, `${counts}; ${f.message ?? 'worker pods cannot be created'}`),
    };
  }
  if (unready.some((p) => p.createdMs === undefined)) return undefined;
  return judgeStarts(input, unready, uncreated, counts);
}

/** True while every starting worker is within its budget (with the time it runs out), else False naming why. */
function judgeStarts(
  input: StartingInput,
  unready: readonly PodView[],
  uncreated: number,
  counts: string,
): WorkersVerdict {
  const since = input.startingSinceMs ?? input.nowMs;
  const starts = unready.map((p) => ({ pod: p as PodView | undefined, at: p.createdMs! }));
  if (uncreated > 0) starts.push({ pod: undefined, at: since });
  const causes = unready
    .filter((p) => cause(p) !== undefined)
    .map((p) => `worker pod ${p.metadata.name}: ${cause(p)}`);
  const more = causes.length > 0 ? ` (${causes.join('; ')})` : '';
  const starting = workers(
    'True',
    WORKERS_STARTING,
    `${counts}, ${input.desired - input.ready} starting${more}`,
  );
  // Every pod is there and ready: only the Deployment's count lags; its update queues a reconcile.
  if (starts.length === 0) return { condition: starting, startingSinceMs: since };
  const oldest = starts.reduce((a, b) => (b.at < a.at ? b : a));
  const expiresMs = oldest.at + input.budgetMs;
  if (input.nowMs >= expiresMs)
    return { condition: expired(oldest.pod, uncreated, counts, input.budgetText) };
  return { condition: starting, recheckInMs: expiresMs - input.nowMs, startingSinceMs: since };
}

/**
 * True when the Deployment differs from what its controller last reported only in the number of
 * pods: that report shows a finished rollout (every pod on the current template) with at least one
 * ready worker, and spec.replicas asks for another count. A template change made together with a
 * scale is read as a scale until the controller answers (it then shows RollingOut).
 */
export function onlyCountChanges(dep: DeploymentView): boolean {
  const st = dep.status;
  const pods = st.replicas ?? 0;
  return (
    (st.observedGeneration ?? 0) >= 1 &&
    (st.readyReplicas ?? 0) >= 1 &&
    (st.updatedReplicas ?? 0) === pods &&
    dep.replicas !== pods
  );
}

/** The Deployment's ReplicaFailure when True: the pods a scale asked for cannot be created (e.g. quota). */
export function replicaFailure(dep: DeploymentView): StartingInput['replicaFailure'] {
  return dep.status.conditions?.find((x) => x.type === 'ReplicaFailure' && x.status === 'True');
}

/** The one word explaining why a starting pod is not up yet, when it is more than routine. */
export function cause(p: PodView): string | undefined {
  if (p.unscheduled) return p.unscheduled.reason;
  if (p.waitingReason && !ROUTINE_WAITING.has(p.waitingReason)) return p.waitingReason;
  return undefined;
}

/** WorkersReady False naming what kept the oldest starting worker (`pod`, or an uncreated one) down. */
export function expired(
  pod: PodView | undefined,
  uncreated: number,
  counts: string,
  budget: string,
): ConditionInput {
  if (!pod) {
    const what = uncreated === 1 ? '1 worker pod was' : `${uncreated} worker pods were`;
    return workers(
      'False',
      WORKERS_NOT_CREATED,
      `${counts}; ${what} not created within ${budget} of the scale-up`,
    );
  }
  const name = `worker pod ${pod.metadata.name}`;
  const detail = (m: string | undefined) => (m ? `: ${m}` : '');
  if (pod.unscheduled) {
    const reason = REASON.test(pod.unscheduled.reason) ? pod.unscheduled.reason : 'Unschedulable';
    return workers(
      'False',
      reason,
      `${counts}; ${name} not scheduled within ${budget}${detail(pod.unscheduled.message)}`,
    );
  }
  if (pod.waitingReason && REASON.test(pod.waitingReason))
    return workers(
      'False',
      pod.waitingReason,
      `${counts}; ${name} still ${pod.waitingReason} after ${budget}${detail(pod.waitingMessage)}`,
    );
  return workers(
    'False',
    WORKER_NEVER_READY,
    `${counts}; ${name} not ready within ${budget} of its creation (its readiness probe /readyz has not passed: see the pod's log)`,
  );
}

/** A WorkersReady condition. */
export function workers(status: Condition['status'], reason: string, message: string): ConditionInput {
  return { type: 'WorkersReady', status, reason, message };
}
