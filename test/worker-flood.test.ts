/**
 * Floods, with a real worker, Kafka and ClickHouse: a message of 900,000 newlines is counted as
 * blank lines (metric), not 900,000 dead letters; a message with more lines than
 * maxLinesPerMessage stores the first ones and dead-letters the rest as ONE record; a batch whose
 * dead letters weigh several MiB (incompressible) reaches the dead-letter topic in sends below the
 * topic's max.message.bytes, every letter exactly where the table has it.
 */
import { randomBytes } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { generateSampleLines } from './fixtures/samples';
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
} from './worker-support';

jest.setTimeout(240_000);

const bed = readTestBed();
const p = newPipeline('flood', 1);
const CAP = 1_000;
const CAPPED_LINES = 5_000;
const GARBAGE = 3_000;
let ch: ClickHouseClient;
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  ch = chClient(bed);
  await createPipeline(bed, p);
});

afterAll(async () => {
  if (worker) await stopWorker(worker, 5_000);
  await dropPipeline(bed, p);
  await ch.close();
});

async function dlqTopicCount(): Promise<number> {
  const admin = kafkaClient(bed).admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(p.dlqTopic);
    return offsets.reduce((n, o) => n + Number(o.high) - Number(o.low), 0);
  } finally {
    await admin.disconnect();
  }
}

test('blank floods are counted, long messages capped, heavy dead letters chunked', async () => {
  const producer = await testProducer(bed);
  // 1. 900,000 newlines in one message (900 KB, under the broker's 1 MiB).
  await produceLines(producer, p.topic, 1, [Buffer.alloc(900_000, 10)], 1);
  // 2. One message of 5,000 valid lines: 1,000 stored, 4,000 dead-lettered as one record.
  const capped = generateSampleLines('fortigate', CAPPED_LINES, { seed: 5 });
  await produceLines(producer, p.topic, 1, capped, CAPPED_LINES);
  // 3. 3,000 incompressible garbage lines of ~1.4 KB: ~4 MiB of dead letters in one batch.
  const garbage = Array.from({ length: GARBAGE }, (_, i) =>
    Buffer.from(`garbage ${i} ${randomBytes(1024).toString('base64')}`),
  );
  await produceLines(producer, p.topic, 1, garbage, 100);
  await producer.disconnect();

  const port = await freePort();
  const cfg = workerConfig(bed, p, {
    batch: { maxRows: 1_000_000, maxBytes: 16 * 1024 * 1024, maxDelayMs: 500, maxLinesPerMessage: CAP },
  });
  worker = spawnWorker(bed, cfg, port, 'flood');
  const expectedDlq = 1 + GARBAGE;
  const counts = await pollUntil(
    () => storedCounts(ch, p),
    (c) => c.rows >= CAP && c.dlq >= expectedDlq,
    180_000,
  );
  const reasons = await (
    await ch.query({
      query: `SELECT reason, count() AS c FROM ${p.database}.\`${p.dlqTable}\` GROUP BY reason ORDER BY reason`,
      format: 'JSONEachRow',
    })
  ).json<{ reason: string; c: string }>();
  expect(reasons.map((r) => [r.reason, Number(r.c)])).toEqual([
    ['too_many_lines', 1],
    ['unknown_format', GARBAGE],
  ]);
  expect(counts).toEqual({ rows: CAP, distinct: CAP, dlq: expectedDlq, dlqDistinct: expectedDlq });
  const [capRow] = await (
    await ch.query({
      query: `SELECT reason, length(raw) AS n FROM ${p.database}.\`${p.dlqTable}\` WHERE reason = 'too_many_lines'`,
      format: 'JSONEachRow',
    })
  ).json<{ reason: string; n: string }>();
  const rest = capped.slice(CAP);
  expect(Number(capRow.n)).toBe(rest.reduce((n, l) => n + l.length, 0) + rest.length - 1);
  expect(await pollUntil(dlqTopicCount, (n) => n >= expectedDlq, 60_000)).toBe(expectedDlq);
  const m = await workerGet(port, '/metrics');
  expect(metricSum(m.body, 'logpipeline_worker_blank_lines_total')).toBe(900_000);
  expect(m.body).not.toMatch(/dead_letters_total\{reason="empty_line"\}/);
  expect(worker.child.exitCode).toBeNull();
});
