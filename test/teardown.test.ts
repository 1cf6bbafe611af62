/**
 * Teardown on a bed that behaves like a cluster (kube-controller-manager with the garbage
 * collector and namespace controllers): ownerReferences cascade, a deleted LogPipeline's worker
 * Deployment and ConfigMap are garbage-collected, and a namespace deletion finishes in bounded
 * time even when the Secrets the finalizer needs for deletionPolicy Delete are already gone
 * (Delete falls back to Retain and says what was left behind).
 */
import { createClient } from '@clickhouse/client';
import type { Manager } from '../operator/src/controller/manager';
import { registerExternalParts, type ExternalClients } from '../operator/src/controller/parts';
import { createLogger } from '../common/src/log';
import { readTestBed } from './env/testbed';
import {
  apis,
  createNamespace,
  createPipeline,
  createSecret,
  condition,
  deleteNamespace,
  deletePipeline,
  getPipeline,
  maybe,
  pipeline,
  startManager,
  waitFor,
} from './operator-harness';

jest.setTimeout(180_000);

const bed = readTestBed();
const ch = createClient({
  url: bed.clickhouse!.url,
  username: bed.clickhouse!.username,
  password: bed.clickhouse!.password,
});
const DB = `teardown_${process.pid}`;

async function tableExists(table: string): Promise<boolean> {
  const rs = await ch.query({
    query: 'SELECT count() AS n FROM system.tables WHERE database = {db:String} AND name = {t:String}',
    query_params: { db: DB, t: table },
    format: 'JSONEachRow',
  });
  return Number(((await rs.json()) as Array<{ n: string }>)[0].n) === 1;
}

const namespaceGone = (name: string) => async () =>
  (await maybe(apis().core.readNamespace({ name }))) === undefined;

afterAll(async () => {
  await ch.command({ query: `DROP DATABASE IF EXISTS ${DB}` });
  await ch.close();
});

it('garbage-collects dependents by ownerReference and finishes a namespace deletion', async () => {
  const { core } = apis();
  const ns = await createNamespace('kcm');
  const owner = await core.createNamespacedConfigMap({
    namespace: ns,
    body: { metadata: { name: 'owner' } },
  });
  await core.createNamespacedConfigMap({
    namespace: ns,
    body: {
      metadata: {
        name: 'dependent',
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid! }],
      },
    },
  });
  await core.deleteNamespacedConfigMap({ namespace: ns, name: 'owner' });
  await waitFor(
    'dependent ConfigMap garbage-collected',
    async () =>
      (await maybe(core.readNamespacedConfigMap({ namespace: ns, name: 'dependent' }))) === undefined,
    60_000,
  );
  await core.createNamespacedSecret({
    namespace: ns,
    body: { metadata: { name: 's' }, stringData: { a: 'b' } },
  });
  await core.deleteNamespace({ name: ns });
  await waitFor(`namespace ${ns} deleted by the namespace controller`, namespaceGone(ns), 60_000);
});

describe('LogPipeline deletion', () => {
  let ns: string;
  let manager: Manager;

  beforeAll(async () => {
    ns = await createNamespace('gc');
    manager = startManager(ns);
    await waitFor('caches synced', async () => manager.isReady());
  });

  afterAll(async () => {
    await manager?.stop();
    if (ns) await deleteNamespace(ns);
  });

  it('garbage-collects the worker Deployment, ConfigMap and PDB of a deleted pipeline', async () => {
    const { apps, core, policy } = apis();
    await createPipeline(pipeline(ns, 'fw', { workers: { replicas: 1 } }));
    await waitFor('worker Deployment created', () =>
      maybe(apps.readNamespacedDeployment({ namespace: ns, name: 'fw-worker' })),
    );
    await deletePipeline(ns, 'fw');
    await waitFor(
      'pipeline gone (finalizer released)',
      async () => (await getPipeline(ns, 'fw')) === undefined,
    );
    await waitFor(
      'children garbage-collected',
      async () =>
        (await maybe(apps.readNamespacedDeployment({ namespace: ns, name: 'fw-worker' }))) === undefined &&
        (await maybe(core.readNamespacedConfigMap({ namespace: ns, name: 'fw-worker-config' }))) ===
          undefined &&
        (await maybe(policy.readNamespacedPodDisruptionBudget({ namespace: ns, name: 'fw-worker' }))) ===
          undefined,
      60_000,
    );
  });
});

describe('namespace deletion with deletionPolicy Delete', () => {
  const logs: string[] = [];
  let managers: Array<{ manager: Manager; external: ExternalClients }> = [];

  const start = (ns: string) => {
    const manager = startManager(ns, {
      log: createLogger({ level: 'info', write: (line) => void logs.push(line) }),
    });
    const external = registerExternalParts(manager);
    managers.push({ manager, external });
    return manager;
  };
  const stopAll = async () => {
    for (const m of managers) {
      await m.manager.stop();
      await m.external.close();
    }
    managers = [];
  };

  afterAll(stopAll);

  it('finishes although the Secrets are already gone: Delete falls back to Retain, naming what it left', async () => {
    const ns = await createNamespace('nsdel');
    await createSecret(ns, 'ch', { username: bed.clickhouse!.username, password: bed.clickhouse!.password });
    const manager = start(ns);
    await waitFor('caches synced', async () => manager.isReady());
    await createPipeline({
      ...pipeline(ns, 'fw'),
      spec: {
        kafka: { bootstrapServers: [bed.kafka!.bootstrap], topic: { name: `${ns}.fw`, partitions: 1 } },
        clickhouse: {
          url: bed.clickhouse!.url,
          adminCredentialsSecretRef: { name: 'ch' },
          database: DB,
          table: 'fw',
        },
        deletionPolicy: 'Delete',
      } as never,
    });
    await waitFor(
      'table ready',
      async () => condition(await getPipeline(ns, 'fw'), 'TableReady')?.status === 'True',
      60_000,
    );
    // The operator is down while the namespace is deleted (an upgrade, a crash): the namespace
    // controller removes the Secrets; the pipeline waits on our finalizer.
    await stopAll();
    await apis().core.deleteNamespace({ name: ns });
    await waitFor(
      'Secrets removed by the namespace controller, pipeline Terminating',
      async () =>
        (await apis().core.listNamespacedSecret({ namespace: ns })).items.length === 0 &&
        !!(await getPipeline(ns, 'fw'))?.metadata.deletionTimestamp,
      60_000,
    );
    start(ns);
    await waitFor(`namespace ${ns} deleted`, namespaceGone(ns), 90_000);
    expect(await tableExists('fw')).toBe(true);
    const retained = logs.find((l) => l.includes('external resources retained'));
    expect(retained).toContain('fell back to Retain');
    expect(retained).toContain('Secret \\"ch\\"');
    expect(retained).toContain(`ClickHouse table ${DB}.fw`);
  });
});
