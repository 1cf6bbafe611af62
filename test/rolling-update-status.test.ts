/**
 * Ready across a rolling update, on the real bed (apiserver, Kafka, ClickHouse, the pod runner as
 * Deployment controller and kubelet: maxSurge/maxUnavailable, Available and Progressing). A spec
 * change that changes the worker pod template replaces the workers one at a time while the old
 * ones keep consuming: Ready must stay True in every version of the LogPipeline the apiserver
 * stored, with Reconciling True while the rollout runs (GitOps tools read it first: kstatus
 * InProgress) and False once it completed (Current), and no Warning Event. A rollout whose new
 * pod cannot start (its image cannot be pulled) turns Ready False naming the pod and the
 * kubelet's reason once spec.workers.progressDeadline has passed, and recovers when reverted.
 */
import { DEFAULT_WORKER_IMAGE } from '../operator/src/api/defaults';
import type { LogPipeline } from '../operator/src/api/types';
import { imageRepository } from '../operator/src/api/worker-policy';
import { workerName } from '../operator/src/desired/labels';
import { createAutoscaledPipeline, startLoop, stopLoop, type Loop } from './autoscale-harness';
import { kstatus } from './env/kstatus';
import {
  apis,
  condition,
  createPipeline,
  createSecret,
  getPipeline,
  mergePatch,
  patchPipelineSpec,
  pipeline,
  waitFor,
} from './operator-harness';
import { describeVersions, pipelineEvents, trail, Versions } from './status-versions';

jest.setTimeout(600_000);

// Two workers and no lag-driven scaling: every pod change below comes from the template.
const TWO = { minReplicas: 2, maxReplicas: 2, lagPerReplica: 1_000_000 };
// The default worker repository (the operator's image allowlist) with a tag that does not exist.
const UNPULLABLE = `${imageRepository(DEFAULT_WORKER_IMAGE)}:does-not-exist`;
let loop: Loop | undefined;

beforeAll(async () => {
  loop = await startLoop('rolling');
  loop.runner.refusePulls(UNPULLABLE);
});

afterAll(async () => {
  await stopLoop(loop);
});

/** The Deployment as stored: its generation and whether the controller reports that rollout complete. */
async function deployment(l: Loop, name: string) {
  const d = await apis().apps.readNamespacedDeployment({ namespace: l.namespace, name: workerName(name) });
  const st = d.status ?? {};
  const complete =
    st.observedGeneration === d.metadata?.generation &&
    st.replicas === d.spec?.replicas &&
    st.updatedReplicas === d.spec?.replicas &&
    st.availableReplicas === d.spec?.replicas;
  return { generation: d.metadata?.generation ?? 0, complete };
}

/** Waits until the watch saw a version matching `pred`, and returns it. */
async function versionWhere(v: Versions, what: string, pred: (lp: LogPipeline) => boolean) {
  return waitFor(what, async () => v.seen.find(pred), 240_000);
}

const isTrue = (lp: LogPipeline, type: string) => condition(lp, type)?.status === 'True';
const settled = (lp: LogPipeline) =>
  condition(lp, 'Reconciling')?.status === 'False' &&
  condition(lp, 'WorkersReady')?.reason === 'WorkersAvailable' &&
  lp.status?.observedGeneration === lp.metadata.generation;

