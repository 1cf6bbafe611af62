/**
 * Ownership of external things on the real bed (issue 11): a LogPipeline that names another
 * pipeline's table or topic is refused with a Conflict naming the owner, deploys no workers, and
 * its deletion with deletionPolicy Delete never touches the owner's objects. The topic claim
 * compares the Kafka cluster id, not the spelling of the bootstrap list. An unowned table is
 * adopted only when the pipeline asks for it.
 */
import { createClient } from '@clickhouse/client';
import { Kafka, logLevel } from 'kafkajs';
import { GROUP, PLURAL, VERSION } from '../operator/src/api/types';
import type { Manager } from '../operator/src/controller/manager';
import { registerExternalParts, type ExternalClients } from '../operator/src/controller/parts';
import { resolveSpec } from '../operator/src/api/defaults';
import { ensureTable } from '../operator/src/apply/clickhouse';
import { createClickHouseClient } from '../operator/src/apply/clickhouse-client';
import { OWNER_GROUP } from '../operator/src/apply/kafka-owner';
import { ownerRecord, parseOwnerComment } from '../operator/src/desired/ownership';
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
} from './operator-harness';
import { readTestBed } from './env/testbed';
import { createTopicsWithLeaders } from './env/kafka-topics';

const bed = readTestBed();
const DB = 'own_test';
const kafka = new Kafka({ brokers: [bed.kafka!.bootstrap], logLevel: logLevel.NOTHING });
const admin = kafka.admin();
const ch = createClient({
  url: bed.clickhouse!.url,
  username: bed.clickhouse!.username,
  password: bed.clickhouse!.password,
});

let namespace: string;
let manager: Manager;
let external: ExternalClients;

function spec(table: string, topic: string, extra: object = {}, brokers = [bed.kafka!.bootstrap]) {
  return {
    kafka: { bootstrapServers: brokers, topic: { name: topic, partitions: 1 } },
    clickhouse: { url: bed.clickhouse!.url, credentialsSecretRef: { name: 'ch' }, database: DB, table },
    ...extra,
  };
}

async function scalar(query: string, params: Record<string, unknown> = {}): Promise<string | undefined> {
  const rs = await ch.query({ query, query_params: params, format: 'JSONEachRow' });
  const rows = (await rs.json()) as Array<{ v: string }>;
  return rows[0]?.v;
}

const tableComment = (table: string) =>
  scalar('SELECT comment AS v FROM system.tables WHERE database = {db:String} AND name = {t:String}', {
    db: DB,
    t: table,
  });
const rowCount = async (table: string) => Number(await scalar(`SELECT count() AS v FROM ${DB}.${table}`));

/** The worker Deployment's replicas, or 0 when no Deployment exists. */
async function workerReplicas(name: string): Promise<number> {
  const dep = await maybe(apis().apps.readNamespacedDeployment({ namespace, name: `${name}-worker` }));
  return dep?.spec?.replicas ?? 0;
}

async function waitForReason(name: string, type: string, reason: string, timeoutMs = 60_000) {
  return waitFor(
    `${name} ${type} ${reason}`,
    async () => {
      const p = await getPipeline(namespace, name);
      return condition(p, type)?.reason === reason ? p : undefined;
    },
    timeoutMs,
  );
}

beforeAll(async () => {
  await admin.connect();
  namespace = await createNamespace('own');
  await createSecret(namespace, 'ch', {
    username: bed.clickhouse!.username,
    password: bed.clickhouse!.password,
  });
  manager = startManager(namespace);
  external = registerExternalParts(manager);
});

afterAll(async () => {
  await manager.stop();
  await external.close();
  await deleteNamespace(namespace);
  await admin.disconnect();
  await ch.close();
});

