import { toPodView } from './pod-view';
import { crashLoopCondition, isCrashLooping } from './worker-pods';
import { progressConditions } from './kstatus';
import { conditionFlips, isWarning, mergeConditions } from './conditions';

const pod = (name: string, status: Record<string, unknown>) =>
  toPodView({
    metadata: { name, namespace: 'logs', resourceVersion: '1', labels: { 'logpipeline.io/pipeline': 'fw' } },
    status: { containerStatuses: [status] },
  });

describe('worker pods', () => {
  test('a crash-looping pod makes WorkersReady False with its sanitized termination message', () => {
    const crashing = pod('fw-worker-abc', {
      ready: false,
      restartCount: 3,
      state: { waiting: { reason: 'CrashLoopBackOff' } },
      lastState: {
        terminated: {
          exitCode: 1,
          reason: 'Error',
          message: `\nKafkaJSNotImplemented: Snappy compression not implemented\nstack line\n`,
        },
      },
    });
    expect(crashing.pipeline).toBe('fw');
    const c = crashLoopCondition([pod('fw-worker-ok', { ready: true, restartCount: 1 }), crashing]);
    expect(c).toEqual({
      type: 'WorkersReady',
      status: 'False',
      reason: 'WorkerCrashLoop',
      message:
        'worker pod fw-worker-abc: CrashLoopBackOff, last exit 1: KafkaJSNotImplemented: Snappy compression not implemented, 3 restarts',
    });
  });

  test('long messages are cut to 256 characters; ready or never-crashed pods are fine', () => {
    const p = pod('p', {
      ready: false,
      restartCount: 1,
      state: { running: {} },
      lastState: { terminated: { exitCode: 137, message: 'x'.repeat(1000) } },
    });
    expect(isCrashLooping(p)).toBe(true);
    expect(p.lastExit!.message).toHaveLength(256);
    expect(
      isCrashLooping(
        pod('q', { ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } }),
      ),
    ).toBe(false);
    expect(crashLoopCondition([pod('r', { ready: true, restartCount: 5 })])).toBeUndefined();
  });
});

describe('kstatus conditions', () => {
  const ready = (status: 'True' | 'False') => ({
    type: 'Ready' as const,
    status,
    reason: status === 'True' ? 'PipelineReady' : 'WorkersNotReady',
    message: 'm',
  });

  test('exactly one of Stalled and Reconciling is True while not Ready', () => {
    expect(progressConditions(ready('True')).map((c) => c.status)).toEqual(['False', 'False']);
    expect(progressConditions(ready('False')).map((c) => [c.type, c.status])).toEqual([
      ['Stalled', 'False'],
      ['Reconciling', 'True'],
    ]);
    const stalled = progressConditions(ready('False'), { reason: 'PartitionStalled', message: 'p0' });
    expect(stalled.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Stalled', 'True', 'PartitionStalled'],
      ['Reconciling', 'False', 'StalledProgress'],
    ]);
  });

  test('Stalled turning True is a Warning flip; appearing False is no Event; Reconciling never is', () => {
    const t0 = mergeConditions(undefined, progressConditions(ready('False')), 1, 'a');
    expect(conditionFlips(undefined, t0)).toEqual([]);
    const t1 = mergeConditions(
      t0,
      progressConditions(ready('False'), { reason: 'WorkerCrashLoop', message: 'x' }),
      1,
      'b',
    );
    expect(conditionFlips(t0, t1).map((f) => [f.type, f.to, f.reason])).toEqual([
      ['Stalled', 'True', 'WorkerCrashLoop'],
    ]);
    expect(isWarning('Stalled', 'True')).toBe(true);
    expect(isWarning('WorkersReady', 'False')).toBe(true);
    expect(isWarning('Stalled', 'False')).toBe(false);
  });
});
