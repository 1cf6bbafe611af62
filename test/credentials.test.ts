/**
 * Credentials and what may run with them, on the real bed: a worker image outside the operator's
 * allowlist is refused with a condition naming the field and no worker Deployment; a reserved
 * `LP_` env is refused at admission (CEL in the CRD); a writer that is the admin is refused before
 * any statement; a steady pipeline sends zero DDL/GRANT statements per reconcile (counted by the
 * operator's ClickHouse statement counter), and a rotated writer Secret makes the operator re-apply
 * the users at once.
 *
 * The bed's engine (chdb) has no writable access storage, so CREATE ROLE/USER fail there
 * (ACCESS_STORAGE_FOR_INSERTION_NOT_FOUND) and the operator reports AccessUsersNotCreated; what
 * is checked here is what the operator sends and when, not the server's grant tables.
 */
import { clickhouseStatementCounts } from '../operator/src/apply/clickhouse-client';
import type { Manager } from '../operator/src/controller/manager';
import { registerExternalParts, type ExternalClients } from '../operator/src/controller/parts';
import { readTestBed } from './env/testbed';
import {
  apis,
  condition,
  createNamespace,
  createPipeline,
  createSecret,
  deleteNamespace,
  deletePipeline,
  getPipeline,
  maybe,
  mergePatch,
  pipeline,
  startManager,
  waitFor,
  pokePipeline,
} from './operator-harness';

jest.setTimeout(180_000);

const bed = readTestBed();
const database = `cred_${process.pid}`;
let ns: string;
let manager: Manager;
let external: ExternalClients;

const totalStatements = () => [...clickhouseStatementCounts().values()].reduce((a, b) => a + b, 0);
const count = (kind: string) => clickhouseStatementCounts().get(kind) ?? 0;
const accessStatements = () =>
  ['CREATE ROLE', 'CREATE USER', 'ALTER USER', 'GRANT'].reduce((n, k) => n + count(k), 0);

function chSpec(table: string, extra: object = {}) {
  return {
    kafka: { bootstrapServers: [bed.kafka!.bootstrap], topic: { name: `${ns}.${table}`, partitions: 1 } },
    clickhouse: { url: bed.clickhouse!.url, database, table, ...extra },
    deletionPolicy: 'Delete',
  };
}

beforeAll(async () => {
  ns = await createNamespace('cred');
  await createSecret(ns, 'admin', {
    username: bed.clickhouse!.username,
    password: bed.clickhouse!.password,
    'auditor-username': 'fw_auditor',
    'auditor-password': 'auditor-password-0123456789',
  });
  await createSecret(ns, 'writer', { username: 'fw_writer', password: 'writer-password-0123456789' });
  manager = startManager(ns);
  external = registerExternalParts(manager);
  await waitFor('caches synced', async () => manager.isReady());
});

afterAll(async () => {
  await manager?.stop();
  await external?.close();
  if (ns) await deleteNamespace(ns);
  const { createClient } = await import('@clickhouse/client');
  const ch = createClient({
    url: bed.clickhouse!.url,
    username: bed.clickhouse!.username,
    password: bed.clickhouse!.password,
  });
  await ch.command({ query: `DROP DATABASE IF EXISTS ${database}` });
  await ch.close();
});

it('refuses a worker image outside the allowlist: condition naming the field, no workers', async () => {
  await createPipeline(pipeline(ns, 'custom-image', { workers: { image: 'evil.example/collector:1' } }));
  const lp = await waitFor('ImageNotAllowed', async () => {
    const p = await getPipeline(ns, 'custom-image');
    return condition(p, 'Ready')?.reason === 'ImageNotAllowed' ? p : undefined;
  });
  expect(condition(lp, 'Ready')?.status).toBe('False');
  expect(condition(lp, 'Ready')?.message).toContain('spec.workers.image "evil.example/collector:1"');
  expect(
    await maybe(apis().apps.readNamespacedDeployment({ namespace: ns, name: 'custom-image-worker' })),
  ).toBeUndefined();
});

