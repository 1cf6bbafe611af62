/**
 * Record-batch bombs (issue 16's review): a producer of the topic can write a small compressed
 * batch that inflates without limit. kcat (librdkafka) writes one batch per codec — zstd, gzip, lz4,
 * snappy — each holding one 8 MiB value of a single repeated byte, between good plain lines into
 * partition 0, and good lines only into partition 1. The worker's batch bound is lowered to 1 MiB
 * (kafka.maxValueBytes 256 KiB x 4), so every bomb is past it. A real worker must store every good
 * line exactly once, dead-letter each bomb batch as ONE entry (partition, its offset, reason
 * `record batch not decodable: <codec>: exceeds 1048576 bytes (offsets a-b)`, the compressed bytes
 * as they came), commit past it, count it, and log one summary line. Judged on committed offsets.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import type { ClickHouseClient } from '@clickhouse/client';
import { freePort } from './env/process';
import { KcatTopic } from './kcat-topic';
import { readTestBed } from './env/testbed';
import {
  chClient,
  createPipeline,
  dropPipeline,
  newPipeline,
  spawnWorker,
  stopWorker,
  storedKeys,
  waitCaughtUp,
  workerConfig,
  workerGet,
  type WorkerProcess,
} from './worker-support';

jest.setTimeout(300_000);

const bed = readTestBed();
const p = newPipeline('batchdecode', 2);
const BOMB_BYTES = 8 << 20;
const CODECS = ['zstd', 'gzip', 'lz4', 'snappy'];
const kcat = new KcatTopic(bed.kafka!.bootstrap, p.topic, 2);
let ch: ClickHouseClient;
let worker: WorkerProcess | undefined;
const bombOffsets: Array<{ offset: number; codec: string }> = [];

beforeAll(async () => {
  expect(spawnSync('kcat', ['-V']).status).toBe(0);
  ch = chClient(bed);
  await createPipeline(bed, p, undefined, 'producer');
  kcat.good(0, 20, 1);
  CODECS.forEach((codec, i) => {
    // librdkafka refuses a message larger than its own message.max.bytes (1 MB) before compressing.
    const options = { codec, properties: ['message.max.bytes=20000000'] };
    bombOffsets.push({ offset: kcat.produce(0, [Buffer.alloc(BOMB_BYTES, 0x41)], options), codec });
    kcat.good(0, 10, 2 + i);
  });
  kcat.good(1, 40, 9);
});

afterAll(async () => {
  if (worker) await stopWorker(worker, 5_000);
  await dropPipeline(bed, p);
  await ch.close();
  kcat.close();
});

test('record batches inflating past the bound are dead-lettered whole; good lines stored once; offsets move past', async () => {
  const port = await freePort();
  const cfg = workerConfig(bed, p);
  cfg.kafka.maxValueBytes = 256 << 10; // batch bound 4x: 1 MiB
  worker = spawnWorker(bed, cfg, port, 'batch-decode');
  await waitCaughtUp(bed, p, 240_000);
  expect(worker.child.exitCode).toBeNull();

  const rows = await storedKeys(ch, p);
  expect(rows.length).toBe(kcat.expectedRows.length);
  expect(rows.sort()).toEqual([...kcat.expectedRows].sort());

  const dead = await (
    await ch.query({
      query: `SELECT \`partition\` AS p, \`offset\` AS o, reason, length(raw) AS n FROM ${p.database}.\`${p.dlqTable}\` ORDER BY p, o`,
      format: 'JSONEachRow',
    })
  ).json<{ p: number; o: string; reason: string; n: number }>();
  expect(dead.map((d) => [d.p, Number(d.o), d.reason])).toEqual(
    bombOffsets.map((b) => [
      0,
      b.offset,
      `record batch not decodable: ${b.codec}: exceeds 1048576 bytes (offsets ${b.offset}-${b.offset})`,
    ]),
  );
  // The compressed records as stored, not the 8 MiB they inflate to.
  for (const d of dead) expect(d.n).toBeGreaterThan(0);
  for (const d of dead) expect(d.n).toBeLessThan(1 << 20);

  const metrics = (await workerGet(port, '/metrics')).body;
  const m = /^logpipeline_worker_record_batch_decode_failures_total\{reason="too_large"\} (\d+)/m.exec(
    metrics,
  );
  // A rebalance under load re-reads uncommitted batches (and counts them again): at least, never fewer.
  expect(Number(m?.[1] ?? 0)).toBeGreaterThanOrEqual(CODECS.length);
  expect(metrics).toMatch(
    /^logpipeline_worker_dead_letters_total\{reason="record_batch_not_decodable"\} [1-9]/m,
  );

  const log = fs.readFileSync(worker.logFile, 'utf8');
  expect(log.split('\n').filter((l) => l.includes('record batches not decodable'))).toHaveLength(1);
});
