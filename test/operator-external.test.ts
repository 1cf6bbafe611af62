/**
 * The operator end to end on its external parts: a LogPipeline on the real apiserver becomes a
 * real Kafka topic (and dead-letter topic) and real ClickHouse tables; a second pipeline claiming
 * the same topic gets a conflict; deletionPolicy Delete removes topic and tables on the recorded
 * cluster; an unreachable broker is a False condition, not a crash; retention below Law 5651's
 * minimum stays Ready with a reason that says so.
 */
import { createClient } from '@clickhouse/client';
import { Kafka, logLevel } from 'kafkajs';
import type { Manager } from '../operator/src/controller/manager';
import { registerExternalParts, type ExternalClients } from '../operator/src/controller/parts';
import {
  condition,
  createNamespace,
  createPipeline,
  createSecret,
  deleteNamespace,
  deletePipeline,
  getPipeline,
  pipeline,
  startManager,
  waitFor,
} from './operator-harness';
import { readTestBed } from './env/testbed';

const bed = readTestBed();
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

function spec(table: string, topic: string, extra: object = {}) {
  return {
    kafka: { bootstrapServers: [bed.kafka!.bootstrap], topic: { name: topic, partitions: 3 } },
    clickhouse: { url: bed.clickhouse!.url, credentialsSecretRef: { name: 'ch' }, database: 'op_ext', table },
    ...extra,
  };
}

async function tableExists(table: string): Promise<boolean> {
  const rs = await ch.query({
    query: 'SELECT count() AS n FROM system.tables WHERE database = {db:String} AND name = {t:String}',
    query_params: { db: 'op_ext', t: table },
    format: 'JSONEachRow',
  });
  return Number(((await rs.json()) as Array<{ n: string }>)[0].n) === 1;
}

beforeAll(async () => {
  await admin.connect();
  namespace = await createNamespace('opext');
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

it('creates the topic, the dead-letter topic and the tables, and reports Ready with identities', async () => {
  await createPipeline({
    ...pipeline(namespace, 'fw'),
    spec: spec('fw_ext', 'opext.fw', { deletionPolicy: 'Delete' }) as never,
  });
  const lp = await waitFor(
    'pipeline topic and table ready',
    async () => {
      const p = await getPipeline(namespace, 'fw');
      return condition(p, 'TopicReady')?.status === 'True' && condition(p, 'TableReady')?.status === 'True'
        ? p
        : undefined;
    },
    60_000,
  );
  const topics = await admin.fetchTopicMetadata({ topics: ['opext.fw', 'opext.fw.dlq'] });
  expect(topics.topics.find((t) => t.name === 'opext.fw')?.partitions).toHaveLength(3);
  expect(await tableExists('fw_ext')).toBe(true);
  expect(await tableExists('fw_ext_dlq')).toBe(true);
  expect(lp.status?.topic?.clusterId).toBe(bed.kafka!.clusterId);
  expect(lp.status?.table?.serverIdentity).toBeTruthy();
  // The stats table exists and is read: no rows yet, so coverage is Unknown (not a stats failure).
  expect(await tableExists('fw_ext_parser_stats')).toBe(true);
  expect(condition(lp, 'ParserCoverage')).toMatchObject({ status: 'Unknown', reason: 'NoRecentRows' });
  expect(lp.status?.parserCoverage).toMatchObject({ rows: 0, missingSrcIp: 0 });
});

it('gives a newer pipeline claiming the same topic a conflict instead of a tug of war', async () => {
  await createPipeline({ ...pipeline(namespace, 'fw-copy'), spec: spec('fw_copy', 'opext.fw') as never });
  const lp = await waitFor(
    'claim conflict',
    async () => {
      const p = await getPipeline(namespace, 'fw-copy');
      return condition(p, 'TopicReady')?.reason === 'Conflict' ? p : undefined;
    },
    30_000,
  );
  expect(condition(lp, 'TopicReady')?.message).toContain(`${namespace}/fw`);
  expect(condition(lp, 'Ready')?.status).toBe('False');
  await deletePipeline(namespace, 'fw-copy');
});

it('reports an unreachable broker as a False condition', async () => {
  await createPipeline({
    ...pipeline(namespace, 'nobroker'),
    spec: { ...spec('nobroker', 'opext.nobroker'), kafka: { bootstrapServers: ['127.0.0.1:1'] } } as never,
  });
  const lp = await waitFor(
    'KafkaUnreachable',
    async () => {
      const p = await getPipeline(namespace, 'nobroker');
      return condition(p, 'TopicReady')?.reason === 'KafkaUnreachable' ? p : undefined;
    },
    60_000,
  );
  expect(condition(lp, 'TopicReady')?.status).toBe('False');
  expect(condition(lp, 'TableReady')?.status).toBe('True');
  await deletePipeline(namespace, 'nobroker');
});

it('keeps a table with retention below the legal minimum Ready, and says so', async () => {
  await createPipeline({
    ...pipeline(namespace, 'short'),
    spec: spec('fw_short', 'opext.short', {
      clickhouse: {
        ...spec('fw_short', 'opext.short').clickhouse,
        retention: { deleteAfter: '30d', minimumDeleteAfter: '1d' },
      },
    }) as never,
  });
  const lp = await waitFor(
    'RetentionBelowMinimum',
    async () => {
      const p = await getPipeline(namespace, 'short');
      return condition(p, 'TableReady')?.reason === 'RetentionBelowMinimum' ? p : undefined;
    },
    60_000,
  );
  expect(condition(lp, 'TableReady')?.status).toBe('True');
  expect(condition(lp, 'TableReady')?.message).toMatch(/^table ready, but .*30d.*Law 5651.*180d/);
  await deletePipeline(namespace, 'short');
});

it('deletes topic and tables for deletionPolicy Delete on the recorded cluster', async () => {
  await deletePipeline(namespace, 'fw');
  await waitFor('pipeline gone', async () => (await getPipeline(namespace, 'fw')) === undefined, 60_000);
  await waitFor('table dropped', async () => !(await tableExists('fw_ext')), 30_000);
  const names = await admin.listTopics();
  expect(names).not.toContain('opext.fw');
});
