import { workersVerdict, type StartupObservation } from './conditions';
import type { PodView } from './pod-view';
import type { DeploymentView } from './views';
import { wasReady, WORKERS_STARTING } from './workers-starting';
import { workerPod as pod } from '../../../test/fixtures/status-testing';

const T0 = Date.parse('2026-12-04T12:00:00Z');
const BUDGET = 600_000;

/** A Deployment as its controller reported it, asking for `replicas`. */
function dep(
  replicas: number,
  status: DeploymentView['status'],
  extra: Partial<DeploymentView> = {},
): DeploymentView {
  return {
    metadata: { name: 'fw-worker', namespace: 'ns', uid: 'u', resourceVersion: '1', ownerReferences: [] },
    fingerprint: 'f',
    generation: 2,
    replicas,
    ownsReplicas: false,
    status: { observedGeneration: 2, ...status },
    ...extra,
  };
}

const old = pod('fw-worker-a', { created: T0 - 3_600_000, ready: true, started: T0 - 3_590_000 });
const at = (nowMs: number, pods: PodView[], startingSinceMs?: number): StartupObservation => ({
  pods,
  nowMs,
  budgetMs: BUDGET,
  budgetText: '10m',
  startingSinceMs,
});
/** After the controller answered a scale 1 -> 2: two pods, one ready. */
const scaledTo2 = dep(2, { replicas: 2, updatedReplicas: 2, readyReplicas: 1 });