describe('two pipelines on one table', () => {
  it('records the first pipeline as owner on the table itself and in status', async () => {
    await createPipeline({ ...pipeline(namespace, 'owner'), spec: spec('shared', 'own.owner') as never });
    const lp = await waitFor(
      'owner table ready',
      async () => {
        const p = await getPipeline(namespace, 'owner');
        return condition(p, 'TableReady')?.status === 'True' ? p : undefined;
      },
      60_000,
    );
    const owner = parseOwnerComment((await tableComment('shared')) ?? '');
    expect(owner).toEqual({ namespace, name: 'owner', uid: lp.metadata.uid });
    expect(lp.status?.table?.owner).toBe(`${namespace}/owner/${lp.metadata.uid}`);
    // Recent rows: rows already past the table TTL would be dropped on insert.
    const ts = new Date().toISOString().replace('T', ' ').replace('Z', '');
    await ch.insert({
      table: `${DB}.shared`,
      values: [1, 2, 3].map((n) => ({ ts, ingest_ts: ts, device: `fw-${n}` })),
      format: 'JSONEachRow',
    });
    expect(await rowCount('shared')).toBe(3);
  });

  it('refuses the second pipeline with a Conflict naming the owner and deploys no workers', async () => {
    await createPipeline({
      ...pipeline(namespace, 'intruder'),
      spec: spec('shared', 'own.intruder', {
        deletionPolicy: 'Delete',
        clickhouse: {
          ...spec('shared', '').clickhouse,
          // The intruder: a one-day retention (an explicit, lowered floor passes admission).
          retention: { deleteAfter: '1d', minimumDeleteAfter: '1d' },
        },
      }) as never,
    });
    const lp = await waitForReason('intruder', 'Ready', 'Conflict');
    expect(condition(lp, 'Ready')?.status).toBe('False');
    expect(condition(lp, 'TableReady')?.reason).toBe('Conflict');
    expect(condition(lp, 'TableReady')?.message).toContain(`${namespace}/owner`);
    expect(await workerReplicas('intruder')).toBe(0);
    // The refused TTL change was never applied: the owner's table keeps its rows and its retention.
    expect(await rowCount('shared')).toBe(3);
    expect(parseOwnerComment((await tableComment('shared')) ?? '')?.name).toBe('owner');
  });

  it('deleting the refused pipeline with deletionPolicy Delete keeps the owner table and its rows', async () => {
    await deletePipeline(namespace, 'intruder');
    await waitFor(
      'intruder gone',
      async () => (await getPipeline(namespace, 'intruder')) === undefined,
      60_000,
    );
    expect(await tableComment('shared')).toBeDefined();
    expect(await rowCount('shared')).toBe(3);
    expect(parseOwnerComment((await tableComment('shared')) ?? '')?.name).toBe('owner');
  });
});

describe('topic identity by cluster id', () => {
  it('refuses a pipeline naming an owned topic through a differently spelled bootstrap list', async () => {
    await createPipeline({ ...pipeline(namespace, 'spell-a'), spec: spec('spell_a', 'own.spell') as never });
    await waitFor(
      'spell-a topic ready',
      async () => condition(await getPipeline(namespace, 'spell-a'), 'TopicReady')?.status === 'True',
      60_000,
    );
    // The owner record lives on the Kafka cluster (offset metadata of the owners group).
    const offsets = await admin.fetchOffsets({ groupId: OWNER_GROUP, topics: ['own.spell'] });
    const record = offsets[0].partitions.find((p) => p.partition === 0)?.metadata;
    expect(parseOwnerComment(record)?.name).toBe('spell-a');
    const port = bed.kafka!.bootstrap.split(':').pop();
    await createPipeline({
      ...pipeline(namespace, 'spell-b'),
      spec: spec('spell_b', 'own.spell', { deletionPolicy: 'Delete' }, [`localhost:${port}`]) as never,
    });
    const lp = await waitForReason('spell-b', 'TopicReady', 'Conflict');
    expect(condition(lp, 'TopicReady')?.message).toContain(`${namespace}/spell-a`);
    expect(condition(lp, 'Ready')?.reason).toBe('Conflict');
    expect(await workerReplicas('spell-b')).toBe(0);
    await deletePipeline(namespace, 'spell-b');
    await waitFor(
      'spell-b gone',
      async () => (await getPipeline(namespace, 'spell-b')) === undefined,
      60_000,
    );
    expect(await admin.listTopics()).toContain('own.spell');
  });
});

describe('workers and the topic claim', () => {
  it('deploys no workers for a pipeline refused on the same bootstrap spelling', async () => {
    await createPipeline({ ...pipeline(namespace, 'spell-c'), spec: spec('spell_c', 'own.spell') as never });
    const lp = await waitForReason('spell-c', 'Ready', 'Conflict');
    expect(condition(lp, 'TopicReady')?.message).toContain(`${namespace}/spell-a`);
    expect(condition(lp, 'WorkersReady')?.reason).toBe('Conflict');
    expect(await workerReplicas('spell-c')).toBe(0);
    expect(
      await maybe(apis().core.readNamespacedConfigMap({ namespace, name: 'spell-c-worker-config' })),
    ).toBeUndefined();
  });
});

describe('a running pipeline that loses its claim', () => {
  it('scales its existing workers to 0 when its table turns out to be owned by another pipeline', async () => {
    await createPipeline({
      ...pipeline(namespace, 'hijacked'),
      spec: spec('hijacked', 'own.hijacked') as never,
    });
    await waitFor(
      'hijacked ready with workers',
      async () =>
        condition(await getPipeline(namespace, 'hijacked'), 'TableReady')?.status === 'True' &&
        (await workerReplicas('hijacked')) > 0,
      60_000,
    );
    const other = ownerRecord({
      namespace: 'elsewhere',
      name: 'rightful',
      uid: '1e2d3c4b-0000-4000-8000-000000000042',
    });
    await ch.command({ query: `ALTER TABLE ${DB}.hijacked MODIFY COMMENT '${other}'` });
    // Any change of the pipeline object (here an annotation) makes the operator look again.
    await apis().custom.patchNamespacedCustomObject(
      {
        group: GROUP,
        version: VERSION,
        plural: PLURAL,
        namespace,
        name: 'hijacked',
        body: { metadata: { annotations: { 'example.com/poke': '1' } } },
      },
      mergePatch,
    );
    const lp = await waitForReason('hijacked', 'Ready', 'Conflict');
    expect(condition(lp, 'TableReady')?.message).toContain('elsewhere/rightful');
    await waitFor('workers scaled to 0', async () => (await workerReplicas('hijacked')) === 0);
    expect(await tableComment('hijacked')).toBe(other);
  });
});

