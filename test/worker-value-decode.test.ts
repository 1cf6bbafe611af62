/**
 * Hostile `content-encoding` headers (issue 16's value codec), produced by a real librdkafka
 * producer: kcat writes forged values — garbage marked zstd, a zstd bomb inflating past the worker's
 * 16 MiB bound, a truncated LZ4 block, an LZ4 size prefix of 4 GiB, an unknown encoding — between good
 * plain, zstd and LZ4 messages into partition 0, and good lines only into partition 1. A real worker
 * must store every good line exactly once, dead-letter each forged message whole (one entry, bytes
 * as sent, reason `value not decodable: <codec error>`, in the DLQ table and topic), commit past
 * them, count them in logpipeline_worker_value_decode_failures_total and log one summary line, not
 * one per message. Everything is judged on conditions (committed offsets), never on time.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import zlib from 'node:zlib';
import type { ClickHouseClient } from '@clickhouse/client';
import { encodeValue } from '../common/src/kafka/value-codec';
import { generateSampleLines } from './fixtures/samples';
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
const p = newPipeline('valuedecode', 2);
const kcat = new KcatTopic(bed.kafka!.bootstrap, p.topic, 2);
const zstd = zlib as unknown as { zstdCompressSync(b: Buffer): Buffer };
let ch: ClickHouseClient;
let worker: WorkerProcess | undefined;

/** What each forged message must become in the dead-letter queue. */
const expectedDead: Array<{ partition: number; offset: number; raw: Buffer; reason: string | RegExp }> = [];

/** One good packed message of `count` lines, compressed as the syslog receiver does. */
function goodPacked(partition: number, codec: 'zstd' | 'lz4', count: number, seed: number): void {
  const lines = generateSampleLines('mix', count, { seed });
  const wire = encodeValue(Buffer.concat(lines.flatMap((l, i) => (i ? [Buffer.from('\n'), l] : [l]))), codec);
  const offset = kcat.produce(partition, [wire], {
    headers: [`content-encoding=${codec === 'lz4' ? 'lz4-block' : 'zstd'}`],
  });
  for (const l of lines) kcat.expectRow(partition, offset, l);
}

/** One forged message that must be dead-lettered whole with `reason`. */
function forged(raw: Buffer, encoding: string, reason: string | RegExp): void {
  const offset = kcat.produce(0, [raw], { headers: [`content-encoding=${encoding}`] });
  expectedDead.push({ partition: 0, offset, raw, reason });
}

beforeAll(async () => {
  expect(spawnSync('kcat', ['-V']).status).toBe(0);
  ch = chClient(bed);
  await createPipeline(bed, p, undefined, 'producer');
  kcat.good(0, 20, 1);
  forged(
    Buffer.from('\x28\xb5\x2f\xfd not a zstd frame at all', 'latin1'),
    'zstd',
    /^value not decodable: zstd: /,
  );
  goodPacked(0, 'zstd', 300, 2);
  // ~1 KB on the wire, 24 MiB decoded: past the worker's default bound of 16 MiB.
  const bomb = zstd.zstdCompressSync(Buffer.alloc(24 << 20, 0x41));
  expect(bomb.length).toBeLessThan(4096);
  forged(bomb, 'zstd', 'value not decodable: zstd: exceeds 16777216 bytes');
  kcat.good(0, 10, 3);
  const lz4 = encodeValue(Buffer.concat(generateSampleLines('mix', 50, { seed: 4 })), 'lz4');
  forged(lz4.subarray(0, lz4.length - 9), 'lz4-block', /^value not decodable: lz4-block: /);
  const claim = Buffer.from(lz4);
  claim.writeUInt32LE(0xffffffff, 0);
  forged(claim, 'lz4-block', 'value not decodable: lz4-block: size prefix 4294967295 exceeds 16777216 bytes');
  goodPacked(0, 'lz4', 300, 5);
  forged(
    zlib.gzipSync(Buffer.from('<134>gzip is not ours')),
    'gzip',
    'value not decodable: unknown content-encoding "gzip"',
  );
  kcat.good(0, 20, 6);
  kcat.good(1, 40, 7);
});

afterAll(async () => {
  if (worker) await stopWorker(worker, 5_000);
  await dropPipeline(bed, p);
  await ch.close();
  kcat.close();
});

test('forged content-encoding values are dead-lettered whole; good lines stored once; offsets move past', async () => {
  const port = await freePort();
  worker = spawnWorker(bed, workerConfig(bed, p), port, 'value-decode');
  // Committed up to the log end of both partitions: everything before is durable (rows and DLQ).
  await waitCaughtUp(bed, p, 240_000);
  expect(worker.child.exitCode).toBeNull();

  const rows = await storedKeys(ch, p);
  expect(rows.length).toBe(kcat.expectedRows.length);
  expect(rows.sort()).toEqual([...kcat.expectedRows].sort());

  const dead = await (
    await ch.query({
      query: `SELECT \`partition\` AS p, \`offset\` AS o, reason, hex(raw) AS h FROM ${p.database}.\`${p.dlqTable}\` ORDER BY p, o`,
      format: 'JSONEachRow',
    })
  ).json<{ p: number; o: string; reason: string; h: string }>();
  expect(dead.map((d) => [d.p, Number(d.o)])).toEqual(expectedDead.map((d) => [d.partition, d.offset]));
  dead.forEach((d, i) => {
    expect(d.reason).toMatch(expectedDead[i].reason);
    expect(Buffer.from(d.h, 'hex').equals(expectedDead[i].raw)).toBe(true);
  });

  // The dead-letter topic: one record per forged message, its reason in a header, its bytes whole.
  const out = spawnSync(
    'kcat',
    ['-C', '-b', bed.kafka!.bootstrap, '-t', p.dlqTopic, '-o', 'beginning', '-e', '-q', '-f', '%k\t%S\t%h\n'],
    { encoding: 'utf8', timeout: 60_000 },
  );
  expect(out.status).toBe(0);
  const records = out.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.split('\t'))
    .sort((a, b) => Number(a[0].split(':')[1]) - Number(b[0].split(':')[1]));
  expect(records.map((r) => [r[0], Number(r[1])])).toEqual(
    expectedDead.map((d) => [`0:${d.offset}`, d.raw.length]),
  );
  for (const r of records) expect(r[2]).toMatch(/(^|,)reason=value not decodable: /);

  const metrics = (await workerGet(port, '/metrics')).body;
  const failures = (reason: string) => {
    const m = new RegExp(
      `^logpipeline_worker_value_decode_failures_total\\{reason="${reason}"\\} (\\d+)`,
      'm',
    ).exec(metrics);
    return m ? Number(m[1]) : 0;
  };
  // A rebalance under load re-reads uncommitted messages (and counts them again): at least, never fewer.
  expect(failures('corrupt')).toBeGreaterThanOrEqual(2);
  expect(failures('too_large')).toBeGreaterThanOrEqual(2);
  expect(failures('unknown_encoding')).toBeGreaterThanOrEqual(1);
  expect(metrics).toMatch(/^logpipeline_worker_dead_letters_total\{reason="value_not_decodable"\} [1-9]/m);

  // One summary line for the lot, not a line per message.
  const log = fs.readFileSync(worker.logFile, 'utf8');
  expect(log.split('\n').filter((l) => l.includes('message values not decodable'))).toHaveLength(1);
});