test('Ready stays True through a rolling update, Reconciling True beside it, no Warning Event', async () => {
  const l = loop!;
  await createAutoscaledPipeline(l, 'roll', TWO);
  const before = await waitFor(
    'two ready workers',
    async () => {
      const lp = await getPipeline(l.namespace, 'roll');
      return lp && lp.status?.workers?.ready === 2 && settled(lp) ? lp : undefined;
    },
    180_000,
  );
  const known = new Set((await pipelineEvents(l.namespace, 'roll')).map((e) => e.metadata?.name));
  const podsBefore = l.runner.podsOf(l.namespace, workerName('roll')).map((p) => p.logFile);
  const generationBefore = (await deployment(l, 'roll')).generation;
  const versions = await Versions.from(l.namespace, before);

  // A batch setting is part of the worker config: its hash is in the pod template.
  await patchPipelineSpec(l.namespace, 'roll', { workers: { batch: { maxDelay: '400ms' } } });
  await versionWhere(versions, 'Reconciling True (the rollout)', (lp) => isTrue(lp, 'Reconciling'));
  await waitFor('the Deployment rolled out', async () => {
    const d = await deployment(l, 'roll');
    return d.generation > generationBefore && d.complete;
  });
  const done = await versionWhere(
    versions,
    'Reconciling False after the rollout',
    (lp) =>
      settled(lp) && versions.seen.slice(0, versions.seen.indexOf(lp)).some((v) => isTrue(v, 'Reconciling')),
  );
  const seen = await versions.through(done.metadata.resourceVersion);
  console.log(`rolling update, every stored version:\n${describeVersions(seen)}`);

  // Every worker was replaced, and old and new ran side by side (maxSurge 1: 3 pods, 2 and more ready).
  const podsAfter = l.runner.podsOf(l.namespace, workerName('roll')).map((p) => p.logFile);
  expect(podsAfter.filter((f) => podsBefore.includes(f))).toEqual([]);
  expect(seen.some((lp) => lp.status?.workers?.current === 3)).toBe(true);

  expect(trail(seen, 'Ready')).toEqual(['True PipelineReady']);
  expect(trail(seen, 'Reconciling')).toEqual([
    'False PipelineReady',
    'True RollingUpdate',
    'False PipelineReady',
  ]);
  expect(trail(seen, 'WorkersReady')).toEqual([
    'True WorkersAvailable',
    'True RollingUpdate',
    'True WorkersAvailable',
  ]);
  expect(trail(seen, 'Stalled')).toEqual(['False NoStall']);
  expect(seen.map((lp) => condition(lp, 'Reconciling')?.message)).toContainEqual(
    expect.stringMatching(
      /^worker Deployment roll-worker: rolling update: [12] of 2 workers updated, [23] of 3 ready$/,
    ),
  );
  const fresh = (await pipelineEvents(l.namespace, 'roll')).filter((e) => !known.has(e.metadata?.name));
  expect(fresh.filter((e) => e.type === 'Warning').map((e) => `${e.reason}: ${e.message}`)).toEqual([]);

  // GitOps: InProgress from the spec change until the rollout completed, Current before and after.
  const verdicts: string[] = [];
  for (const lp of [before, ...seen]) {
    const v = kstatus(lp).status;
    if (verdicts[verdicts.length - 1] !== v) verdicts.push(v);
  }
  expect(verdicts).toEqual(['Current', 'InProgress', 'Current']);
  for (const lp of seen.filter((v) => isTrue(v, 'Reconciling')))
    expect(kstatus(lp).status).toBe('InProgress');
});

test('a rollout whose new pod cannot pull its image is False naming it after the budget, then recovers', async () => {
  const l = loop!;
  const before = await waitFor('roll settled', async () => {
    const lp = await getPipeline(l.namespace, 'roll');
    return lp && settled(lp) && lp.status?.workers?.ready === 2 ? lp : undefined;
  });
  const known = new Set((await pipelineEvents(l.namespace, 'roll')).map((e) => e.metadata?.name));
  const versions = await Versions.from(l.namespace, before);
  await patchPipelineSpec(l.namespace, 'roll', { workers: { image: UNPULLABLE, progressDeadline: '20s' } });
  const failed = await versionWhere(
    versions,
    'WorkersReady False ImagePullBackOff',
    (lp) => condition(lp, 'WorkersReady')?.reason === 'ImagePullBackOff',
  ).catch((err: Error) => {
    throw new Error(`${err.message}; stored versions:\n${describeVersions(versions.seen)}`);
  });
  expect(condition(failed, 'WorkersReady')).toMatchObject({
    status: 'False',
    message: expect.stringMatching(
      /^rolling update: 1 of 2 workers updated, 2 of 3 ready; worker pod roll-worker-\S+ still ImagePullBackOff after 20s: Back-off pulling image "\S+:does-not-exist"$/,
    ),
  });
  expect(condition(failed, 'Ready')).toMatchObject({ status: 'False', reason: 'WorkersNotReady' });
  const seen = await versions.through(failed.metadata.resourceVersion);
  // Tolerated first (the old workers serve; the cause named), False once the budget ran out.
  expect(trail(seen, 'WorkersReady')).toEqual([
    'True WorkersAvailable',
    'True RollingUpdate',
    'False ImagePullBackOff',
  ]);
  expect(seen.map((lp) => condition(lp, 'WorkersReady')?.message)).toContainEqual(
    expect.stringMatching(
      /^rolling update: 1 of 2 workers updated, 2 of 3 ready \(worker pod roll-worker-\S+: ImagePullBackOff\)$/,
    ),
  );
  const warning = await waitFor('the Warning Event of Ready False', async () =>
    (await pipelineEvents(l.namespace, 'roll')).find(
      (e) => !known.has(e.metadata?.name) && e.type === 'Warning' && e.reason === 'WorkersNotReady',
    ),
  );
  expect(warning.message).toContain('ImagePullBackOff');

  // Reverted: the old template is the current one again, the pod that never pulled goes away.
  await patchPipelineSpec(l.namespace, 'roll', { workers: { image: null, progressDeadline: null } });
  const recovered = await waitFor(
    'Ready again with two workers',
    async () => {
      const lp = await getPipeline(l.namespace, 'roll');
      return lp && settled(lp) && lp.status?.workers?.ready === 2 && lp.status.workers.current === 2
        ? lp
        : undefined;
    },
    180_000,
  );
  expect(condition(recovered, 'Ready')).toMatchObject({ status: 'True' });
});

