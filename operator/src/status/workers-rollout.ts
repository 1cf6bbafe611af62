/**
 * WorkersReady while a rolling update replaces serving workers (pure). A change of the pod template
 * (batch settings, image, resources, a rotated Secret) makes the Deployment controller replace the
 * pods a few at a time while the old ones keep consuming: like Kubernetes' own `Available`, the
 * pipeline stays Ready and says the rollout is in progress (`Reconciling=True`, so GitOps tools
 * still wait for it: kstatus reads Reconciling first). "Serving" is decided from observed state
 * only: the Deployment reports minimum availability (`Available=True`), at least one worker is
 * ready, and an earlier template exists (the last report of an earlier generation, old pods still
 * there, or revision 2 and up), so a new pipeline's first rollout is judged as before. The
 * tolerance is bounded: a new pod that is not ready within the start-up budget
 * (spec.workers.progressDeadline) after its creation, a pod that was ready and is not any more, a
 * ReplicaFailure, or the Deployment's own `Progressing=False` (ProgressDeadlineExceeded) end it
 * with the cause; a crash-looping pod ends it earlier (worker-pods.ts).
 */
import type { PodView } from './pod-view';
import type { DeploymentView } from './views';
import {
  cause,
  expired,
  onlyCountChanges,
  replicaFailure,
  fallenWorker,
  unreadyPods,
  workers,
  type StartingInput,
  type WorkersVerdict,
} from './workers-starting';

/** Reason of WorkersReady / IngestReady (True) and Reconciling (True) while serving pods are replaced. */
export const ROLLING_UPDATE = 'RollingUpdate';

/** Progressing reasons of a Deployment whose newest rollout has not completed (the controller's util). */
const UNDERWAY = new Set(['NewReplicaSetCreated', 'FoundNewReplicaSet', 'ReplicaSetUpdated']);

/** The pods and the clock a rolling update is judged by. */
export type RolloutObservation = Pick<StartingInput, 'pods' | 'nowMs' | 'budgetMs' | 'budgetText'>;

/** The Deployment's condition of `type`, as last reported. */
export function deploymentCondition(dep: DeploymentView, type: string) {
  return dep.status.conditions?.find((c) => c.type === type);
}

/**
 * True while the Deployment's last report shows a template rollout under way: old pods still run,
 * pods of the current template are missing (not a scale), or the controller still calls the
 * rollout in progress while not every pod is available.
 */
export function rollingOut(dep: DeploymentView, desired: number): boolean {
  const st = dep.status;
  const pods = st.replicas ?? 0;
  const updated = st.updatedReplicas ?? 0;
  if (pods > updated) return true;
  if (updated < desired && !onlyCountChanges(dep)) return true;
  const progressing = deploymentCondition(dep, 'Progressing');
  const underway = progressing?.status === 'True' && UNDERWAY.has(progressing.reason ?? '');
  return underway && (st.availableReplicas ?? 0) < desired;
}

/**
 * True when the workers serve through the rollout: minimum availability reported, a worker ready,
 * and pods of an earlier template to replace (`pending`: the report is of an earlier generation).
 */
export function servesThroughRollout(dep: DeploymentView, pending: boolean): boolean {
  const st = dep.status;
  if (deploymentCondition(dep, 'Available')?.status !== 'True') return false;
  if ((st.readyReplicas ?? 0) < 1) return false;
  return pending || (st.replicas ?? 0) > (st.updatedReplicas ?? 0) || (dep.revision ?? 1) > 1;
}

/**
 * WorkersReady for a rolling update of serving workers (`pending`: the controller has not observed
 * the newest generation yet): True RollingUpdate with `progress` for Reconciling and the time the
 * oldest starting pod's budget runs out, or False naming the cause. Undefined when this is no
 * rolling update of serving workers: the caller judges the Deployment as before.
 */
export function rollingUpdate(
  dep: DeploymentView,
  desired: number,
  name: string,
  pending: boolean,
  obs: RolloutObservation,
): WorkersVerdict | undefined {
  if (desired === 0 || (!pending && !rollingOut(dep, desired))) return undefined;
  if (deploymentCondition(dep, 'Progressing')?.status === 'False') return undefined;
  if (!servesThroughRollout(dep, pending)) return undefined;
  const counts = rolloutCounts(dep, desired, pending);
  const unready = unreadyPods(obs.pods);
  const fallen = fallenWorker(unready, counts);
  if (fallen) return fallen;
  const failure = replicaFailure(dep);
  if (failure)
    return {
      condition: workers(
        'False',
        'FailedCreate',
        `${counts}; ${failure.message ?? 'worker pods cannot be created'}`,
      ),
    };
  return judgeNewPods(unready, counts, name, obs);
}

/** True RollingUpdate while every new pod is within its budget (naming what holds them up), else False. */
function judgeNewPods(
  unready: readonly PodView[],
  counts: string,
  name: string,
  obs: RolloutObservation,
): WorkersVerdict {
  const created = (p: PodView) => p.createdMs ?? obs.nowMs;
  const oldest = unready.reduce<PodView | undefined>(
    (a, p) => (!a || created(p) < created(a) ? p : a),
    undefined,
  );
  const expiresMs = oldest && created(oldest) + obs.budgetMs;
  if (oldest && expiresMs !== undefined && obs.nowMs >= expiresMs)
    return { condition: expired(oldest, 0, counts, obs.budgetText) };
  const causes = unready
    .filter((p) => cause(p) !== undefined)
    .map((p) => `worker pod ${p.metadata.name}: ${cause(p)}`);
  const message = `${counts}${causes.length > 0 ? ` (${causes.join('; ')})` : ''}`;
  return {
    condition: workers('True', ROLLING_UPDATE, message),
    progress: { reason: ROLLING_UPDATE, message: `worker Deployment ${name}: ${message}` },
    ...(expiresMs !== undefined ? { recheckInMs: expiresMs - obs.nowMs } : {}),
  };
}

/** "rolling update: 1 of 2 workers updated, 2 of 3 ready": what the controller last reported. */
function rolloutCounts(dep: DeploymentView, desired: number, pending: boolean): string {
  const st = dep.status;
  const ready = st.readyReplicas ?? 0;
  if (pending)
    return `rolling update: the Deployment controller has not observed the latest change yet; ${ready} workers ready`;
  const updated = st.updatedReplicas ?? 0;
  return `rolling update: ${updated} of ${desired} workers updated, ${ready} of ${st.replicas ?? 0} ready`;
}
