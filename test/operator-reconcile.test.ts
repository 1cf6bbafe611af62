/**
 * The operator against the real kube-apiserver: children with the right fields and owners, status
 * conditions, config-hash rollouts, repair of edited/deleted children, recovery from a missing
 * Secret, the replicas handover to the autoscaler, and the deletion flow.
 */
import { createHash } from 'node:crypto';
import type { V1Deployment } from '@kubernetes/client-node';
import type { Manager } from '../operator/src/controller/manager';
import {
  apis,
  condition,
  createNamespace,
  createPipeline,
  createSecret,
  deleteNamespace,
  deletePipeline,
  getPipeline,
  jsonPatch,
  maybe,
  mergePatch,
  patchPipelineSpec,
  pipeline,
  setDeploymentStatus,
  startManager,
  waitFor,
} from './operator-harness';

jest.setTimeout(90_000);

let ns: string;
let manager: Manager;

beforeAll(async () => {
  ns = await createNamespace('op-reconcile');
  manager = startManager(ns);
  await waitFor('caches synced', async () => manager.isReady());
});

afterAll(async () => {
  await manager?.stop();
  if (ns) await deleteNamespace(ns);
});

const hashOf = (d: V1Deployment | undefined) =>
  d?.spec?.template?.metadata?.annotations?.['logpipeline.io/config-hash'];