describe('adoption of an unowned table', () => {
  it('refuses an unowned pre-existing table until the pipeline asks to adopt it', async () => {
    await ch.command({ query: `CREATE DATABASE IF NOT EXISTS ${DB}` });
    await ch.command({
      query: `CREATE TABLE ${DB}.legacy (ts DateTime) ENGINE = MergeTree ORDER BY ts`,
    });
    await createPipeline({ ...pipeline(namespace, 'legacy'), spec: spec('legacy', 'own.legacy') as never });
    const lp = await waitForReason('legacy', 'TableReady', 'Conflict');
    expect(condition(lp, 'TableReady')?.message).toContain('no owner');
    expect(await workerReplicas('legacy')).toBe(0);
    expect(await tableComment('legacy')).toBe('');
    await apis().custom.patchNamespacedCustomObject(
      {
        group: GROUP,
        version: VERSION,
        plural: PLURAL,
        namespace,
        name: 'legacy',
        body: { metadata: { annotations: { 'logpipeline.io/adopt': 'true' } } },
      },
      mergePatch,
    );
    // Adopted: the owner is recorded; the table's own differences (here a foreign schema) are then
    // judged like any owned table's (refused as destructive, never silently rewritten).
    await waitFor(
      'legacy adopted',
      async () => parseOwnerComment((await tableComment('legacy')) ?? '')?.name === 'legacy',
      60_000,
    );
    const after = await waitFor('legacy condition moves on', async () => {
      const p = await getPipeline(namespace, 'legacy');
      return condition(p, 'TableReady')?.reason !== 'Conflict' ? p : undefined;
    });
    expect(condition(after, 'TableReady')?.reason).toBe('DestructiveChangeRefused');
  });
});

describe('adoption of an unowned topic', () => {
  it('refuses a topic created by hand until the pipeline asks to adopt it, then records itself', async () => {
    await createTopicsWithLeaders(admin, [{ topic: 'own.byhand', numPartitions: 1 }]);
    await createPipeline({ ...pipeline(namespace, 'byhand'), spec: spec('byhand', 'own.byhand') as never });
    const lp = await waitForReason('byhand', 'TopicReady', 'Conflict');
    expect(condition(lp, 'TopicReady')?.message).toContain('no owner record');
    expect(await workerReplicas('byhand')).toBe(0);
    await apis().custom.patchNamespacedCustomObject(
      {
        group: GROUP,
        version: VERSION,
        plural: PLURAL,
        namespace,
        name: 'byhand',
        body: { metadata: { annotations: { 'logpipeline.io/adopt': 'true' } } },
      },
      mergePatch,
    );
    const adopted = await waitFor(
      'byhand topic adopted',
      async () => {
        const p = await getPipeline(namespace, 'byhand');
        return condition(p, 'TopicReady')?.status === 'True' ? p : undefined;
      },
      60_000,
    );
    const offsets = await admin.fetchOffsets({ groupId: OWNER_GROUP, topics: ['own.byhand'] });
    const record = offsets[0].partitions.find((p) => p.partition === 0)?.metadata;
    expect(parseOwnerComment(record)).toEqual({ namespace, name: 'byhand', uid: adopted.metadata.uid });
    expect(adopted.status?.topic?.owner).toBe(`${namespace}/byhand/${adopted.metadata.uid}`);
  });
});

describe('upgrade from an operator without owner records', () => {
  it('stamps a table its own status recorded on the same server, and only there', async () => {
    const client = createClickHouseClient({
      url: bed.clickhouse!.url,
      username: bed.clickhouse!.username,
      password: bed.clickhouse!.password,
    });
    try {
      const lp = { ...pipeline('legacy-ns', 'old'), spec: spec('upgraded', 'own.upgraded') as never };
      const resolvedSpec = resolveSpec(lp);
      const before = await ensureTable(client, resolvedSpec); // what an older operator did: no COMMENT
      expect(await tableComment('upgraded')).toBe('');
      const owner = { namespace: 'legacy-ns', name: 'old', uid: '5e4d3c2b-0000-4000-8000-000000000007' };
      const elsewhere = await ensureTable(client, resolvedSpec, {
        owner,
        adopt: false,
        legacyIdentity: 'server:another-server',
      });
      expect(elsewhere).toMatchObject({ ready: false, reason: 'Conflict', applied: [] });
      const stamped = await ensureTable(client, resolvedSpec, {
        owner,
        adopt: false,
        legacyIdentity: before.identity,
      });
      expect(stamped).toMatchObject({ ready: true, owner: `legacy-ns/old/${owner.uid}` });
      expect(parseOwnerComment(await tableComment('upgraded'))).toEqual(owner);
    } finally {
      await client.close();
    }
  });
});
