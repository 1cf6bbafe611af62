/**
 * Every Kafka codec, with a real librdkafka producer: kcat (the library of rsyslog omkafka, Fluent
 * Bit and most relays) produces 500 lines each with gzip, lz4, snappy and zstd into a topic with
 * `compression.type: producer` (the broker keeps the producers' batches as they are), and a real
 * worker stores exactly 2000 rows, decoding the record batches with its own decoder
 * (common/src/kafka/record-decoder.ts) into record runs (record-run.ts: one object per record batch,
 * decompressed when taken) and building fetched batches with fetch-batch.ts. The other direction: kafkajs (the worker's and operator's
 * client) produces with each codec and kcat reads back every line.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import type { ClickHouseClient } from '@clickhouse/client';
import { CompressionTypes } from 'kafkajs';
import { generateSampleLines } from './fixtures/samples';
import { freePort } from './env/process';
import { readTestBed } from './env/testbed';
import {
  chClient,
  createPipeline,
  kafkaClient,
  dropPipeline,
  newPipeline,
  pollUntil,
  spawnWorker,
  stopWorker,
  storedCounts,
  testProducer,
  workerConfig,
  type WorkerProcess,
} from './worker-support';
import { createTopicsWithLeaders } from './env/kafka-topics';

jest.setTimeout(240_000);

const bed = readTestBed();
const CODECS = ['gzip', 'lz4', 'snappy', 'zstd'] as const;
const PER_CODEC = 500;
const p = newPipeline('codecs', CODECS.length);
let ch: ClickHouseClient;
let worker: WorkerProcess | undefined;

/** Produces `lines` (one message each) with kcat into one partition, compressed with `codec`. */
function kcatProduce(topic: string, partition: number, codec: string, lines: Buffer[]): void {
  const input = Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')]));
  // A long linger packs many messages into each record batch, so every batch is really compressed.
  execFileSync(
    'kcat',
    [
      '-P',
      '-b',
      bed.kafka!.bootstrap,
      '-t',
      topic,
      '-p',
      String(partition),
      '-z',
      codec,
      '-X',
      'linger.ms=200',
    ],
    { input, stdio: ['pipe', 'pipe', 'pipe'], timeout: 60_000 },
  );
}

/** Reads a whole partition with kcat (one value per line); exits at the end of the partition. */
function kcatConsume(topic: string, partition: number): string[] {
  const out = spawnSync(
    'kcat',
    ['-C', '-b', bed.kafka!.bootstrap, '-t', topic, '-p', String(partition), '-o', 'beginning', '-e', '-q'],
    { encoding: 'latin1', timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
  );
  if (out.status !== 0) throw new Error(`kcat -C failed: ${out.stderr}`);
  return out.stdout.split('\n').filter((l) => l !== '');
}

beforeAll(async () => {
  expect(spawnSync('kcat', ['-V']).status).toBe(0);
  ch = chClient(bed);
  await createPipeline(bed, p, undefined, 'producer');
});

afterAll(async () => {
  if (worker) await stopWorker(worker, 5_000);
  await dropPipeline(bed, p);
  await ch.close();
});

test('a worker stores exactly what kcat produced with gzip, lz4, snappy and zstd', async () => {
  CODECS.forEach((codec, i) =>
    kcatProduce(p.topic, i, codec, generateSampleLines('mix', PER_CODEC, { seed: 100 + i })),
  );
  const port = await freePort();
  worker = spawnWorker(bed, workerConfig(bed, p), port, 'codecs');
  const total = CODECS.length * PER_CODEC;
  const counts = await pollUntil(
    () => storedCounts(ch, p),
    (c) => c.rows + c.dlq >= total || worker!.child.exitCode !== null,
    180_000,
  );
  expect(worker.child.exitCode).toBeNull();
  expect(counts).toEqual({ rows: total, distinct: total, dlq: 0, dlqDistinct: 0 });
  // The worker decoded librdkafka's record batches with its own decoder (as record runs) and Batch.
  expect(fs.readFileSync(worker.logFile, 'utf8')).toMatch(
    /"kafka record decoder".*"decoder":"runs".*"batch":"fast"/,
  );
  const perPartition = await (
    await ch.query({
      query: `SELECT kafka_partition AS p, count() AS c FROM ${p.database}.\`${p.table}\` GROUP BY p ORDER BY p`,
      format: 'JSONEachRow',
    })
  ).json<{ p: number; c: string }>();
  expect(perPartition.map((r) => [r.p, Number(r.c)])).toEqual(CODECS.map((_c, i) => [i, PER_CODEC]));
});

test('kcat reads back what kafkajs produced with every codec', async () => {
  const topic = `${p.topic}.out`;
  const admin = kafkaClient(bed).admin();
  await admin.connect();
  await createTopicsWithLeaders(admin, [
    { topic, numPartitions: 1, configEntries: [{ name: 'compression.type', value: 'producer' }] },
  ]);
  const producer = await testProducer(bed);
  const types = [CompressionTypes.GZIP, CompressionTypes.LZ4, CompressionTypes.Snappy, CompressionTypes.ZSTD];
  const sent: string[][] = [];
  try {
    for (let i = 0; i < types.length; i++) {
      const lines = generateSampleLines('mix', 200, { seed: 200 + i }).map((l) => l.toString('latin1'));
      sent.push(lines);
      await producer.send({
        topic,
        acks: -1,
        compression: types[i],
        messages: lines.map((l) => ({ partition: 0, value: Buffer.from(l, 'latin1') })),
      });
    }
  } finally {
    await producer.disconnect();
  }
  try {
    expect(kcatConsume(topic, 0)).toEqual(sent.flat());
  } finally {
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
  }
});
