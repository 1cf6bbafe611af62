/**
 * Ready across an autoscaler scale-up, on the real bed (apiserver, Kafka, ClickHouse, the pod
 * runner as Deployment controller and kubelet). While the new worker starts, the pipeline keeps
 * processing: Ready must stay True the whole time, judged on every version of the LogPipeline the
 * apiserver stored (a watch, not samples) and on the Events. A new pod that cannot start (no room
 * on the node: Pending, Unschedulable) is tolerated only for spec.workers.progressDeadline; then
 * WorkersReady and Ready are False naming the cause, with a Warning Event, and they recover once
 * the pod is placed and ready.
 */
import type { LogPipeline } from '../operator/src/api/types';
import { workerName } from '../operator/src/desired/labels';
import { createAutoscaledPipeline, startLoop, stopLoop, type Loop } from './autoscale-harness';
import { condition, getPipeline, patchPipelineSpec, waitFor } from './operator-harness';
import { pipelineEvents, trail, Versions } from './status-versions';

jest.setTimeout(600_000);

// No lag ever asks for more workers: the scale-ups below come from minReplicas alone.
const IDLE = { minReplicas: 1, maxReplicas: 3, lagPerReplica: 1_000_000 };
let loop: Loop | undefined;

beforeAll(async () => {
  loop = await startLoop('scale-up');
});

afterAll(async () => {
  await stopLoop(loop);
});

/** Waits until the pipeline's WorkersReady matches `pred`. */
async function workersUntil(l: Loop, name: string, what: string, pred: (lp: LogPipeline) => boolean) {
  return waitFor(
    what,
    async () => {
      const lp = await getPipeline(l.namespace, name);
      return lp && pred(lp) ? lp : undefined;
    },
    180_000,
  );
}

const workersReady = (lp: LogPipeline, n: number) =>
  lp.status?.workers?.ready === n && condition(lp, 'WorkersReady')?.reason === 'WorkersAvailable';

test('Ready stays True while a scale-up starts its new worker and through the scale-down, with no Warning Event', async () => {
  const l = loop!;
  await createAutoscaledPipeline(l, 'up', IDLE);
  const before = await workersUntil(l, 'up', 'one ready worker', (lp) => workersReady(lp, 1));
  const known = new Set((await pipelineEvents(l.namespace, 'up')).map((e) => e.metadata?.name));
  const versions = await Versions.from(l.namespace, before);

  await patchPipelineSpec(l.namespace, 'up', { workers: { autoscaling: { minReplicas: 2 } } });
  const after = await workersUntil(l, 'up', 'two ready workers', (lp) => workersReady(lp, 2));
  const seen = await versions.through(after.metadata.resourceVersion);

  // The new worker was seen starting, and Ready never left True in any stored version.
  expect(trail(seen, 'WorkersReady')).toEqual([
    'True WorkersAvailable',
    'True WorkersStarting',
    'True WorkersAvailable',
  ]);
  expect(seen.map((lp) => condition(lp, 'WorkersReady')?.message)).toContain(
    '1 of 2 workers ready, 1 starting',
  );
  expect(trail(seen, 'Ready')).toEqual(['True PipelineReady']);
  expect(trail(seen, 'Reconciling')).toEqual(['False PipelineReady']);
  expect(trail(seen, 'Stalled')).toEqual(['False NoStall']);
  const fresh = (await pipelineEvents(l.namespace, 'up')).filter((e) => !known.has(e.metadata?.name));
  expect(fresh.filter((e) => e.type === 'Warning').map((e) => `${e.reason}: ${e.message}`)).toEqual([]);

  // And back down to one worker (maxReplicas clamps at once): Ready stays True through that too.
  const down = await Versions.from(l.namespace, after);
  await patchPipelineSpec(l.namespace, 'up', {
    workers: { autoscaling: { minReplicas: 1, maxReplicas: 1 } },
  });
  const one = await workersUntil(
    l,
    'up',
    'one worker left',
    (lp) => workersReady(lp, 1) && lp.status?.workers?.current === 1,
  );
  const shrinking = await down.through(one.metadata.resourceVersion);
  expect(trail(shrinking, 'Ready')).toEqual(['True PipelineReady']);
  expect(trail(shrinking, 'WorkersReady')).toEqual(['True WorkersAvailable']);
  expect(shrinking.some((lp) => lp.status?.workers?.startingSince)).toBe(false);
});

test('a new worker that cannot be scheduled is False with the cause after the budget, then recovers', async () => {
  const l = loop!;
  await createAutoscaledPipeline(l, 'full', IDLE);
  const before = await workersUntil(l, 'full', 'one ready worker', (lp) => workersReady(lp, 1));
  const known = new Set((await pipelineEvents(l.namespace, 'full')).map((e) => e.metadata?.name));
  // The node is full: every pod placed so far stays, a new one waits Pending (Unschedulable).
  const placed =
    l.runner.count(l.namespace, workerName('up')) + l.runner.count(l.namespace, workerName('full'));
  l.runner.setMaxPods(placed);
  const versions = await Versions.from(l.namespace, before);
  try {
    await patchPipelineSpec(l.namespace, 'full', {
      workers: { progressDeadline: '20s', autoscaling: { minReplicas: 2 } },
    });
    const failed = await workersUntil(
      l,
      'full',
      'WorkersReady False Unschedulable',
      (lp) => condition(lp, 'WorkersReady')?.reason === 'Unschedulable',
    );
    expect(condition(failed, 'WorkersReady')).toMatchObject({
      status: 'False',
      message: expect.stringMatching(
        /^1 of 2 workers ready; worker pod full-worker-\S+ not scheduled within 20s: 0\/1 nodes are available: 1 Too many pods\.$/,
      ),
    });
    expect(condition(failed, 'Ready')).toMatchObject({ status: 'False', reason: 'WorkersNotReady' });
    // Tolerated first (True, the cause named), False only once the budget ran out.
    const seen = await versions.through(failed.metadata.resourceVersion);
    expect(trail(seen, 'WorkersReady')).toEqual([
      'True WorkersAvailable',
      'True WorkersStarting',
      'False Unschedulable',
    ]);
    expect(seen.map((lp) => condition(lp, 'WorkersReady')?.message)).toContainEqual(
      expect.stringMatching(
        /^1 of 2 workers ready, 1 starting \(worker pod full-worker-\S+: Unschedulable\)$/,
      ),
    );
    const warning = await waitFor('the Warning Event of Ready False', async () =>
      (await pipelineEvents(l.namespace, 'full')).find(
        (e) => !known.has(e.metadata?.name) && e.type === 'Warning' && e.reason === 'WorkersNotReady',
      ),
    );
    expect(warning.message).toContain('0/1 nodes are available: 1 Too many pods.');
  } finally {
    l.runner.setMaxPods(undefined);
  }
  // Room again: the pod is placed, starts and becomes ready.
  const recovered = await workersUntil(l, 'full', 'two ready workers', (lp) => workersReady(lp, 2));
  expect(condition(recovered, 'Ready')).toMatchObject({ status: 'True' });
});