describe('a scale-up while its new worker starts', () => {
  const fresh = pod('fw-worker-b', { created: T0 + 1_000 });
  const running = pod('fw-worker-b', { created: T0 + 1_000, started: T0 + 3_000 });

  it('keeps WorkersReady True (WorkersStarting) within the budget, with a stable message', () => {
    for (const p of [fresh, running]) {
      const v = workersVerdict(scaledTo2, 2, 'fw-worker', at(T0 + 5_000, [old, p]));
      expect(v.condition).toEqual({
        type: 'WorkersReady',
        status: 'True',
        reason: WORKERS_STARTING,
        message: '1 of 2 workers ready, 1 starting',
      });
      // Judged again when the pod's budget runs out (from its creation).
      expect(v.recheckInMs).toBe(T0 + 1_000 + BUDGET - (T0 + 5_000));
    }
  });

  it('is the same before the controller answered the scale (no RolloutPending, no RollingOut)', () => {
    // The reconcile that scaled: spec.replicas raised, the status still says 1 of 1.
    const asked = dep(2, { replicas: 1, updatedReplicas: 1, readyReplicas: 1 });
    const v = workersVerdict(asked, 2, 'fw-worker', at(T0, [old]));
    expect(v.condition).toMatchObject({ status: 'True', reason: WORKERS_STARTING });
    // First seen now: the budget of the pod nobody created yet starts now, and is kept in status.
    expect(v).toMatchObject({ recheckInMs: BUDGET, startingSinceMs: T0 });
    expect(workersVerdict(asked, 2, 'fw-worker', at(T0 + 200, [old], T0))).toMatchObject({
      recheckInMs: BUDGET - 200,
      startingSinceMs: T0,
    });
    // The generation bump seen before the controller's answer, with the new pod already cached.
    const unobserved = { ...asked, generation: 3 };
    expect(workersVerdict(unobserved, 2, 'fw-worker', at(T0 + 900, [old, fresh])).condition).toMatchObject({
      status: 'True',
      reason: WORKERS_STARTING,
      message: '1 of 2 workers ready, 1 starting',
    });
    // A pod nobody created past the budget: False, said so.
    expect(workersVerdict(asked, 2, 'fw-worker', at(T0 + BUDGET, [old], T0)).condition).toMatchObject({
      status: 'False',
      reason: 'WorkersNotCreated',
      message: '1 of 2 workers ready; 1 worker pod was not created within 10m of the scale-up',
    });
  });

  it('names a cause while starting, and turns False with it past the budget', () => {
    const pending = pod('fw-worker-b', {
      created: T0 + 1_000,
      unschedulable: '0/3 nodes are available: 3 Insufficient cpu.',
    });
    expect(workersVerdict(scaledTo2, 2, 'fw-worker', at(T0 + 60_000, [old, pending])).condition).toEqual({
      type: 'WorkersReady',
      status: 'True',
      reason: WORKERS_STARTING,
      message: '1 of 2 workers ready, 1 starting (worker pod fw-worker-b: Unschedulable)',
    });
    const late = workersVerdict(scaledTo2, 2, 'fw-worker', at(T0 + 1_000 + BUDGET, [old, pending]));
    expect(late.condition).toEqual({
      type: 'WorkersReady',
      status: 'False',
      reason: 'Unschedulable',
      message:
        '1 of 2 workers ready; worker pod fw-worker-b not scheduled within 10m: 0/3 nodes are available: 3 Insufficient cpu.',
    });
    expect(late.recheckInMs).toBeUndefined();
    const pull = pod('fw-worker-b', {
      created: T0 + 1_000,
      waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "worker:9.9"' },
    });
    expect(
      workersVerdict(scaledTo2, 2, 'fw-worker', at(T0 + 2_000_000, [old, pull])).condition,
    ).toMatchObject({
      status: 'False',
      reason: 'ImagePullBackOff',
      message:
        '1 of 2 workers ready; worker pod fw-worker-b still ImagePullBackOff after 10m: Back-off pulling image "worker:9.9"',
    });
    // Running but its readiness probe never passed.
    expect(
      workersVerdict(scaledTo2, 2, 'fw-worker', at(T0 + 1_000 + BUDGET, [old, running])).condition,
    ).toMatchObject({
      status: 'False',
      reason: 'WorkerNeverReady',
    });
  });

  it('never tolerates a pod that was ready and became unready', () => {
    const fallen = pod('fw-worker-b', {
      created: T0 + 1_000,
      started: T0 + 2_000,
      readyChanged: T0 + 30_000,
    });
    expect(wasReady(fallen)).toBe(true);
    expect(wasReady(running)).toBe(false);
    expect(workersVerdict(scaledTo2, 2, 'fw-worker', at(T0 + 31_000, [old, fallen])).condition).toEqual({
      type: 'WorkersReady',
      status: 'False',
      reason: 'WorkersUnavailable',
      message: '1 of 2 workers ready; worker pod fw-worker-b is no longer ready',
    });
    // The old worker turning unready during the scale-up is no start-up either.
    const oldFallen = pod('fw-worker-a', {
      created: T0 - 3_600_000,
      started: T0 - 3_590_000,
      readyChanged: T0,
    });
    const three = dep(3, { replicas: 3, updatedReplicas: 3, readyReplicas: 1 });
    const ok = pod('fw-worker-c', {
      created: T0,
      ready: true,
      started: T0 + 1_000,
      readyChanged: T0 + 2_000,
    });
    expect(
      workersVerdict(three, 3, 'fw-worker', at(T0 + 5_000, [oldFallen, ok, fresh])).condition,
    ).toMatchObject({
      status: 'False',
      reason: 'WorkersUnavailable',
      message: '1 of 3 workers ready; worker pod fw-worker-a is no longer ready',
    });
  });

  it('gives no tolerance without a ready worker, and names a ReplicaFailure at once', () => {
    const none = dep(2, { replicas: 2, updatedReplicas: 2, readyReplicas: 0 });
    expect(workersVerdict(none, 2, 'fw-worker', at(T0 + 5_000, [fresh])).condition).toMatchObject({
      status: 'False',
      reason: 'WorkersUnavailable',
      message: '0 of 2 workers ready',
    });
    const quota = dep(2, {
      replicas: 1,
      updatedReplicas: 1,
      readyReplicas: 1,
      conditions: [
        {
          type: 'ReplicaFailure',
          status: 'True',
          reason: 'FailedCreate',
          message: 'exceeded quota: pods=1',
        },
      ],
    });
    expect(workersVerdict(quota, 2, 'fw-worker', at(T0 + 5_000, [old])).condition).toMatchObject({
      status: 'False',
      reason: 'FailedCreate',
      message: '1 of 2 workers ready; exceeded quota: pods=1',
    });
  });

  it('leaves scale-downs True and rollouts as before', () => {
    // Scale-down 2 -> 1, asked and not yet answered: no RolloutPending.
    const down = dep(1, { replicas: 2, updatedReplicas: 2, readyReplicas: 2 }, { generation: 3 });
    expect(workersVerdict(down, 1, 'fw-worker', at(T0, [old])).condition).toMatchObject({
      status: 'True',
      reason: 'WorkersAvailable',
    });
    // A template change (count unchanged) not yet observed: RolloutPending as before.
    const changed = dep(2, { replicas: 2, updatedReplicas: 2, readyReplicas: 2 }, { generation: 3 });
    expect(workersVerdict(changed, 2, 'fw-worker', at(T0, [old])).condition).toMatchObject({
      status: 'Unknown',
      reason: 'RolloutPending',
    });
    // A rollout in progress: old pods still there (replicas > updated).
    const rolling = dep(2, { replicas: 3, updatedReplicas: 1, readyReplicas: 2 });
    expect(workersVerdict(rolling, 2, 'fw-worker', at(T0, [old])).condition).toMatchObject({
      status: 'False',
      reason: 'RollingOut',
    });
    // A new pipeline's first pods: no worker ready, nothing tolerated.
    const first = dep(1, { observedGeneration: 1 }, { generation: 1 });
    expect(workersVerdict(first, 1, 'fw-worker', at(T0, [])).condition).toMatchObject({
      status: 'False',
      reason: 'RollingOut',
    });
    expect(workersVerdict({ ...first, generation: 2 }, 1, 'fw-worker', at(T0, [])).condition).toMatchObject({
      status: 'Unknown',
      reason: 'RolloutPending',
    });
  });
});

describe('the views the start-up is judged by', () => {
  it('reads the pod times and the scheduler and kubelet reasons', () => {
    const p = pod('x', { created: T0, unschedulable: '0/1 nodes are available: 1 Too many pods.' });
    expect(p).toMatchObject({
      createdMs: T0,
      readyChangedMs: T0,
      unscheduled: { reason: 'Unschedulable', message: '0/1 nodes are available: 1 Too many pods.' },
    });
    const crash = pod('y', { created: T0, waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' } });
    // The back-off countdown is not kept: it would make every pod status write a reconcile.
    expect(crash.waitingMessage).toBeUndefined();
  });
});
