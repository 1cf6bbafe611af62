/**
 * ClickHouse goes down for 20 s while traffic keeps arriving. The worker must keep retrying
 * (insert failures counted, /readyz false), stop fetching once its in-flight byte budget is spent
 * so its memory stays bounded, never exit, and once ClickHouse is back store every line exactly
 * once.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { restartClickHouse, stopClickHouse } from './env/clickhouse';
import { freePort } from './env/process';
import { readTestBed, writeTestBed } from './env/testbed';
import {
  chClient,
  createPipeline,
  dropPipeline,
  expectedKeys,
  makeTraffic,
  metricSum,
  newPipeline,
  pollUntil,
  produceLines,
  rssMiB,
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

jest.setTimeout(300_000);

const bed = readTestBed();
const PARTITIONS = 3;
const OUTAGE_MS = 20_000;
const BUDGET = 8 * 1024 * 1024;
const p = newPipeline('outage', PARTITIONS);
const before = makeTraffic(10_000, 100, 21);
const during = makeTraffic(80_000, 100, 22);
let ch: ClickHouseClient;
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  ch = chClient(bed);
  await createPipeline(bed, p);
});

afterAll(async () => {
  if (worker) await stopWorker(worker, 5_000);
  await ch.close();
  await dropPipeline(readTestBed(), p);
});

test('survives a 20 s ClickHouse outage with bounded memory, losing and duplicating nothing', async () => {
  const port = await freePort();
  const cfg = workerConfig(bed, p, {
    batch: { maxRows: 5_000, maxBytes: 1024 * 1024, maxDelayMs: 200 },
    tuning: {
      maxInFlightBytes: BUDGET,
      sessionTimeoutMs: 6_000,
      heartbeatIntervalMs: 500,
      rebalanceTimeoutMs: 15_000,
    },
  });
  worker = spawnWorker(bed, cfg, port, 'outage');
  const producer = await testProducer(bed);
  await produceLines(producer, p.topic, PARTITIONS, before.lines, 100);
  await pollUntil(
    () => storedCounts(ch, p),
    (c) => c.rows + c.dlq >= before.lines.length,
    60_000,
  );
  const baselineRss = rssMiB(worker.child.pid!);

  await stopClickHouse(bed.clickhouse!);
  const outageStart = Date.now();
  // ~25 MB of backlog, three times the worker's in-flight budget.
  await produceLines(producer, p.topic, PARTITIONS, during.lines, 1);
  let maxRss = 0;
  let maxInFlight = 0;
  let sawNotReady = false;
  while (Date.now() - outageStart < OUTAGE_MS) {
    maxRss = Math.max(maxRss, rssMiB(worker.child.pid!));
    const metrics = (await workerGet(port, '/metrics')).body;
    maxInFlight = Math.max(maxInFlight, metricSum(metrics, 'logpipeline_worker_bytes_in_flight'));
    if ((await workerGet(port, '/readyz')).status === 503) sawNotReady = true;
    await new Promise((r) => setTimeout(r, 500));
  }
  const outageMetrics = (await workerGet(port, '/metrics')).body;
  expect(worker.child.exitCode).toBeNull();
  expect(sawNotReady).toBe(true);
  expect(metricSum(outageMetrics, 'logpipeline_worker_insert_failures_total')).toBeGreaterThan(0);
  // Backpressure: fetching stopped well short of the backlog, memory stayed near the budget.
  expect(metricSum(outageMetrics, 'logpipeline_worker_lines_total')).toBeLessThan(
    before.lines.length + during.lines.length,
  );
  expect(maxInFlight).toBeLessThanOrEqual(BUDGET + 2 * 1024 * 1024 + 4 * 1024 * 1024);
  expect(maxRss - baselineRss).toBeLessThan(200);

  const restarted = await restartClickHouse(bed.clickhouse!);
  writeTestBed({ ...readTestBed(), clickhouse: restarted });
  await ch.close();
  ch = chClient(readTestBed());
  await producer.disconnect();

  const total = before.lines.length + during.lines.length;
  const garbage = before.garbage + during.garbage;
  await pollUntil(
    () => storedCounts(ch, p),
    (c) => c.rows + c.dlq >= total,
    180_000,
    1_000,
  );
  // Judge once every partition is committed to its end: nothing is in flight any more.
  await waitCaughtUp(bed, p);
  expect(await storedCounts(ch, p)).toEqual({
    rows: total - garbage,
    distinct: total - garbage,
    dlq: garbage,
    dlqDistinct: garbage,
  });
  const expected = expectedKeys(
    [
      { lines: before.lines, perMessage: 100 },
      { lines: during.lines, perMessage: 1 },
    ],
    PARTITIONS,
  ).filter((k) => !k.includes('garbage #'));
  expect((await storedKeys(ch, p)).sort()).toEqual(expected.sort());
  expect(
    (
      await pollUntil(
        () => workerGet(port, '/readyz'),
        (r) => r.status === 200,
        30_000,
      )
    ).status,
  ).toBe(200);
  expect(await stopWorker(worker)).toBe(0);
  worker = undefined;
  console.log(
    JSON.stringify({
      outage: { baselineRssMiB: baselineRss, maxRssMiB: maxRss, maxBytesInFlight: maxInFlight },
    }),
  );
});
