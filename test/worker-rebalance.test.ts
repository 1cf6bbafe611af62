/**
 * Scaling out and back in while traffic flows: two workers, then a third joins (partitions move
 * to it), then one of the first two drains on SIGTERM and leaves. Every rebalance abandons
 * in-flight batches on the old owner; the new owner re-cuts them from the journal, so every line
 * must still be stored exactly once.
 */
import fs from 'node:fs';
import type { ClickHouseClient } from '@clickhouse/client';
import { freePort } from './env/process';
import { readTestBed } from './env/testbed';
import {
  chClient,
  createPipeline,
  dropPipeline,
  expectedKeys,
  makeTraffic,
  newPipeline,
  pollUntil,
  produceLines,
  spawnWorker,
  stopWorker,
  storedCounts,
  storedKeys,
  testProducer,
  workerConfig,
  type WorkerProcess,
  waitCaughtUp,
} from './worker-support';

jest.setTimeout(300_000);

const bed = readTestBed();
const PARTITIONS = 6;
const CHUNKS = 24;
const LINES_PER_CHUNK = 2_500;
const p = newPipeline('rebalance', PARTITIONS);
const traffic = makeTraffic(CHUNKS * LINES_PER_CHUNK, 100, 31);
let ch: ClickHouseClient;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  ch = chClient(bed);
  await createPipeline(bed, p);
});

afterAll(async () => {
  for (const w of workers) await stopWorker(w, 5_000);
  await dropPipeline(bed, p);
  await ch.close();
});

function chunk(i: number): { lines: Buffer[]; perMessage: number } {
  return {
    lines: traffic.lines.slice(i * LINES_PER_CHUNK, (i + 1) * LINES_PER_CHUNK),
    perMessage: i % 3 === 0 ? 1 : 25,
  };
}

/** Partitions of the latest assignment a worker logged. */
function lastAssignment(w: WorkerProcess): number[] | undefined {
  const lines = fs
    .readFileSync(w.logFile, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"partitions assigned"'));
  return lines.length ? (JSON.parse(lines[lines.length - 1]).partitions as number[]) : undefined;
}

test('2 -> 3 -> 2 workers: nothing lost, nothing duplicated', async () => {
  const cfg = workerConfig(bed, p, { batch: { maxRows: 2_000, maxBytes: 1024 * 1024, maxDelayMs: 150 } });
  const producer = await testProducer(bed);
  const producing = (async () => {
    for (let i = 0; i < CHUNKS; i++) {
      const c = chunk(i);
      await produceLines(producer, p.topic, PARTITIONS, c.lines, c.perMessage);
      await new Promise((r) => setTimeout(r, 300));
    }
  })();
  const start = async (tag: string) => {
    const w = spawnWorker(bed, cfg, await freePort(), tag);
    workers.push(w);
    return w;
  };
  const [a, b] = [await start('a'), await start('b')];
  await pollUntil(
    async () => [lastAssignment(a), lastAssignment(b)],
    (x) => x.every((y) => y !== undefined && y.length === 3),
    60_000,
  );
  await pollUntil(
    () => storedCounts(ch, p),
    (c) => c.rows > 5_000,
    60_000,
  );

  const c = await start('c');
  await pollUntil(
    async () => [a, b, c].map(lastAssignment),
    (x) => x.every((y) => y !== undefined && y.length === 2),
    60_000,
  );
  expect([a, b, c].flatMap((w) => lastAssignment(w)!).sort()).toEqual([0, 1, 2, 3, 4, 5]);
  const mid = (await storedCounts(ch, p)).rows;
  await pollUntil(
    () => storedCounts(ch, p),
    (x) => x.rows > mid + 5_000,
    60_000,
  );

  expect(await stopWorker(b)).toBe(0);
  await pollUntil(
    async () => [a, c].map(lastAssignment),
    (x) => x.every((y) => y !== undefined && y.length === 3),
    60_000,
  );
  await producing;
  await producer.disconnect();

  const total = CHUNKS * LINES_PER_CHUNK;
  await pollUntil(
    () => storedCounts(ch, p),
    (x) => x.rows + x.dlq >= total,
    180_000,
    1_000,
  );
  // Judge once every partition is committed to its end: nothing is in flight any more.
  await waitCaughtUp(bed, p);
  expect(await storedCounts(ch, p)).toEqual({
    rows: total - traffic.garbage,
    distinct: total - traffic.garbage,
    dlq: traffic.garbage,
    dlqDistinct: traffic.garbage,
  });
  const expected = expectedKeys(
    Array.from({ length: CHUNKS }, (_, i) => chunk(i)),
    PARTITIONS,
  ).filter((k) => !k.includes('garbage #'));
  expect((await storedKeys(ch, p)).sort()).toEqual(expected.sort());
  expect(await stopWorker(a)).toBe(0);
  expect(await stopWorker(c)).toBe(0);
});
