/**
 * A history import: two years of firewall lines (730 distinct days, one message carrying 150 of
 * them) into a table partitioned by toYYYYMMDD(ts). ClickHouse refuses any INSERT block spanning
 * more than 100 partitions; the worker must regroup its batches by key (deterministic per-group
 * tokens) instead of retrying them forever, and store every line exactly once, also when killed
 * between the groups of a batch.
 */
import fs from 'node:fs';
import type { ClickHouseClient } from '@clickhouse/client';
import { freePort } from './env/process';
import { readTestBed } from './env/testbed';
import {
  chClient,
  createPipeline,
  dropPipeline,
  kafkaClient,
  metricSum,
  newPipeline,
  pollUntil,
  produceLines,
  spawnWorker,
  stopWorker,
  storedCounts,
  testProducer,
  workerConfig,
  workerGet,
  type WorkerProcess,
  waitCaughtUp,
} from './worker-support';

jest.setTimeout(300_000);

const bed = readTestBed();
const DAYS = 730;
const PACKED_DAYS = 150;
const PER_DAY = 3;
const p = newPipeline('backfill', 1);
let ch: ClickHouseClient;
let worker: WorkerProcess | undefined;

/** One FortiGate line on day `day` after 2022-01-01 (UTC), unique by `n`. */
function line(day: number, n: number): Buffer {
  const d = new Date(Date.UTC(2022, 0, 1) + day * 86_400_000).toISOString().slice(0, 10);
  return Buffer.from(
    `date=${d} time=10:${String(n % 60).padStart(2, '0')}:00 devname="fw1" srcip=10.0.${n % 250}.${day % 250} ` +
      `dstip=192.0.2.1 srcport=${1024 + n} dstport=443 proto=6 action=deny policyid=7 tz="+0000"`,
  );
}

beforeAll(async () => {
  ch = chClient(bed);
  // The operator's table is partitioned by day (toYYYYMMDD(ts)), like the firewall preset's.
  await createPipeline(bed, p);
});

afterAll(async () => {
  if (worker) await stopWorker(worker, 5_000);
  await dropPipeline(bed, p);
  await ch.close();
});

test('imports 730 distinct days (150 in one message) exactly once, split by the partition key', async () => {
  const packed = Array.from({ length: PACKED_DAYS }, (_, day) => line(day, day));
  const rest: Buffer[] = [];
  let n = PACKED_DAYS;
  for (let day = 0; day < DAYS; day++)
    for (let k = day < PACKED_DAYS ? 1 : 0; k < PER_DAY; k++) rest.push(line(day, n++));
  const total = packed.length + rest.length;
  const producer = await testProducer(bed);
  await produceLines(producer, p.topic, 1, packed, PACKED_DAYS);
  await produceLines(producer, p.topic, 1, rest, 20);
  await producer.disconnect();

  const port = await freePort();
  const cfg = workerConfig(bed, p, { batch: { maxRows: 5_000, maxBytes: 4 * 1024 * 1024, maxDelayMs: 300 } });
  // What the operator renders for the firewall preset.
  cfg.clickhouse.partitionBy = { column: 'ts', function: 'toYYYYMMDD' };
  worker = spawnWorker(bed, cfg, port, 'backfill');
  const counts = await pollUntil(
    () => storedCounts(ch, p),
    (c) => c.rows + c.dlq >= total,
    240_000,
  );
  expect(counts).toEqual({ rows: total, distinct: total, dlq: 0, dlqDistinct: 0 });
  const [days] = await (
    await ch.query({
      query: `SELECT uniqExact(toYYYYMMDD(ts)) AS d FROM ${p.database}.\`${p.table}\``,
      format: 'JSONEachRow',
    })
  ).json<{ d: string }>();
  expect(Number(days.d)).toBe(DAYS);
  // Committed through the last message: nothing is left to replay.
  const messages = 1 + Math.ceil(rest.length / 20);
  const admin = kafkaClient(bed).admin();
  await admin.connect();
  try {
    const committed = await pollUntil(
      async () =>
        (await admin.fetchOffsets({ groupId: p.groupId, topics: [p.topic] }))[0].partitions[0].offset,
      (o) => Number(o) === messages,
      60_000,
    );
    expect(Number(committed)).toBe(messages);
  } finally {
    await admin.disconnect();
  }
  const m = await workerGet(port, '/metrics');
  // Split by the partition key before sending: ClickHouse never had to refuse a block.
  expect(metricSum(m.body, 'logpipeline_worker_insert_failures_total')).toBe(0);
  expect(metricSum(m.body, 'logpipeline_worker_rows_inserted_total')).toBe(total);
});

test('without a known partition key, ClickHouse refusals split the batch (class split) instead of stalling it', async () => {
  const q = newPipeline('backfill_nokey', 1);
  await createPipeline(bed, q);
  try {
    const lines = Array.from({ length: 300 }, (_, day) => line(day, day));
    const producer = await testProducer(bed);
    await produceLines(producer, q.topic, 1, lines, 150);
    await producer.disconnect();
    const w = spawnWorker(bed, workerConfig(bed, q), await freePort(), 'backfill-nokey');
    try {
      const counts = await pollUntil(
        () => storedCounts(ch, q),
        (c) => c.rows + c.dlq >= lines.length,
        180_000,
      );
      expect(counts).toEqual({ rows: lines.length, distinct: lines.length, dlq: 0, dlqDistinct: 0 });
    } finally {
      await stopWorker(w, 5_000);
    }
  } finally {
    await dropPipeline(bed, q);
  }
});

test('a shuffled import killed between the key groups of a batch is stored exactly once after the restart', async () => {
  const q = newPipeline('backfill_crash', 1);
  await createPipeline(bed, q);
  const workers: WorkerProcess[] = [];
  try {
    // Every batch spans all 730 days (8 key groups, each inserted separately).
    const lines = Array.from({ length: DAYS * 10 }, (_, n) => line((n * 7919) % DAYS, n));
    const producer = await testProducer(bed);
    await produceLines(producer, q.topic, 1, lines, 50);
    await producer.disconnect();
    const cfg = workerConfig(bed, q, {
      batch: { maxRows: 4_000, maxBytes: 4 * 1024 * 1024, maxDelayMs: 300 },
    });
    cfg.clickhouse.partitionBy = { column: 'ts', function: 'toYYYYMMDD' };
    const port = await freePort();
    workers.push(spawnWorker(bed, cfg, port, 'backfill-crash-0'));
    // Kill as soon as the first group of the first batch is stored: its other groups are not yet.
    await pollUntil(
      () => storedCounts(ch, q),
      (c) => c.rows > 0,
      120_000,
      25,
    );
    workers[0].child.kill('SIGKILL');
    await workers[0].exited;
    const atKill = await storedCounts(ch, q);
    workers.push(spawnWorker(bed, cfg, port, 'backfill-crash-1'));
    await pollUntil(
      () => storedCounts(ch, q),
      (c) => c.rows + c.dlq >= lines.length,
      240_000,
    );
    await waitCaughtUp(bed, q);
    // Re-cut from the journal, regrouped into the same bodies under the same tokens: no duplicate.
    expect(await storedCounts(ch, q)).toEqual({
      rows: lines.length,
      distinct: lines.length,
      dlq: 0,
      dlqDistinct: 0,
    });
    expect(atKill.rows).toBeLessThan(lines.length);
    expect(fs.readFileSync(workers[1].logFile, 'utf8')).toContain('re-cutting journaled batches');
    expect(await stopWorker(workers[1])).toBe(0);
  } finally {
    for (const w of workers) await stopWorker(w, 5_000);
    await dropPipeline(bed, q);
  }
});
