/**
 * A batch left without its hash-chain link says why on the LogPipeline (doctrine "Say why"). On the
 * real bed: the operator creates the topic and tables of a pipeline with integrity, a real worker
 * consumes real Kafka lines, and a CHECK constraint on `<table>_integrity` makes ClickHouse refuse
 * every link insert for its content (VIOLATED_CONSTRAINT). The worker gives each refused link up
 * after 3 attempts (rows stored, partition not stalled) and signs the range and the error into its
 * next checkpoint; the operator turns that into ChainLinked=False `ChainLinkRefused` naming the
 * partition, the offsets and ClickHouse's error, with one Warning Event. Once the constraint is
 * dropped, the next batch is linked and the condition clears.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { LogPipeline } from '../operator/src/api/types';
import { resolveSpec } from '../operator/src/api/defaults';
import type { Manager } from '../operator/src/controller/manager';
import { registerExternalParts, type ExternalClients } from '../operator/src/controller/parts';
import { generateSampleLines } from './fixtures/samples';
import { bedClient, clickhouseBed } from './compliance-fixture';
import { freePort } from './env/process';
import { readTestBed } from './env/testbed';
import {
  integrityWorkerConfig,
  scalar,
  signingKeys,
  spawnSigningWorker,
  verifyTable,
} from './integrity-support';
import {
  apis,
  condition,
  createNamespace,
  createPipeline,
  createSecret,
  deleteNamespace,
  getPipeline,
  pipeline,
  startManager,
  waitFor,
} from './operator-harness';
import { produceLines, stopWorker, testProducer, type WorkerProcess } from './worker-support';

const bed = readTestBed();
const DB = `chainref_${process.pid}_${Date.now() % 1e6}`;
const { keys, publicKeyFile } = signingKeys('chainref-');

let ch: ClickHouseClient;
let namespace: string;
let manager: Manager;
let external: ExternalClients;
let worker: WorkerProcess | undefined;
let lp: LogPipeline;

async function chainEvents(): Promise<Array<{ message: string; count: number }>> {
  const list = await apis().core.listNamespacedEvent({ namespace, fieldSelector: 'involvedObject.name=fw' });
  return list.items
    .filter((e) => e.reason === 'ChainLinkRefused')
    .map((e) => ({ message: e.message ?? '', count: e.count ?? 1 }));
}

async function chainLinked() {
  return condition(await getPipeline(namespace, 'fw'), 'ChainLinked');
}

beforeAll(async () => {
  ch = bedClient();
  namespace = await createNamespace('chainref');
  const chBed = clickhouseBed();
  await createSecret(namespace, 'ch', { username: chBed.username, password: chBed.password });
  await createSecret(namespace, 'key', {
    'ed25519.pem': keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  });
  lp = pipeline(namespace, 'fw', {
    kafka: { bootstrapServers: [bed.kafka!.bootstrap], topic: { name: `lp.${DB}`, partitions: 1 } },
    clickhouse: {
      url: chBed.url,
      credentialsSecretRef: { name: 'ch' },
      database: DB,
      table: 'fw',
      retention: { deleteAfter: '730d' },
    },
    workers: { replicas: 0, batch: { maxRows: 200, maxDelay: '200ms' } },
    deadLetter: { enabled: false },
    integrity: {
      enabled: true,
      signingKeySecretRef: { name: 'key', key: 'ed25519.pem' },
      checkpointInterval: '1h',
    },
  });
  manager = startManager(namespace);
  external = registerExternalParts(manager, { chain: { intervalMs: 500 } });
}, 120_000);

afterAll(async () => {
  if (worker) await stopWorker(worker);
  await manager?.stop();
  await external?.close();
  await deleteNamespace(namespace);
  await ch?.command({ query: `DROP DATABASE IF EXISTS \`${DB}\`` });
  await ch?.close();
});

test('a link ClickHouse refuses is named on the pipeline, with one Event, until the partition links again', async () => {
  await createPipeline(lp);
  // Topic and tables from the operator; the chain is whole (nothing noted) before any traffic.
  await waitFor(
    'TopicReady, TableReady and ChainLinked True',
    async () => {
      const got = await getPipeline(namespace, 'fw');
      const ok = ['TopicReady', 'TableReady', 'ChainLinked'].every(
        (t) => condition(got, t)?.status === 'True',
      );
      return ok && got;
    },
    90_000,
  );
  expect((await chainLinked())?.reason).toBe('ChainLinked');

  // ClickHouse now refuses every link insert for its content (a data error, not an outage).
  await ch.command({
    query: `ALTER TABLE \`${DB}\`.fw_integrity ADD CONSTRAINT refuse_links CHECK row_count = 0`,
  });
  const spec = resolveSpec(lp);
  worker = spawnSigningWorker(bed, keys, integrityWorkerConfig(spec), await freePort(), 'chainref');
  const producer = await testProducer(bed);
  const lines = (seed: number) =>
    generateSampleLines('fortigate', 300, { seed, malformedRatio: 0, startMs: Date.now() - 60_000 });
  await produceLines(producer, spec.kafka.topic.name, 1, lines(1), 10);

  const refused = await waitFor(
    'ChainLinked False ChainLinkRefused',
    async () => {
      const c = await chainLinked();
      return c?.status === 'False' && c;
    },
    120_000,
  );
  expect(refused.reason).toBe('ChainLinkRefused');
  expect(refused.message).toMatch(/^partition 0 offsets \d+–\d+ stored without an integrity link/);
  expect(refused.message).toMatch(/ClickHouse refused the integrity link 3 times: .*refuse_links/);
  // The rows themselves are stored: the refused link held nothing back.
  await waitFor(
    'all 300 rows stored',
    async () => (await scalar(ch, `SELECT count() AS n FROM \`${DB}\`.fw`)) === 300,
    60_000,
  );
  expect(await scalar(ch, `SELECT count() AS n FROM \`${DB}\`.fw_integrity`)).toBe(0);
  const events = await waitFor('a ChainLinkRefused Event', async () => {
    const e = await chainEvents();
    return e.length > 0 && e;
  });
  expect(events).toHaveLength(1);
  expect(events[0].message).toContain('ChainLinked is False');
  expect(events[0].message).toContain('stored without an integrity link');

  // The cause is fixed: the next batch of the partition is linked, and the condition clears.
  await ch.command({ query: `ALTER TABLE \`${DB}\`.fw_integrity DROP CONSTRAINT refuse_links` });
  await produceLines(producer, spec.kafka.topic.name, 1, lines(2), 10);
  await producer.disconnect();
  const cleared = await waitFor(
    'ChainLinked True again',
    async () => {
      const c = await chainLinked();
      return c?.status === 'True' && c;
    },
    120_000,
  );
  expect(cleared.reason).toBe('ChainLinked');
  expect(cleared.message).toMatch(
    /^links are stored again after partition 0 offsets \d+–\d+ was left unlinked/,
  );
  expect(await scalar(ch, `SELECT count() AS n FROM \`${DB}\`.fw_integrity`)).toBeGreaterThan(0);
  // Still one Event for the refusal: the flip back to True is the only other one.
  expect(await chainEvents()).toHaveLength(1);

  // verify reports the unlinked range, and the cause the worker signed beside it.
  expect(await stopWorker(worker)).toBe(0);
  worker = undefined;
  const { code, report } = await verifyTable(bed, DB, 'fw', publicKeyFile);
  expect(code).not.toBe(0);
  expect(report.findings.some((f) => f.partition === 0)).toBe(true);
  const signed = report.notices.filter((n) => n.detail.startsWith('the worker signed that it stored'));
  expect(signed.length).toBeGreaterThan(0);
  expect(signed[0]).toMatchObject({ partition: 0 });
  expect(signed[0].detail).toMatch(/ClickHouse refused the integrity link 3 times: .*refuse_links/);
}, 360_000);
