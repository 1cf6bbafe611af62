/**
 * End to end through the real worker process: 50k lines of the vendor mix (half packed 100 lines
 * per Kafka message, half one line per message) with 1% garbage. Every valid line must be stored
 * exactly once with the right Kafka partition/offset and its original bytes; every garbage line
 * must be in the `_dlq` table and on the dead-letter topic with its reason and source position.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { freePort } from './env/process';
import { readTestBed } from './env/testbed';
import {
  chClient,
  createPipeline,
  dropPipeline,
  expectedKeys,
  kafkaClient,
  makeTraffic,
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

jest.setTimeout(240_000);

const bed = readTestBed();
const LINES = 50_000;
const PARTITIONS = 3;
const p = newPipeline('exactly_once', PARTITIONS);
const traffic = makeTraffic(LINES, 100);
const packed = traffic.lines.slice(0, LINES / 2);
const single = traffic.lines.slice(LINES / 2);
let ch: ClickHouseClient;
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  ch = chClient(bed);
  await createPipeline(bed, p);
});

afterAll(async () => {
  if (worker) await stopWorker(worker);
  await dropPipeline(bed, p);
  await ch.close();
});

test('stores every valid line once and dead-letters every garbage line', async () => {
  expect(traffic.garbage).toBe(LINES / 100);
  const producer = await testProducer(bed);
  await produceLines(producer, p.topic, PARTITIONS, packed, 100);
  await produceLines(producer, p.topic, PARTITIONS, single, 1);
  await producer.disconnect();

  const port = await freePort();
  worker = spawnWorker(bed, workerConfig(bed, p), port, 'exactly-once');
  const counts = await pollUntil(
    () => storedCounts(ch, p),
    (c) => c.rows + c.dlq >= LINES,
    180_000,
    1_000,
  );
  // Judge once every partition is committed to its end: nothing is in flight any more.
  await waitCaughtUp(bed, p);
  const final = await storedCounts(ch, p);
  expect(final).toEqual(counts);
  expect(final).toEqual({
    rows: LINES - traffic.garbage,
    distinct: LINES - traffic.garbage,
    dlq: traffic.garbage,
    dlqDistinct: traffic.garbage,
  });

  // Content: every row is the right line at the right partition/offset.
  const all = expectedKeys(
    [
      { lines: packed, perMessage: 100 },
      { lines: single, perMessage: 1 },
    ],
    PARTITIONS,
  );
  const isGarbage = (k: string) => k.includes('garbage #');
  expect((await storedKeys(ch, p)).sort()).toEqual(all.filter((k) => !isGarbage(k)).sort());
  expect((await storedKeys(ch, p, p.dlqTable, ['`partition`', '`offset`'])).sort()).toEqual(
    all.filter(isGarbage).sort(),
  );
  const reasons = await (
    await ch.query({
      query: `SELECT DISTINCT reason FROM ${p.database}.\`${p.dlqTable}\``,
      format: 'JSONEachRow',
    })
  ).json<{ reason: string }>();
  expect(reasons.map((r) => r.reason)).toEqual(['invalid_utf8']);

  // Metrics agree, and the worker is ready.
  const metrics = (await workerGet(port, '/metrics')).body;
  expect(metricSum(metrics, 'logpipeline_worker_lines_total')).toBe(LINES);
  expect(metricSum(metrics, 'logpipeline_worker_rows_inserted_total')).toBe(LINES - traffic.garbage);
  expect(metricSum(metrics, 'logpipeline_worker_dead_letters_total')).toBe(traffic.garbage);
  expect(metrics).toContain('logpipeline_worker_dead_letters_total{reason="invalid_utf8"} 500');
  expect(metrics).toMatch(/logpipeline_worker_insert_failures_total\{kind="retriable"\} 0/);
  expect(metricSum(metrics, 'logpipeline_worker_partition_lag')).toBe(0);
  expect(await workerGet(port, '/readyz')).toEqual({ status: 200, body: 'ok\n' });
  expect((await workerGet(port, '/healthz')).status).toBe(200);

  // SIGTERM drains and exits 0; the group's committed offsets cover every message.
  expect(await stopWorker(worker)).toBe(0);
  worker = undefined;
  const admin = kafkaClient(bed).admin();
  await admin.connect();
  const [committed] = await admin.fetchOffsets({ groupId: p.groupId, topics: [p.topic] });
  const ends = await admin.fetchTopicOffsets(p.topic);
  await admin.disconnect();
  for (const e of ends)
    expect(committed.partitions.find((c) => c.partition === e.partition)?.offset).toBe(e.high);
});

test('puts the same garbage on the dead-letter topic with reason and source position', async () => {
  const consumer = kafkaClient(bed).consumer({ groupId: `${p.groupId}.dlq-reader` });
  const seen: Array<{ key: string; value: string; reason: string; offset: string }> = [];
  await consumer.connect();
  await consumer.subscribe({ topic: p.dlqTopic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      seen.push({
        key: message.key!.toString(),
        value: message.value!.toString('latin1'),
        reason: String(message.headers?.reason),
        offset: String(message.headers?.source_offset),
      });
    },
  });
  await pollUntil(
    async () => seen.length,
    (n) => n >= traffic.garbage,
    60_000,
  );
  await consumer.disconnect();
  // At least once on the topic; exactly the garbage lines, each with its position.
  const distinct = new Map(seen.map((s) => [`${s.key}|${s.value}`, s]));
  expect(distinct.size).toBe(traffic.garbage);
  for (const s of distinct.values()) {
    expect(s.value).toMatch(/^garbage #\d+ /);
    expect(s.reason).toBe('invalid_utf8');
    expect(s.key.endsWith(`:${s.offset}`)).toBe(true);
  }
});
