/**
 * Rows the parser accepts but ClickHouse refuses (here: a CHECK constraint on the data table
 * rejects lines carrying a marker) are isolated inside their batch: the culprits go to the DLQ
 * table and topic with ClickHouse's own message as the reason, every other row of the same batch
 * is stored exactly once, and the rejections are counted in the metrics.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { generateSampleLines } from './fixtures/samples';
import { freePort } from './env/process';
import { readTestBed } from './env/testbed';
import {
  chClient,
  createPipeline,
  dropPipeline,
  expectedKeys,
  metricSum,
  newPipeline,
  pollUntil,
  produceLines,
  spawnWorker,
  stopWorker,
  storedCounts,
  storedKeys,
  testProducer,
  workerConfig,
  workerGet,
  type WorkerProcess,
  waitCaughtUp,
} from './worker-support';

jest.setTimeout(180_000);

const bed = readTestBed();
const PARTITIONS = 2;
const LINES = 12_000;
const POISON_EVERY = 700;
const p = newPipeline('rejected', PARTITIONS);
let ch: ClickHouseClient;
let worker: WorkerProcess | undefined;

/** FortiGate lines; every POISON_EVERY-th carries an extra key the table's CHECK refuses. */
function traffic(): { lines: Buffer[]; poison: number } {
  const lines = generateSampleLines('fortigate', LINES, { seed: 41 });
  let poison = 0;
  for (let i = POISON_EVERY - 1; i < LINES; i += POISON_EVERY) {
    lines[i] = Buffer.concat([lines[i], Buffer.from(` note="poison-${i}"`)]);
    poison++;
  }
  return { lines, poison };
}

beforeAll(async () => {
  ch = chClient(bed);
  await createPipeline(bed, p, "position(raw, 'poison-') = 0");
});

afterAll(async () => {
  if (worker) await stopWorker(worker, 5_000);
  await dropPipeline(bed, p);
  await ch.close();
});

test('isolates rows ClickHouse rejects, dead-letters them with its reason, stores the rest once', async () => {
  const t = traffic();
  const producer = await testProducer(bed);
  const half = LINES / 2;
  await produceLines(producer, p.topic, PARTITIONS, t.lines.slice(0, half), 50);
  await produceLines(producer, p.topic, PARTITIONS, t.lines.slice(half), 1);
  await producer.disconnect();

  const port = await freePort();
  worker = spawnWorker(
    bed,
    workerConfig(bed, p, { batch: { maxRows: 3_000, maxBytes: 4 * 1024 * 1024, maxDelayMs: 300 } }),
    port,
    'rejected',
  );
  await pollUntil(
    () => storedCounts(ch, p),
    (c) => c.rows + c.dlq >= LINES,
    150_000,
    1_000,
  );
  // Judge once every partition is committed to its end: nothing is in flight any more.
  await waitCaughtUp(bed, p);
  expect(await storedCounts(ch, p)).toEqual({
    rows: LINES - t.poison,
    distinct: LINES - t.poison,
    dlq: t.poison,
    dlqDistinct: t.poison,
  });

  const all = expectedKeys(
    [
      { lines: t.lines.slice(0, half), perMessage: 50 },
      { lines: t.lines.slice(half), perMessage: 1 },
    ],
    PARTITIONS,
  );
  const isPoison = (k: string) => k.includes('poison-');
  expect((await storedKeys(ch, p)).sort()).toEqual(all.filter((k) => !isPoison(k)).sort());
  expect((await storedKeys(ch, p, p.dlqTable, ['`partition`', '`offset`'])).sort()).toEqual(
    all.filter(isPoison).sort(),
  );
  const reasons = await (
    await ch.query({
      query: `SELECT DISTINCT reason FROM ${p.database}.\`${p.dlqTable}\``,
      format: 'JSONEachRow',
    })
  ).json<{ reason: string }>();
  expect(reasons.length).toBeGreaterThan(0);
  for (const r of reasons) expect(r.reason).toMatch(/^clickhouse: .*(test_check|constraint)/i);

  const metrics = (await workerGet(port, '/metrics')).body;
  expect(metricSum(metrics, 'logpipeline_worker_dead_letters_total')).toBe(t.poison);
  expect(metrics).toContain(
    `logpipeline_worker_dead_letters_total{reason="clickhouse_rejected"} ${t.poison}`,
  );
  // One rejected whole-batch INSERT per batch holding poison (the bisection's sub-inserts are not counted).
  const rejectedBatches = Number(
    /logpipeline_worker_insert_failures_total\{kind="rejected"\} (\d+)/.exec(metrics)?.[1],
  );
  expect(rejectedBatches).toBeGreaterThanOrEqual(1);
  expect(rejectedBatches).toBeLessThanOrEqual(t.poison);
  expect(metrics).toMatch(/logpipeline_worker_insert_failures_total\{kind="systemic"\} 0/);
  expect(await stopWorker(worker)).toBe(0);
  worker = undefined;
});