describe('LogPipeline reconcile', () => {
  let uid: string;

  it('creates ConfigMap, Deployment and PDB owned by the pipeline, and reports status', async () => {
    await createSecret(ns, 'ch-creds', { username: 'writer', password: 's3cret' });
    const created = await createPipeline(
      pipeline(ns, 'fw', {
        clickhouse: {
          url: 'http://ch:8123',
          database: 'logs',
          table: 'fw',
          credentialsSecretRef: { name: 'ch-creds' },
        },
        workers: { replicas: 2 },
      }),
    );
    uid = created.metadata.uid!;
    const { apps, core, policy } = apis();
    const dep = await waitFor('Deployment fw-worker', () =>
      maybe(apps.readNamespacedDeployment({ namespace: ns, name: 'fw-worker' })),
    );
    const cm = await waitFor('ConfigMap', () =>
      maybe(core.readNamespacedConfigMap({ namespace: ns, name: 'fw-worker-config' })),
    );
    const pdb = await waitFor('PDB', () =>
      maybe(policy.readNamespacedPodDisruptionBudget({ namespace: ns, name: 'fw-worker' })),
    );

    for (const obj of [dep, cm, pdb]) {
      expect(obj.metadata?.ownerReferences).toEqual([
        {
          apiVersion: 'logpipeline.io/v1alpha1',
          kind: 'LogPipeline',
          name: 'fw',
          uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      expect(obj.metadata?.labels?.['logpipeline.io/pipeline']).toBe('fw');
      expect(obj.metadata?.finalizers).toBeUndefined();
    }
    expect(dep.spec?.replicas).toBe(2);
    const c = dep.spec!.template.spec!.containers[0];
    expect(c.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(c.env?.find((e) => e.name === 'LP_CLICKHOUSE_PASSWORD')?.valueFrom?.secretKeyRef).toMatchObject({
      name: 'ch-creds',
      key: 'password',
    });
    const json = cm.data!['config.json'];
    expect(JSON.parse(json).kafka.topic).toBe(`${ns}.fw`);
    expect(json).not.toContain('s3cret');
    expect(hashOf(dep)).toBe(createHash('sha256').update(json).digest('hex'));
    expect(pdb.spec?.maxUnavailable).toBe(1);
    // Managed by exactly one field manager.
    expect(dep.metadata?.managedFields?.filter((m) => m.operation === 'Apply').map((m) => m.manager)).toEqual(
      ['logpipeline-operator'],
    );

    const lp = await waitFor('status with conditions', async () => {
      const p = await getPipeline(ns, 'fw');
      return condition(p, 'WorkersReady') ? p : undefined;
    });
    expect(lp.metadata.finalizers).toContain('logpipeline.io/external-resources');
    expect(lp.status?.observedGeneration).toBe(lp.metadata.generation);
    expect(condition(lp, 'WorkersReady')).toMatchObject({
      status: 'Unknown',
      reason: 'RolloutPending',
      observedGeneration: lp.metadata.generation,
    });
    expect(condition(lp, 'TopicReady')).toMatchObject({ status: 'Unknown', reason: 'NotConfigured' });
    expect(condition(lp, 'TableReady')).toMatchObject({ status: 'Unknown', reason: 'NotConfigured' });
    // No Deployment controller runs in the bed: no pod exists yet, so the workers are scaling up.
    expect(condition(lp, 'Scaling')).toMatchObject({
      status: 'True',
      reason: 'ScalingUp',
      message: '0 -> 2 workers (autoscaling off)',
    });
    expect(lp.status?.workers).toMatchObject({
      desired: 2,
      selector: 'app.kubernetes.io/name=logpipeline-worker,logpipeline.io/pipeline=fw',
    });
  });

  it('turns Ready True once the Deployment reports its workers ready', async () => {
    const dep = await apis().apps.readNamespacedDeployment({ namespace: ns, name: 'fw-worker' });
    const before = condition(await getPipeline(ns, 'fw'), 'Ready');
    await setDeploymentStatus(ns, 'fw-worker', {
      observedGeneration: dep.metadata!.generation,
      replicas: 2,
      updatedReplicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
    });
    const lp = await waitFor('Ready True', async () => {
      const p = await getPipeline(ns, 'fw');
      return condition(p, 'Ready')?.status === 'True' ? p : undefined;
    });
    expect(condition(lp, 'WorkersReady')).toMatchObject({
      status: 'True',
      reason: 'WorkersAvailable',
      message: '2 of 2 workers ready',
    });
    expect(lp.status?.workers).toMatchObject({ desired: 2, current: 2, ready: 2 });
    expect(before?.status).toBe('Unknown');
    expect(Date.parse(condition(lp, 'Ready')!.lastTransitionTime)).toBeGreaterThanOrEqual(
      Date.parse(before!.lastTransitionTime),
    );
    expect(condition(lp, 'Scaling')).toMatchObject({ status: 'False', reason: 'AutoscalingDisabled' });
    // Unknown -> True once the rollout is done is no Event: nothing failed on the way and the
    // Ready condition says it (issue 18; a recovery from False is one, status/conditions.ts).
    await manager.reconciler.flushEvents();
    const events = await apis().core.listNamespacedEvent({
      namespace: ns,
      fieldSelector: 'involvedObject.name=fw',
    });
    expect(events.items.filter((e) => e.reason === 'PipelineReady')).toEqual([]);
  });

  it('rolls the pod template when the spec changes the config', async () => {
    const { apps, core } = apis();
    const oldHash = hashOf(await apps.readNamespacedDeployment({ namespace: ns, name: 'fw-worker' }));
    const updated = await patchPipelineSpec(ns, 'fw', { parser: { timezone: 'Europe/Istanbul' } });
    const dep = await waitFor('new config hash', async () => {
      const d = await apps.readNamespacedDeployment({ namespace: ns, name: 'fw-worker' });
      return hashOf(d) !== oldHash ? d : undefined;
    });
    const cm = await core.readNamespacedConfigMap({ namespace: ns, name: 'fw-worker-config' });
    expect(JSON.parse(cm.data!['config.json']).parser.timezone).toBe('Europe/Istanbul');
    expect(hashOf(dep)).toBe(createHash('sha256').update(cm.data!['config.json']).digest('hex'));
    await waitFor(
      'observedGeneration',
      async () => (await getPipeline(ns, 'fw'))?.status?.observedGeneration === updated.metadata.generation,
    );
  });

  it('repairs a Deployment edited by someone else and reports it', async () => {
    const { apps, core } = apis();
    await apps.patchNamespacedDeployment(
      {
        namespace: ns,
        name: 'fw-worker',
        body: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'evil:latest' }],
        fieldManager: 'kubectl-edit',
      },
      jsonPatch,
    );
    await waitFor('image restored', async () => {
      const d = await apps.readNamespacedDeployment({ namespace: ns, name: 'fw-worker' });
      return d.spec!.template.spec!.containers[0].image === 'ghcr.io/logpipeline/logpipeline-worker:0.1.0';
    });
    await waitFor('ChildRepaired event', async () => {
      const list = await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=fw' });
      return list.items.some(
        (e) => e.reason === 'ChildRepaired' && e.message?.includes('Deployment/fw-worker'),
      );
    });
  });

  it('recreates a deleted ConfigMap and PodDisruptionBudget', async () => {
    const { core, policy } = apis();
    const oldCm = await core.readNamespacedConfigMap({ namespace: ns, name: 'fw-worker-config' });
    const oldPdb = await policy.readNamespacedPodDisruptionBudget({ namespace: ns, name: 'fw-worker' });
    await core.deleteNamespacedConfigMap({ namespace: ns, name: 'fw-worker-config' });
    await policy.deleteNamespacedPodDisruptionBudget({ namespace: ns, name: 'fw-worker' });
    const cm = await waitFor('ConfigMap recreated', async () => {
      const c = await maybe(core.readNamespacedConfigMap({ namespace: ns, name: 'fw-worker-config' }));
      return c && c.metadata!.uid !== oldCm.metadata!.uid ? c : undefined;
    });
    expect(cm.data!['config.json']).toBe(oldCm.data!['config.json']);
    await waitFor('PDB recreated', async () => {
      const p = await maybe(policy.readNamespacedPodDisruptionBudget({ namespace: ns, name: 'fw-worker' }));
      return p && p.metadata!.uid !== oldPdb.metadata!.uid;
    });
  });

  it('reports a missing Secret by name and recovers when it is created', async () => {
    await createPipeline(
      pipeline(ns, 'late', {
        clickhouse: {
          url: 'http://ch:8123',
          database: 'logs',
          table: 'late',
          credentialsSecretRef: { name: 'late-creds' },
        },
      }),
    );
    const lp = await waitFor('SecretNotFound', async () => {
      const p = await getPipeline(ns, 'late');
      return condition(p, 'Ready')?.reason === 'SecretNotFound' ? p : undefined;
    });
    expect(condition(lp, 'Ready')).toMatchObject({ status: 'False' });
    expect(condition(lp, 'Ready')!.message).toContain('"late-creds"');
    expect(
      await maybe(apis().apps.readNamespacedDeployment({ namespace: ns, name: 'late-worker' })),
    ).toBeUndefined();

    await createSecret(ns, 'late-creds', { username: 'u', password: 'p' });
    await waitFor(
      'Deployment after the Secret appeared',
      () => maybe(apis().apps.readNamespacedDeployment({ namespace: ns, name: 'late-worker' })),
      10_000,
    );
    await waitFor(
      'SecretNotFound cleared',
      async () => condition(await getPipeline(ns, 'late'), 'Ready')?.reason !== 'SecretNotFound',
    );
  });

  it('reports columns the worker cannot write as InvalidColumns, deploys no worker, recovers when fixed', async () => {
    // Admission cannot parse types, so an IPv4 column fed from a port is stored; the operator's
    // compile of the worker's column plan must refuse it before any worker crash-loops on it.
    const columns = [{ name: 'sport_ip', type: 'IPv4', source: 'src_port' }];
    await createPipeline(
      pipeline(ns, 'badcols', { clickhouse: { ...pipeline(ns, 'badcols').spec.clickhouse, columns } }),
    );
    const lp = await waitFor('InvalidColumns', async () => {
      const p = await getPipeline(ns, 'badcols');
      return condition(p, 'Ready')?.reason === 'InvalidColumns' ? p : undefined;
    });
    expect(condition(lp, 'Ready')).toMatchObject({ status: 'False' });
    expect(condition(lp, 'Ready')!.message).toContain('spec.clickhouse.columns[0].source');
    expect(condition(lp, 'Ready')!.message).toContain('cannot be written as IPv4');
    expect(condition(lp, 'TableReady')).toMatchObject({ status: 'False', reason: 'InvalidColumns' });
    expect(condition(lp, 'Stalled')).toMatchObject({ status: 'True', reason: 'InvalidColumns' });
    const events = await waitFor('an InvalidColumns event', async () => {
      const list = await apis().core.listNamespacedEvent({
        namespace: ns,
        fieldSelector: 'involvedObject.name=badcols',
      });
      return list.items.find((e) => e.reason === 'InvalidColumns') ? list.items : undefined;
    });
    expect(events.find((e) => e.reason === 'InvalidColumns')?.type).toBe('Warning');
    expect(
      await maybe(apis().apps.readNamespacedDeployment({ namespace: ns, name: 'badcols-worker' })),
    ).toBeUndefined();

    await patchPipelineSpec(ns, 'badcols', {
      clickhouse: { columns: [{ name: 'sport', type: 'UInt16', source: 'src_port' }] },
    });
    await waitFor('Deployment after the columns were fixed', () =>
      maybe(apis().apps.readNamespacedDeployment({ namespace: ns, name: 'badcols-worker' })),
    );
    await waitFor(
      'InvalidColumns cleared',
      async () => condition(await getPipeline(ns, 'badcols'), 'Ready')?.reason !== 'InvalidColumns',
    );
  });

  it('hands spec.replicas to the autoscaler when autoscaling is turned on, without a reset to 1', async () => {
    const { apps } = apis();
    await createPipeline(pipeline(ns, 'auto', { workers: { replicas: 3 } }));
    await waitFor(
      '3 replicas',
      async () =>
        (await maybe(apps.readNamespacedDeployment({ namespace: ns, name: 'auto-worker' })))?.spec
          ?.replicas === 3,
    );
    await patchPipelineSpec(ns, 'auto', {
      workers: { replicas: null, autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 5 } },
    });
    const dep = await waitFor('replicas owned by the autoscaler only', async () => {
      const d = await apps.readNamespacedDeployment({ namespace: ns, name: 'auto-worker' });
      const owners = (d.metadata!.managedFields ?? [])
        .filter((m) => JSON.stringify(m.fieldsV1 ?? {}).includes('"f:replicas"'))
        .map((m) => m.manager);
      return owners.length === 1 && owners[0] === 'logpipeline-autoscaler' ? d : undefined;
    });
    expect(dep.spec!.replicas).toBe(3);
    // Outside [min, max] (e.g. someone scaled by hand) -> clamped back.
    await apps.patchNamespacedDeploymentScale(
      { namespace: ns, name: 'auto-worker', body: { spec: { replicas: 9 } }, fieldManager: 'kubectl-scale' },
      mergePatch,
    );
    await waitFor(
      'clamped to maxReplicas',
      async () =>
        (await apps.readNamespacedDeployment({ namespace: ns, name: 'auto-worker' })).spec!.replicas === 5,
    );
  });

  it('releases the finalizer on delete (deletionPolicy Retain)', async () => {
    await deletePipeline(ns, 'fw');
    await waitFor('pipeline gone', async () => (await getPipeline(ns, 'fw')) === undefined);
    // The bed's garbage collector removes the children through their owner reference (uid).
    expect(uid).toBeTruthy();
    await waitFor(
      'children garbage-collected',
      async () =>
        (await maybe(apis().apps.readNamespacedDeployment({ namespace: ns, name: 'fw-worker' }))) ===
        undefined,
      60_000,
    );
  });
});

describe('external parts (extension point)', () => {
  it('records part outcomes in status and calls delete with the recorded identity on deletionPolicy Delete', async () => {
    // A trivial registered part (not a stand-in for Kafka: it only records what the reconciler
    // hands it), to check the contract between the reconciler and the parts the lead wires in.
    const deleted: unknown[] = [];
    manager.reconciler.registerPart({
      name: 'Topic',
      ensure: async (spec) => ({
        status: 'True',
        reason: 'TopicReady',
        message: `topic ${spec.kafka.topic.name} ready`,
        observed: { name: spec.kafka.topic.name, partitions: 6, clusterId: 'cluster-1' },
      }),
      delete: async (spec, recorded) => {
        deleted.push({ topic: spec.kafka.topic.name, recorded: recorded?.topic });
      },
    });
    await createPipeline({
      ...pipeline(ns, 'parts'),
      spec: { ...pipeline(ns, 'parts').spec, deletionPolicy: 'Delete' },
    });
    const lp = await waitFor('TopicReady from the part', async () => {
      const p = await getPipeline(ns, 'parts');
      return condition(p, 'TopicReady')?.status === 'True' ? p : undefined;
    });
    expect(condition(lp, 'TopicReady')).toMatchObject({
      reason: 'TopicReady',
      message: `topic ${ns}.parts ready`,
    });
    expect(lp.status?.topic).toEqual({ name: `${ns}.parts`, partitions: 6, clusterId: 'cluster-1' });
    expect(condition(lp, 'TableReady')).toMatchObject({ status: 'Unknown', reason: 'NotConfigured' });

    await deletePipeline(ns, 'parts');
    await waitFor('pipeline gone', async () => (await getPipeline(ns, 'parts')) === undefined);
    expect(deleted).toEqual([
      { topic: `${ns}.parts`, recorded: { name: `${ns}.parts`, partitions: 6, clusterId: 'cluster-1' } },
    ]);
    const events = await apis().core.listNamespacedEvent({
      namespace: ns,
      fieldSelector: 'involvedObject.name=parts',
    });
    expect(events.items.map((e) => e.reason)).toContain('TopicDeleted');
  });
});
