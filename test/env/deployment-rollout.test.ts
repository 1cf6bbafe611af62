import {
  deploymentStatus,
  planRollingUpdate,
  rolloutBounds,
  type DeploymentInput,
  type PlannedPod,
} from './deployment-rollout';

const T0 = Date.parse('2026-12-04T12:00:00Z');
const ready = (n: number): PlannedPod[] => Array.from({ length: n }, () => ({ ready: true }));
const starting = (n: number): PlannedPod[] => Array.from({ length: n }, () => ({ ready: false }));

describe('rolloutBounds', () => {
  it('resolves the defaults (25 %: surge rounded up, unavailable down) and integers', () => {
    expect(rolloutBounds(undefined, 1)).toEqual({ maxSurge: 1, maxUnavailable: 0 });
    expect(rolloutBounds({ rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } }, 4)).toEqual({
      maxSurge: 1,
      maxUnavailable: 1,
    });
    expect(rolloutBounds({ rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } }, 3)).toEqual({
      maxSurge: 1,
      maxUnavailable: 0,
    });
    expect(rolloutBounds({ rollingUpdate: { maxSurge: 0, maxUnavailable: 0 } }, 3).maxUnavailable).toBe(1);
  });
});

describe('planRollingUpdate', () => {
  const bounds = { maxSurge: 1, maxUnavailable: 0 };
  it('surges one new pod, removes an old one only once the new one is ready', () => {
    expect(planRollingUpdate(1, bounds, [], ready(1))).toEqual({ create: 1, remove: [] });
    expect(planRollingUpdate(1, bounds, starting(1), ready(1))).toEqual({ create: 0, remove: [] });
    const old = ready(1);
    expect(planRollingUpdate(1, bounds, ready(1), old)).toEqual({ create: 0, remove: old });
  });
  it('removes unready old pods first and keeps the minimum available', () => {
    const old = [...starting(1), ...ready(3)];
    const plan = planRollingUpdate(4, { maxSurge: 1, maxUnavailable: 1 }, [], old);
    expect(plan.create).toBe(1);
    expect(plan.remove[0]).toBe(old[0]);
    expect(plan.remove).toHaveLength(1);
  });
  it('is a plain scale without old pods', () => {
    expect(planRollingUpdate(3, bounds, ready(1), [])).toEqual({ create: 2, remove: [] });
  });
});

describe('deploymentStatus', () => {
  const dep = (status?: DeploymentInput['status'], replicas = 1): DeploymentInput => ({
    metadata: { name: 'fw-worker', generation: 2 },
    spec: { replicas, progressDeadlineSeconds: 600 },
    status,
  });
  const progressing = (s: Record<string, unknown> | undefined) =>
    (s?.conditions as Array<Record<string, unknown>>).find((c) => c.type === 'Progressing');
  const available = (s: Record<string, unknown> | undefined) =>
    (s?.conditions as Array<Record<string, unknown>>).find((c) => c.type === 'Available');

  it('walks a rollout through NewReplicaSetCreated, ReplicaSetUpdated and NewReplicaSetAvailable', () => {
    const s0 = deploymentStatus(dep(undefined), 'aaaaaaaaaaaa', false, ready(1), [], T0);
    expect(progressing(s0)).toMatchObject({ status: 'True', reason: 'NewReplicaSetAvailable' });
    expect(available(s0)).toMatchObject({ status: 'True', reason: 'MinimumReplicasAvailable' });
    // Nothing changed: no write.
    expect(deploymentStatus(dep(s0), 'aaaaaaaaaaaa', false, ready(1), [], T0 + 1_000)).toBeUndefined();
    // A new template: its first pod starts beside the old one.
    const s1 = deploymentStatus(dep(s0), 'bbbbbbbbbbbb', true, starting(1), ready(1), T0 + 2_000);
    expect(s1).toMatchObject({ replicas: 2, updatedReplicas: 1, readyReplicas: 1 });
    expect(progressing(s1)).toMatchObject({
      reason: 'NewReplicaSetCreated',
      message: 'Created new replica set "fw-worker-bbbbbbbbbb"',
    });
    expect(available(s1)).toMatchObject({ status: 'True' });
    // Ready: progress (the Deployment controller touches lastUpdateTime on each step).
    const s15 = deploymentStatus(dep(s1), 'bbbbbbbbbbbb', false, ready(1), ready(1), T0 + 5_000);
    expect(progressing(s15)).toMatchObject({
      reason: 'ReplicaSetUpdated',
      message: 'ReplicaSet "fw-worker-bbbbbbbbbb" is progressing.',
    });
    const s2 = deploymentStatus(dep(s15), 'bbbbbbbbbbbb', false, ready(1), [], T0 + 9_000);
    expect(s2).toMatchObject({ replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 });
    expect(progressing(s2)).toMatchObject({ status: 'True', reason: 'NewReplicaSetAvailable' });
    // A scale-up after the rollout completed: no rollout, no deadline.
    const s3 = deploymentStatus(
      dep(s2, 2),
      'bbbbbbbbbbbb',
      false,
      [...ready(1), ...starting(1)],
      [],
      T0 + 10_000,
    );
    expect(progressing(s3)).toMatchObject({ reason: 'NewReplicaSetAvailable' });
    const late = deploymentStatus(
      dep(s3, 2),
      'bbbbbbbbbbbb',
      false,
      [...ready(1), ...starting(1)],
      [],
      T0 + 3_600_000,
    );
    expect(late).toBeUndefined();
  });

  it('reports ProgressDeadlineExceeded when a rollout makes no progress for the deadline', () => {
    const s0 = deploymentStatus(dep(undefined), 'aaaaaaaaaaaa', false, ready(1), [], T0);
    const s1 = deploymentStatus(dep(s0), 'bbbbbbbbbbbb', true, starting(1), ready(1), T0 + 1_000);
    expect(
      deploymentStatus(dep(s1), 'bbbbbbbbbbbb', false, starting(1), ready(1), T0 + 500_000),
    ).toBeUndefined();
    const s2 = deploymentStatus(dep(s1), 'bbbbbbbbbbbb', false, starting(1), ready(1), T0 + 602_000);
    expect(progressing(s2)).toMatchObject({
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
      message: 'ReplicaSet "fw-worker-bbbbbbbbbb" has timed out progressing.',
    });
    expect(available(s2)).toMatchObject({ status: 'True' });
  });

  it('says minimum availability is lost when too few pods are ready', () => {
    const s = deploymentStatus(
      dep(undefined, 2),
      'aaaaaaaaaaaa',
      false,
      [...ready(1), ...starting(1)],
      [],
      T0,
    );
    expect(available(s)).toMatchObject({ status: 'False', reason: 'MinimumReplicasUnavailable' });
    expect(s).toMatchObject({ unavailableReplicas: 1 });
  });
});
