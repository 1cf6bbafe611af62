/**
 * One partition never blocks another. A small HTTP proxy in front of ClickHouse (the worker talks
 * to it as to ClickHouse) answers 503 to every INSERT whose rows belong to Kafka partition 1 for
 * about three minutes (until the test releases it) — what a sink unavailable for that partition's
 * data looks like — and forwards everything else. Meanwhile partition 0 keeps storing and
 * committing; partition 1's committed offset stays put and recovers after. After a worker restart,
 * count() equals the distinct lines.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ClickHouseClient } from '@clickhouse/client';
import { freePort } from './env/process';
import { readTestBed } from './env/testbed';
import {
  chClient,
  createPipeline,
  dropPipeline,
  kafkaClient,
  makeTraffic,
  newPipeline,
  pollUntil,
  produceLines,
  spawnWorker,
  stopWorker,
  storedCounts,
  testProducer,
  workerConfig,
  type WorkerProcess,
} from './worker-support';

jest.setTimeout(600_000);

const bed = readTestBed();
const p = newPipeline('isolation', 2);
const HOLD_MS = 180_000;
const HELD_PARTITION = 1;
let ch: ClickHouseClient;
let worker: WorkerProcess | undefined;
let proxy: http.Server;
/** Set while the proxy refuses partition 1's INSERTs; cleared by the test, not by a clock. */
let holding = false;
let held = 0;

/**
 * True when an INSERT into the data table carries rows of HELD_PARTITION (batches are per
 * partition). The deduplication token names it (`<topic>/<partition>/<range>/<salt>`) whatever the
 * body's format; without a token, the first TSV row decides.
 */
function heldInsert(url: string, body: Buffer): boolean {
  const params = new URL(url, 'http://x').searchParams;
  const query = params.get('query') ?? '';
  const m = /^INSERT INTO\s+\S+?`?([^`.\s]+)`?\s*\(([^)]*)\)/i.exec(query);
  if (!m || m[1] !== p.table) return false;
  const token = params.get('insert_deduplication_token');
  if (token?.startsWith(`${p.topic}/`)) return token.split('/')[1] === String(HELD_PARTITION);
  const column = m[2].split(',').findIndex((c) => c.trim().replace(/`/g, '') === 'kafka_partition');
  if (column < 0) return false;
  const firstRow = body.subarray(0, Math.max(0, body.indexOf(10))).toString('latin1');
  return firstRow.split('\t')[column] === String(HELD_PARTITION);
}

function startProxy(target: string): Promise<string> {
  const upstream = new URL(target);
  proxy = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (holding && heldInsert(req.url ?? '', body)) {
        held++;
        res.writeHead(503, { 'content-type': 'text/plain' });
        res.end(`partition ${HELD_PARTITION} is held by the test proxy`);
        return;
      }
      const fwd = http.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      fwd.on('error', () => {
        res.writeHead(502);
        res.end('upstream error');
      });
      fwd.end(body);
    });
  });
  return new Promise((resolve) =>
    proxy.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`)),
  );
}

async function committed(): Promise<number[]> {
  const admin = kafkaClient(bed).admin();
  await admin.connect();
  try {
    const [t] = await admin.fetchOffsets({ groupId: p.groupId, topics: [p.topic] });
    return [...t.partitions].sort((a, b) => a.partition - b.partition).map((x) => Number(x.offset));
  } finally {
    await admin.disconnect();
  }
}

beforeAll(async () => {
  ch = chClient(bed);
  await createPipeline(bed, p);
});

afterAll(async () => {
  if (worker) await stopWorker(worker, 5_000);
  await new Promise((r) => proxy?.close(r));
  await dropPipeline(bed, p);
  await ch.close();
});

test('partition 0 keeps committing while partition 1 is held for 3 minutes; exact after a restart', async () => {
  const url = await startProxy(bed.clickhouse!.url);
  const traffic = makeTraffic(40_000, 0, 11).lines;
  const producer = await testProducer(bed);
  let sent = 0;
  const produce = async (n: number) => {
    if (sent + n > traffic.length) throw new Error(`only ${traffic.length} test lines, ${sent} sent`);
    await produceLines(producer, p.topic, 2, traffic.slice(sent, sent + n), 10);
    sent += n;
  };
  const cfg = workerConfig(bed, p, { batch: { maxRows: 500, maxBytes: 4 * 1024 * 1024, maxDelayMs: 200 } });
  cfg.clickhouse.url = url;
  await produce(5_000);
  // The hold lasts about HOLD_MS and ends only after the last wave was read: a clock-driven
  // release could let partition 1 advance before a slow wave's read on a loaded machine.
  holding = true;
  const holdEnd = Date.now() + HOLD_MS;
  worker = spawnWorker(bed, cfg, await freePort(), 'isolation');

  // While held: partition 0 advances through every wave, partition 1 never.
  const early = await pollUntil(committed, (c) => c.length === 2 && c[0] >= 250 && c[1] >= 0, 60_000);
  expect(early[0]).toBe(250);
  const heldAt = early[1];
  const waves: number[][] = [];
  // Each wave takes 2 000 lines; 2 000 more are kept for the restart.
  while (waves.length < 4 || (Date.now() < holdEnd - 20_000 && sent + 4_000 <= traffic.length)) {
    await produce(2_000);
    const target = (sent / 10 / 2) | 0;
    const wave = await pollUntil(committed, (c) => c[0] >= target, 60_000);
    expect(wave[0]).toBeGreaterThanOrEqual(target);
    waves.push(wave);
    await new Promise((r) => setTimeout(r, 10_000));
  }
  holding = false;
  expect(held).toBeGreaterThan(10);
  expect(waves.length).toBeGreaterThanOrEqual(4);
  for (let i = 0; i < waves.length; i++) {
    expect(waves[i][1]).toBe(heldAt);
    if (i > 0) expect(waves[i][0]).toBeGreaterThan(waves[i - 1][0]);
  }
  expect(worker.child.exitCode).toBeNull();

  // Released: partition 1 catches up; everything stored once.
  const perPartition = sent / 10 / 2;
  await pollUntil(committed, (c) => c[0] === perPartition && c[1] === perPartition, 120_000);
  expect(await committed()).toEqual([perPartition, perPartition]);
  expect(await storedCounts(ch, p)).toEqual({ rows: sent, distinct: sent, dlq: 0, dlqDistinct: 0 });

  // Restart: nothing replayed twice, new lines stored once.
  expect(await stopWorker(worker)).toBe(0);
  worker = spawnWorker(bed, cfg, await freePort(), 'isolation-2');
  await produce(2_000);
  await producer.disconnect();
  const after = await pollUntil(
    () => storedCounts(ch, p),
    (c) => c.rows >= sent,
    120_000,
  );
  await pollUntil(committed, (c) => c[0] === sent / 20 && c[1] === sent / 20, 60_000);
  expect(after).toEqual({ rows: sent, distinct: sent, dlq: 0, dlqDistinct: 0 });
  expect((await storedCounts(ch, p)).rows).toBe(sent);
});