it('refuses a reserved LP_ env at admission', async () => {
  const err = await createPipeline(
    pipeline(ns, 'redirect', {
      workers: { env: [{ name: 'LP_CLICKHOUSE_URL', value: 'http://elsewhere:8123' }] },
    }),
  ).then(
    () => undefined,
    (e: { code?: number; body?: string }) => e,
  );
  expect(err?.code).toBe(422);
  expect(String(err?.body)).toContain('spec.workers.env');
  expect(String(err?.body)).toContain('reserved for the operator');
  expect(await getPipeline(ns, 'redirect')).toBeUndefined();
});

it('refuses a writer that is the admin before sending any statement', async () => {
  const before = totalStatements();
  await createPipeline({
    ...pipeline(ns, 'same-user'),
    spec: chSpec('same_user', {
      credentialsSecretRef: { name: 'admin' },
      adminCredentialsSecretRef: { name: 'admin' },
    }) as never,
  });
  const lp = await waitFor(
    'WriterIsAdmin',
    async () => {
      const p = await getPipeline(ns, 'same-user');
      return condition(p, 'TableReady')?.reason === 'WriterIsAdmin' ? p : undefined;
    },
    60_000,
  );
  expect(condition(lp, 'TableReady')?.message).toContain(
    `same ClickHouse user "${bed.clickhouse!.username}"`,
  );
  expect(condition(lp, 'Ready')?.status).toBe('False');
  expect(totalStatements()).toBe(before);
});

it('sends zero statements per reconcile for a steady pipeline; a rotated writer Secret re-applies the users', async () => {
  await createPipeline({
    ...pipeline(ns, 'steady'),
    spec: {
      ...chSpec('steady', {
        credentialsSecretRef: { name: 'writer' },
        adminCredentialsSecretRef: { name: 'admin' },
      }),
      workers: { autoscaling: { enabled: true, minReplicas: 1, maxReplicas: 1, pollInterval: '1s' } },
    } as never,
  });
  await waitFor(
    'tables created',
    async () => condition(await getPipeline(ns, 'steady'), 'TableReady')?.status === 'True',
    60_000,
  );
  // Autoscaler polls no longer reconcile (it decides in the background and queues a pipeline only
  // when its outcome changes), so each reconcile here is made by an update: a poked annotation.
  const reconcileOnce = async (i: number) => {
    const count = manager.reconcileCount;
    await pokePipeline(ns, 'steady', String(i));
    await waitFor(`reconcile after poke ${i}`, async () => manager.reconcileCount > count, 60_000);
  };
  // Let the first reconciles (tables, the one access attempt) settle, then count.
  for (let i = 0; i < 3; i++) await reconcileOnce(i);
  const before = { ...Object.fromEntries(clickhouseStatementCounts()) };
  for (let i = 3; i < 13; i++) await reconcileOnce(i);
  expect(Object.fromEntries(clickhouseStatementCounts())).toEqual(before);

  const access = accessStatements();
  await apis().core.patchNamespacedSecret(
    { namespace: ns, name: 'writer', body: { stringData: { password: 'writer-password-rotated-42' } } },
    mergePatch,
  );
  await waitFor('users re-applied after the rotation', async () => accessStatements() > access, 30_000);
});

it('deletes a Delete pipeline with its tables; dropping its roles is attempted and tolerated on this engine', async () => {
  const dropRole = count('DROP ROLE');
  const dropTable = count('DROP TABLE');
  await deletePipeline(ns, 'steady');
  await waitFor('pipeline finalized', async () => (await getPipeline(ns, 'steady')) === undefined, 60_000);
  // The tables are dropped, then one DROP ROLE for both roles (refused by chdb: no access storage).
  expect(count('DROP TABLE')).toBeGreaterThan(dropTable);
  expect(count('DROP ROLE') - dropRole).toBe(1);
  const { createClient } = await import('@clickhouse/client');
  const ch = createClient({
    url: bed.clickhouse!.url,
    username: bed.clickhouse!.username,
    password: bed.clickhouse!.password,
  });
  const rs = await ch.query({
    query: `SELECT count() AS n FROM system.tables WHERE database = {db:String} AND name LIKE 'steady%'`,
    query_params: { db: database },
    format: 'JSONEachRow',
  });
  expect(Number(((await rs.json()) as Array<{ n: string }>)[0].n)).toBe(0);
  await ch.close();
});