test('a Secret rotation rolls fixed workers with Ready True, Scaling False and no Warning Event', async () => {
  const l = loop!;
  const ch = l.bed.clickhouse!;
  await createSecret(l.namespace, 'ch-rotating', { username: ch.username, password: ch.password });
  await createPipeline({
    ...pipeline(l.namespace, 'rotate'),
    spec: {
      kafka: {
        bootstrapServers: [l.bed.kafka!.bootstrap],
        topic: { name: `${l.namespace}.rotate`, partitions: 2 },
      },
      clickhouse: {
        url: ch.url,
        credentialsSecretRef: { name: 'ch-rotating' },
        database: l.database,
        table: 'rotate',
      },
      workers: { replicas: 1, batch: { maxDelay: '300ms' } },
      deletionPolicy: 'Delete',
    },
  });
  const before = await waitFor(
    'rotate Ready with its worker',
    async () => {
      const lp = await getPipeline(l.namespace, 'rotate');
      return lp && settled(lp) && lp.status?.workers?.ready === 1 && lp.status.workers.current === 1
        ? lp
        : undefined;
    },
    180_000,
  );
  const known = new Set((await pipelineEvents(l.namespace, 'rotate')).map((e) => e.metadata?.name));
  const versions = await Versions.from(l.namespace, before);
  // The Secret changes (a rotation): its version is in the pod template, so the worker rolls.
  await apis().core.patchNamespacedSecret(
    { namespace: l.namespace, name: 'ch-rotating', body: { stringData: { rotated: String(Date.now()) } } },
    mergePatch,
  );
  await versionWhere(versions, 'Reconciling True (the rollout)', (lp) => isTrue(lp, 'Reconciling'));
  const done = await versionWhere(
    versions,
    'Reconciling False after the rollout',
    (lp) =>
      settled(lp) &&
      lp.status?.workers?.current === 1 &&
      versions.seen.slice(0, versions.seen.indexOf(lp)).some((v) => isTrue(v, 'Reconciling')),
  );
  const seen = await versions.through(done.metadata.resourceVersion);
  console.log(`secret rotation, every stored version:\n${describeVersions(seen)}`);
  expect(seen.some((lp) => lp.status?.workers?.current === 2)).toBe(true);
  // No spec change: the first stored version is already the operator's, so `before` leads the trail.
  expect(trail([before, ...seen], 'Ready')).toEqual(['True PipelineReady']);
  expect(trail([before, ...seen], 'Reconciling')).toEqual([
    'False PipelineReady',
    'True RollingUpdate',
    'False PipelineReady',
  ]);
  expect(trail([before, ...seen], 'Scaling')).toEqual(['False AutoscalingDisabled']);
  const fresh = (await pipelineEvents(l.namespace, 'rotate')).filter((e) => !known.has(e.metadata?.name));
  expect(fresh.filter((e) => e.type === 'Warning').map((e) => `${e.reason}: ${e.message}`)).toEqual([]);
});
