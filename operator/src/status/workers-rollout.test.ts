import {
  readyPart as ok,
  statusSpec,
  workerDeployment,
  workerPod as pod,
} from '../../../test/fixtures/status-testing';
import { computeStatus } from './compute';
import { workersVerdict, type StartupObservation } from './conditions';
import { toPodView, type PodView } from './pod-view';
import { toDeploymentView, type DeploymentView } from './views';
import { ROLLING_UPDATE } from './workers-rollout';
import { WORKERS_STARTING } from './workers-starting';

const T0 = Date.parse('2026-12-04T12:00:00Z');
const BUDGET = 600_000;
type Cond = NonNullable<DeploymentView['status']['conditions']>[number];

const available: Cond = { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' };
const unavailable: Cond = { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable' };
const progressing = (reason: string): Cond => ({ type: 'Progressing', status: 'True', reason });
const complete = progressing('NewReplicaSetAvailable');
const underway = progressing('ReplicaSetUpdated');

/** The worker Deployment `fw-worker` at generation `generation`, as its controller last reported it. */
function dep(
  replicas: number,
  status: DeploymentView['status'],
  extra: Partial<DeploymentView> = {},
): DeploymentView {
  return {
    ...workerDeployment(0),
    generation: 2,
    replicas,
    revision: 2,
    status: { observedGeneration: 2, conditions: [available, underway], ...status },
    ...extra,
  };
}

const at = (nowMs: number, pods: PodView[]): StartupObservation => ({
  pods,
  nowMs,
  budgetMs: BUDGET,
  budgetText: '10m',
});
const old = pod('fw-worker-old-a', { created: T0 - 3_600_000, ready: true, started: T0 - 3_590_000 });
const fresh = pod('fw-worker-new-b', { created: T0 + 1_000, started: T0 + 2_000 });
/** One worker being replaced with maxSurge 1: the old pod serves, the new one starts. */
const surging = dep(1, { replicas: 2, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 });
const verdict = (d: DeploymentView, pods: PodView[], nowMs = T0 + 5_000) =>
  workersVerdict(d, 1, 'fw-worker', at(nowMs, pods));

describe('a rolling update of serving workers', () => {
  it('keeps WorkersReady True (RollingUpdate) while the Deployment controller has not observed the change', () => {
    // The reconcile that applied the new template: generation 3, the last report (generation 2) done.
    const applied = dep(
      1,
      {
        replicas: 1,
        updatedReplicas: 1,
        readyReplicas: 1,
        availableReplicas: 1,
        conditions: [available, complete],
      },
      { generation: 3, revision: 1 },
    );
    const v = verdict(applied, [old]);
    expect(v.condition).toEqual({
      type: 'WorkersReady',
      status: 'True',
      reason: ROLLING_UPDATE,
      message:
        'rolling update: the Deployment controller has not observed the latest change yet; 1 workers ready',
    });
    expect(v.progress).toEqual({
      reason: ROLLING_UPDATE,
      message: `worker Deployment fw-worker: ${v.condition.message}`,
    });
  });

  it('keeps it True while the new pod starts, and judges again when its budget runs out', () => {
    const v = verdict(surging, [old, fresh]);
    expect(v.condition).toMatchObject({
      status: 'True',
      reason: ROLLING_UPDATE,
      message: 'rolling update: 1 of 1 workers updated, 1 of 2 ready',
    });
    expect(v.recheckInMs).toBe(T0 + 1_000 + BUDGET - (T0 + 5_000));
    // New pod ready, old one not removed yet: still rolling, nothing left to time.
    const both = { ...surging, status: { ...surging.status, readyReplicas: 2, availableReplicas: 2 } };
    const ready = pod('fw-worker-new-b', { created: T0 + 1_000, started: T0 + 2_000, ready: true });
    const w = verdict(both, [old, ready]);
    expect(w.condition).toMatchObject({ status: 'True', reason: ROLLING_UPDATE });
    expect(w.recheckInMs).toBeUndefined();
  });

  it('is WorkersAvailable once the controller reports the rollout complete', () => {
    const done = dep(1, {
      replicas: 1,
      updatedReplicas: 1,
      readyReplicas: 1,
      availableReplicas: 1,
      conditions: [available, complete],
    });
    const ready = pod('fw-worker-new-b', { created: T0 + 1_000, started: T0 + 2_000, ready: true });
    const v = verdict(done, [ready]);
    expect(v.condition).toMatchObject({ status: 'True', reason: 'WorkersAvailable' });
    expect(v.progress).toBeUndefined();
  });

  it('names what holds a new pod up, and is False with that cause past the budget', () => {
    const pulling = pod('fw-worker-new-b', {
      created: T0 + 1_000,
      waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "nope:1"' },
    });
    expect(verdict(surging, [old, pulling]).condition).toMatchObject({
      status: 'True',
      reason: ROLLING_UPDATE,
      message:
        'rolling update: 1 of 1 workers updated, 1 of 2 ready (worker pod fw-worker-new-b: ImagePullBackOff)',
    });
    const late = verdict(surging, [old, pulling], T0 + 1_000 + BUDGET);
    expect(late.condition).toEqual({
      type: 'WorkersReady',
      status: 'False',
      reason: 'ImagePullBackOff',
      message:
        'rolling update: 1 of 1 workers updated, 1 of 2 ready; worker pod fw-worker-new-b still ImagePullBackOff after 10m: Back-off pulling image "nope:1"',
    });
    expect(late.progress).toBeUndefined();
    const unplaced = pod('fw-worker-new-b', {
      created: T0 + 1_000,
      unschedulable: '0/3 nodes are available.',
    });
    expect(verdict(surging, [old, unplaced], T0 + 1_000 + BUDGET).condition).toMatchObject({
      status: 'False',
      reason: 'Unschedulable',
      message: expect.stringContaining(
        'worker pod fw-worker-new-b not scheduled within 10m: 0/3 nodes are available.',
      ),
    });
  });

  it('is False with the Deployment reason once Kubernetes reports ProgressDeadlineExceeded', () => {
    const timedOut = dep(1, {
      ...surging.status,
      conditions: [
        available,
        {
          type: 'Progressing',
          status: 'False',
          reason: 'ProgressDeadlineExceeded',
          message: 'ReplicaSet "x" has timed out progressing.',
        },
      ],
    });
    expect(verdict(timedOut, [old, fresh]).condition).toMatchObject({
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
      message: 'ReplicaSet "x" has timed out progressing.',
    });
  });

  it('is False when availability is lost: the controller says so, or a serving pod is no longer ready', () => {
    const lost = dep(1, {
      ...surging.status,
      readyReplicas: 0,
      availableReplicas: 0,
      conditions: [unavailable, underway],
    });
    expect(verdict(lost, [fresh]).condition).toMatchObject({
      status: 'False',
      reason: 'WorkersUnavailable',
      message: '0 of 1 workers ready',
    });
    const fell = pod('fw-worker-old-c', {
      created: T0 - 3_600_000,
      started: T0 - 3_590_000,
      readyChanged: T0,
    });
    const two = dep(2, { replicas: 3, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 });
    expect(workersVerdict(two, 2, 'fw-worker', at(T0 + 5_000, [old, fell, fresh])).condition).toMatchObject({
      status: 'False',
      reason: 'WorkersUnavailable',
      message:
        'rolling update: 1 of 2 workers updated, 1 of 3 ready; worker pod fw-worker-old-c is no longer ready',
    });
    const quota = dep(1, {
      ...surging.status,
      conditions: [
        available,
        underway,
        { type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'exceeded quota: pods=1' },
      ],
    });
    expect(verdict(quota, [old]).condition).toMatchObject({
      status: 'False',
      reason: 'FailedCreate',
      message: expect.stringContaining('exceeded quota: pods=1'),
    });
  });

  it('ignores an old pod that is terminating (no longer ready on purpose)', () => {
    const leaving = {
      ...pod('fw-worker-old-a', { created: T0 - 3_600_000, started: T0 - 3_590_000, readyChanged: T0 }),
      terminating: true,
    };
    const ready = pod('fw-worker-new-b', { created: T0 + 1_000, started: T0 + 2_000, ready: true });
    const v = verdict({ ...surging, status: { ...surging.status, readyReplicas: 1 } }, [leaving, ready]);
    expect(v.condition).toMatchObject({ status: 'True', reason: ROLLING_UPDATE });
  });

  it('keeps the tail of a later rollout (every old pod gone, a new one starting) in progress', () => {
    const tail = dep(4, { replicas: 4, updatedReplicas: 4, readyReplicas: 3, availableReplicas: 3 });
    const v = workersVerdict(tail, 4, 'fw-worker', at(T0 + 5_000, [old, fresh]));
    expect(v.condition).toMatchObject({ status: 'True', reason: ROLLING_UPDATE });
    expect(v.progress?.message).toBe(
      'worker Deployment fw-worker: rolling update: 4 of 4 workers updated, 3 of 4 ready',
    );
  });
});

describe('what a rolling update leaves as before', () => {
  it('judges a new pipeline by its first rollout as before (no earlier template)', () => {
    // Created, the controller has not answered: RolloutPending.
    const created = dep(
      2,
      { observedGeneration: undefined, conditions: undefined },
      { generation: 1, revision: undefined },
    );
    expect(workersVerdict(created, 2, 'fw-worker', at(T0, [])).condition).toMatchObject({
      status: 'Unknown',
      reason: 'RolloutPending',
    });
    // Pods created, none ready: False.
    const none = dep(
      2,
      {
        observedGeneration: 1,
        replicas: 2,
        updatedReplicas: 2,
        readyReplicas: 0,
        conditions: [unavailable, underway],
      },
      { generation: 1, revision: 1 },
    );
    expect(workersVerdict(none, 2, 'fw-worker', at(T0, [fresh])).condition).toMatchObject({
      status: 'False',
    });
    // One of two ready (availability met for a controller with maxUnavailable 1): WorkersStarting as before.
    const half = dep(
      2,
      {
        observedGeneration: 1,
        replicas: 2,
        updatedReplicas: 2,
        readyReplicas: 1,
        availableReplicas: 1,
        conditions: [available, underway],
      },
      { generation: 1, revision: 1 },
    );
    const first = pod('fw-worker-new-a', { created: T0 - 60_000, ready: true, started: T0 - 50_000 });
    const v = workersVerdict(half, 2, 'fw-worker', at(T0 + 5_000, [first, fresh]));
    expect(v.condition).toMatchObject({ status: 'True', reason: WORKERS_STARTING });
    expect(v.progress).toBeUndefined();
  });

  it('leaves a scale-up after a completed rollout to WorkersStarting, with the conditions a real controller writes', () => {
    const scaled = dep(2, {
      replicas: 2,
      updatedReplicas: 2,
      readyReplicas: 1,
      availableReplicas: 1,
      conditions: [available, complete],
    });
    const v = workersVerdict(scaled, 2, 'fw-worker', at(T0 + 5_000, [old, fresh]));
    expect(v.condition).toEqual({
      type: 'WorkersReady',
      status: 'True',
      reason: WORKERS_STARTING,
      message: '1 of 2 workers ready, 1 starting',
    });
    expect(v.progress).toBeUndefined();
  });
});

describe('computeStatus during a rolling update', () => {
  const spec = statusSpec();
  const run = (d: DeploymentView, pods: PodView[], nowMs = T0 + 5_000) =>
    computeStatus(spec, d, ok('TopicReady'), ok('TableReady'), undefined, undefined, { pods, nowMs });
  const byType = (cs: Array<{ type: string }>) => new Map(cs.map((c) => [c.type, c]));

  it('keeps Ready True with Reconciling True naming the rollout, and Stalled False', () => {
    const s = run(surging, [old, fresh]);
    const c = byType(s.conditions);
    expect(c.get('Ready')).toMatchObject({ status: 'True', reason: 'PipelineReady' });
    expect(c.get('Reconciling')).toEqual({
      type: 'Reconciling',
      status: 'True',
      reason: ROLLING_UPDATE,
      message: 'worker Deployment fw-worker: rolling update: 1 of 1 workers updated, 1 of 2 ready',
    });
    expect(c.get('Stalled')).toMatchObject({ status: 'False' });
    expect(s.requeueAfterMs).toBe(T0 + 1_000 + BUDGET - (T0 + 5_000));
  });

  it('does not call the surge pods of a rollout a scale (no Scaling flip, no Event)', () => {
    const c = byType(run(surging, [old, fresh]).conditions);
    expect(c.get('Scaling')).toEqual({
      type: 'Scaling',
      status: 'False',
      reason: 'AutoscalingDisabled',
      message: '1 workers (autoscaling off)',
    });
  });

  it('ends with Reconciling False once the rollout completes', () => {
    const done = dep(1, {
      replicas: 1,
      updatedReplicas: 1,
      readyReplicas: 1,
      availableReplicas: 1,
      conditions: [available, complete],
    });
    const c = byType(
      run(done, [pod('fw-worker-new-b', { created: T0 + 1_000, started: T0 + 2_000, ready: true })])
        .conditions,
    );
    expect(c.get('Ready')).toMatchObject({ status: 'True' });
    expect(c.get('Reconciling')).toMatchObject({ status: 'False', reason: 'PipelineReady' });
  });

  it('turns Ready False and Stalled True when a new pod crash-loops', () => {
    const crashing = pod('fw-worker-new-b', {
      created: T0 + 1_000,
      waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' },
      restarts: 2,
    });
    const c = byType(run(surging, [old, crashing]).conditions);
    expect(c.get('WorkersReady')).toMatchObject({ status: 'False', reason: 'WorkerCrashLoop' });
    expect(c.get('Ready')).toMatchObject({ status: 'False', reason: 'WorkersNotReady' });
    expect(c.get('Stalled')).toMatchObject({ status: 'True', reason: 'WorkerCrashLoop' });
    expect(c.get('Reconciling')).toMatchObject({ status: 'False' });
  });
});

describe('the views a rolling update is judged by', () => {
  it("reads the Deployment controller's revision and a pod's deletion", () => {
    const raw = {
      metadata: {
        name: 'fw-worker',
        namespace: 'logs',
        uid: 'u',
        resourceVersion: '7',
        generation: 3,
        annotations: { 'deployment.kubernetes.io/revision': '4' },
      },
      spec: { replicas: 2 },
      status: {},
    };
    expect(toDeploymentView(raw).revision).toBe(4);
    expect(
      toDeploymentView({ ...raw, metadata: { ...raw.metadata, annotations: {} } }).revision,
    ).toBeUndefined();
    const leaving = toPodView({
      metadata: {
        name: 'p',
        namespace: 'logs',
        resourceVersion: '1',
        deletionTimestamp: '2026-12-04T12:00:00Z',
      },
      status: {},
    });
    expect(leaving.terminating).toBe(true);
    expect(
      toPodView({ metadata: { name: 'p', namespace: 'logs', resourceVersion: '1' } }).terminating,
    ).toBeUndefined();
  });
});
