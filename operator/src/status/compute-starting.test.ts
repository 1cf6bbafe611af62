import {
  readyPart as ok,
  isoSeconds as iso,
  statusSpec,
  workerDeployment,
  workerPod as pod,
} from '../../../test/fixtures/status-testing';
import { computeStatus } from './compute';
import { toPodView, type PodView } from './pod-view';
import type { DeploymentView } from './views';
import { WORKERS_STARTING } from './workers-starting';

const T0 = Date.parse('2026-12-04T12:00:00Z');
const byType = (cs: Array<{ type: string }>) => new Map(cs.map((c) => [c.type, c]));
const old = pod('fw-worker-a', { created: T0 - 3_600_000, ready: true, started: T0 - 3_590_000 });

describe('computeStatus during a scale-up', () => {
  const spec = statusSpec({ workers: { replicas: 2, progressDeadline: '30s' } });
  const scaled: DeploymentView = {
    ...workerDeployment(1),
    generation: 2,
    replicas: 2,
    status: { observedGeneration: 2, replicas: 2, updatedReplicas: 2, readyReplicas: 1 },
  };
  const starting = pod('fw-worker-b', { created: T0 + 1_000, started: T0 + 2_000 });
  const run = (nowMs: number, pods: PodView[]) =>
    computeStatus(spec, scaled, ok('TopicReady'), ok('TableReady'), undefined, undefined, { pods, nowMs });

  it('keeps Ready True and not Reconciling, and asks to be judged again when the budget ends', () => {
    const s = run(T0 + 5_000, [old, starting]);
    const c = byType(s.conditions);
    expect(c.get('Ready')).toMatchObject({ status: 'True' });
    expect(c.get('Reconciling')).toMatchObject({ status: 'False' });
    expect(c.get('WorkersReady')).toMatchObject({ status: 'True', reason: WORKERS_STARTING });
    expect(s.requeueAfterMs).toBe(T0 + 31_000 - (T0 + 5_000));
    // Past the budget (the requeued reconcile): Ready False naming the pod, nothing to requeue.
    const late = run(T0 + 31_000, [old, starting]);
    expect(byType(late.conditions).get('Ready')).toMatchObject({
      status: 'False',
      reason: 'WorkersNotReady',
      message: expect.stringContaining('worker pod fw-worker-b not ready within 30s of its creation'),
    });
    expect(late.requeueAfterMs).toBeUndefined();
  });

  it('keeps status.workers.startingSince while starting, and deletes it (null) only once stored', () => {
    const first = run(T0 + 5_000, [old, starting]);
    expect(first.extra.workers?.startingSince).toBe(iso(T0 + 5_000));
    const kept = computeStatus(spec, scaled, ok('TopicReady'), ok('TableReady'), undefined, undefined, {
      pods: [old, starting],
      nowMs: T0 + 9_000,
      startingSince: iso(T0 + 5_000),
    });
    expect(kept.extra.workers?.startingSince).toBe(iso(T0 + 5_000));
    const up = { ...scaled, status: { ...scaled.status, readyReplicas: 2 } };
    const readyNow = pod('fw-worker-b', { created: T0 + 1_000, ready: true, started: T0 + 2_000 });
    const done = (stored?: string) =>
      computeStatus(spec, up, ok('TopicReady'), ok('TableReady'), undefined, undefined, {
        pods: [old, readyNow],
        nowMs: T0 + 12_000,
        startingSince: stored,
      }).extra.workers;
    expect(done(iso(T0 + 5_000))).toHaveProperty('startingSince', null);
    expect(done(undefined)).not.toHaveProperty('startingSince');
  });

  it("stays starting while the Deployment's count lags a pod the cache shows ready", () => {
    const readyNow = pod('fw-worker-b', { created: T0 + 1_000, ready: true, started: T0 + 2_000 });
    const c = byType(run(T0 + 5_000, [old, readyNow]).conditions);
    expect(c.get('WorkersReady')).toMatchObject({ status: 'True', reason: WORKERS_STARTING });
  });

  it('reports a new pod that crashes with its crash reason at once', () => {
    const crashing = toPodView({
      metadata: { name: 'fw-worker-b', namespace: 'logs', resourceVersion: '2', creationTimestamp: iso(T0) },
      status: {
        containerStatuses: [
          {
            ready: false,
            restartCount: 1,
            state: { waiting: { reason: 'CrashLoopBackOff' } },
            lastState: { terminated: { exitCode: 1, message: 'boom' } },
          },
        ],
      },
    });
    const c = byType(run(T0 + 5_000, [old, crashing]).conditions);
    expect(c.get('WorkersReady')).toMatchObject({ status: 'False', reason: 'WorkerCrashLoop' });
    expect(c.get('Stalled')).toMatchObject({ status: 'True', reason: 'WorkerCrashLoop' });
  });

  it('without the pods and the clock, judges as before (WorkersUnavailable)', () => {
    const c = byType(computeStatus(spec, scaled, ok('TopicReady'), ok('TableReady'), undefined).conditions);
    expect(c.get('WorkersReady')).toMatchObject({ status: 'False', reason: 'WorkersUnavailable' });
  });
});
