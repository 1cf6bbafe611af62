/**
 * A shuffled history import under tamper evidence: 300 distinct days interleaved in every batch,
 * so the worker regroups each batch by partition key (sorted keys, at most 100 per INSERT) while
 * the integrity link seals the batch in (offset, line) order. `logpipeline verify` re-reads what
 * ClickHouse holds in canonical order and must find every batch intact.
 */
import { resolveSpec } from '../operator/src/api/defaults';
import { generateSampleLines } from './fixtures/samples';
import { readTestBed } from './env/testbed';
import { freePort } from './env/process';
import {
  createIntegrityTables,
  createTopics,
  integrityPipeline,
  integrityWorkerConfig,
  scalar,
  signingKeys,
  spawnSigningWorker,
  verifyTable,
} from './integrity-support';
import {
  chClient,
  metricSum,
  pollUntil,
  produceLines,
  stopWorker,
  testProducer,
  workerGet,
} from './worker-support';

jest.setTimeout(300_000);

const bed = readTestBed();
const ch = chClient(bed);
const id = `bfinteg_${Date.now().toString(36)}`;
const DAYS = 300;
const LINES = 3_000;
const lp = integrityPipeline(bed, id, {
  partitions: 1,
  batch: { maxRows: 5000, maxDelay: '500ms' },
  deadLetter: { enabled: false },
});
const spec = resolveSpec(lp);
const { keys, publicKeyFile } = signingKeys('bfinteg-');

beforeAll(async () => {
  await createIntegrityTables(ch, spec);
  await createTopics(bed, [{ topic: spec.kafka.topic.name, numPartitions: 1 }]);
});

afterAll(async () => {
  await ch.command({ query: `DROP DATABASE IF EXISTS \`${id}\`` });
  await ch.close();
});

async function verify(): Promise<{ code: number; findings: unknown[] }> {
  const { code, report } = await verifyTable(bed, id, 'fw', publicKeyFile);
  return { code, findings: report.findings };
}

it('regroups a shuffled 300-day import by partition key; verify finds every batch intact', async () => {
  const cfg = integrityWorkerConfig(spec);
  // One line per day slot, days interleaved (a multiplicative stride), all within retention.
  const now = Date.now();
  const lines = Array.from(
    { length: LINES },
    (_, i) =>
      generateSampleLines('fortigate', 1, {
        seed: i + 1,
        malformedRatio: 0,
        startMs: now - (1 + ((i * 7919) % DAYS)) * 86_400_000,
      })[0],
  );
  const producer = await testProducer(bed);
  await produceLines(producer, spec.kafka.topic.name, 1, lines, 50);
  await producer.disconnect();
  const port = await freePort();
  const worker = spawnSigningWorker(bed, keys, cfg, port, 'backfill-integrity');
  const count = () => scalar(ch, `SELECT count() AS n FROM \`${id}\`.fw`);
  await pollUntil(count, (n) => n >= LINES, 180_000);
  expect(await count()).toBe(LINES);
  const m = await workerGet(port, '/metrics');
  // Regrouped before sending: ClickHouse never refused a block for spanning too many partitions.
  expect(metricSum(m.body, 'logpipeline_worker_insert_failures_total')).toBe(0);
  expect(await stopWorker(worker)).toBe(0);
  const [days] = (await (
    await ch.query({ query: `SELECT uniqExact(toDate(ts)) AS d FROM \`${id}\`.fw`, format: 'JSONEachRow' })
  ).json()) as Array<{ d: string }>;
  expect(Number(days.d)).toBeGreaterThan(200);
  const clean = await verify();
  expect(clean.findings).toEqual([]);
  expect(clean.code).toBe(0);
});
