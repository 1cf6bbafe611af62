/**
 * The worker process is SIGKILLed mid-stream four times while traffic keeps arriving, and
 * restarted each time. Every line must end up stored exactly once: no loss from data that was
 * fetched but not inserted, no duplicates from batches inserted but not committed (the restarted
 * worker re-cuts them from the journal in the commit metadata and ClickHouse drops them by token).
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
const PARTITIONS = 3;
const CHUNKS = 30;
const LINES_PER_CHUNK = 2_000;
const KILLS = 4;
const p = newPipeline('crash', PARTITIONS);
const traffic = makeTraffic(CHUNKS * LINES_PER_CHUNK, 100, 11);
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

/** Chunk i: even chunks packed 50 lines per message, odd chunks one line per message. */
function chunk(i: number): { lines: Buffer[]; perMessage: number } {
  return {
    lines: traffic.lines.slice(i * LINES_PER_CHUNK, (i + 1) * LINES_PER_CHUNK),
    perMessage: i % 2 === 0 ? 50 : 1,
  };
}

test('every line is stored exactly once across repeated SIGKILLs and restarts', async () => {
  const producer = await testProducer(bed);
  const producing = (async () => {
    for (let i = 0; i < CHUNKS; i++) {
      const c = chunk(i);
      await produceLines(producer, p.topic, PARTITIONS, c.lines, c.perMessage);
      await new Promise((r) => setTimeout(r, 250));
    }
  })();

  const port = await freePort();
  // Small batches and a short delay: many cuts, so every kill lands with batches in flight.
  // Small fetches too: with the large default fetches a worker takes a whole chunk at once and
  // most kills land between batches, leaving no journaled cut for the next worker to re-cut.
  const cfg = workerConfig(bed, p, {
    batch: { maxRows: 1_500, maxBytes: 1024 * 1024, maxDelayMs: 150 },
    tuning: { maxBytesPerPartition: 256 * 1024, fetchMaxBytes: 1024 * 1024, fetchMinBytes: 1 },
  });
  let worker = spawnWorker(bed, cfg, port, 'crash-0');
  workers.push(worker);
  for (let k = 1; k <= KILLS; k++) {
    // Kill while inserts are happening: wait for the stored count to move first.
    const before = (await storedCounts(ch, p)).rows;
    await pollUntil(
      () => storedCounts(ch, p),
      (c) => c.rows > before,
      60_000,
      100,
    );
    await new Promise((r) => setTimeout(r, 300 + Math.floor(Math.random() * 700)));
    worker.child.kill('SIGKILL');
    await worker.exited;
    worker = spawnWorker(bed, cfg, port, `crash-${k}`);
    workers.push(worker);
  }
  await producing;
  await producer.disconnect();

  const total = CHUNKS * LINES_PER_CHUNK;
  await pollUntil(
    () => storedCounts(ch, p),
    (c) => c.rows + c.dlq >= total,
    180_000,
    1_000,
  );
  // Judge once every partition is committed to its end: nothing is in flight any more.
  await waitCaughtUp(bed, p);
  const final = await storedCounts(ch, p);
  expect(final).toEqual({
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

  // The restarts really resumed from journaled cuts (the path this test exists for).
  const recuts = workers
    .slice(1)
    .filter((w) => fs.readFileSync(w.logFile, 'utf8').includes('re-cutting journaled batches')).length;
  expect(recuts).toBeGreaterThanOrEqual(1);
  expect(await stopWorker(worker)).toBe(0);
});
