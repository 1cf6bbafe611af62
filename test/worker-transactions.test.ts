/**
 * Transactional producers and the worker's record runs (common/src/kafka/record-run.ts): the worker
 * reads committed data only (kafkajs's default isolation, read_committed). A fetch whose range holds
 * an aborted transaction comes with its abort list, and kafkajs filters aborted records per message
 * object, so the worker's fast Batch expands that fetch's record runs into kafkajs's objects first
 * (fetch-batch.ts withMessageObjects). Against the bed's real broker: committed transactions,
 * aborted ones and plain sends interleaved on one partition (LZ4 and uncompressed); the worker must
 * store every committed and plain line exactly once, no aborted line, and commit to the log end
 * (transaction markers included). Judged on committed offsets, never on time.
 *
 * A transaction marker is written by the coordinator after the producer's commit returns, so the
 * log may end in a marker: the worker must commit past it (else the group shows a lag of 1 forever
 * and the partition never reads as caught up). Both ways a tail of markers reaches the worker are
 * pinned: behind data in one fetch (the log ends in a commit marker before the worker starts), and
 * alone (an aborted transaction after the worker caught up: kafkajs filters the whole fetch and
 * never calls eachBatch).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { CompressionTypes, type Producer } from 'kafkajs';
import { freePort } from './env/process';
import { readTestBed } from './env/testbed';
import {
  chClient,
  createPipeline,
  dropPipeline,
  kafkaClient,
  makeTraffic,
  newPipeline,
  spawnWorker,
  stopWorker,
  storedKeys,
  testProducer,
  waitCaughtUp,
  workerConfig,
  type WorkerProcess,
} from './worker-support';

jest.setTimeout(300_000);

const bed = readTestBed();
const p = newPipeline('txn', 1);
let ch: ClickHouseClient;
let worker: WorkerProcess | undefined;
let txProducer: Producer;
let plain: Producer;
const stored: Buffer[] = [];
const aborted: Buffer[] = [];

async function inTransaction(lines: Buffer[], commit: boolean, compression: CompressionTypes) {
  const tx = await txProducer.transaction();
  await tx.send({ topic: p.topic, compression, messages: lines.map((value) => ({ partition: 0, value })) });
  if (commit) {
    await tx.commit();
    stored.push(...lines);
  } else {
    await tx.abort();
    aborted.push(...lines);
  }
}

async function plainSend(lines: Buffer[]) {
  await plain.send({
    topic: p.topic,
    acks: -1,
    compression: CompressionTypes.LZ4,
    messages: lines.map((value) => ({ partition: 0, value })),
  });
  stored.push(...lines);
}

beforeAll(async () => {
  ch = chClient(bed);
  await createPipeline(bed, p);
  txProducer = kafkaClient(bed, 'txn-producer').producer({
    transactionalId: `${p.topic}-tx`,
    idempotent: true,
    maxInFlightRequests: 1,
  });
  await txProducer.connect();
  plain = await testProducer(bed);
  const lines = makeTraffic(700, 0, 11).lines;
  await plainSend(lines.slice(0, 50));
  await inTransaction(lines.slice(50, 150), true, CompressionTypes.LZ4);
  await inTransaction(lines.slice(150, 250), false, CompressionTypes.LZ4);
  await plainSend(lines.slice(250, 300));
  await inTransaction(lines.slice(300, 350), false, CompressionTypes.None);
  await inTransaction(lines.slice(350, 450), true, CompressionTypes.None);
  await inTransaction(lines.slice(450, 550), true, CompressionTypes.LZ4);
  await plainSend(lines.slice(550, 600));
  await inTransaction(lines.slice(600, 650), true, CompressionTypes.LZ4);
  // 650 records and 6 markers; wait for the last marker so the log surely ends in one.
  await waitLogEnd(656);
});

/** Waits until partition 0's log end reaches `end` (a marker lands after the commit returns). */
async function waitLogEnd(end: number): Promise<void> {
  const admin = kafkaClient(bed, 'txn-log-end').admin();
  await admin.connect();
  try {
    for (;;) {
      const [p0] = await admin.fetchTopicOffsets(p.topic);
      if (Number(p0.high) >= end) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await admin.disconnect();
  }
}

afterAll(async () => {
  if (worker) await stopWorker(worker, 5_000);
  await txProducer?.disconnect();
  await plain?.disconnect();
  await dropPipeline(bed, p);
  await ch.close();
});

test('committed and plain lines are stored once, aborted ones never; offsets reach the log end', async () => {
  const port = await freePort();
  worker = spawnWorker(bed, workerConfig(bed, p), port, 'transactions');
  await waitCaughtUp(bed, p, 240_000);
  expect(worker.child.exitCode).toBeNull();
  const raws = (await storedKeys(ch, p)).map((k) => k.split(':').slice(2).join(':')).sort();
  expect(raws).toEqual(stored.map((l) => l.toString('latin1')).sort());
  const abortedRaw = new Set(aborted.map((l) => l.toString('latin1')));
  expect(raws.filter((r) => abortedRaw.has(r))).toEqual([]);
});

test('an aborted transaction after the worker caught up is passed over to the log end', async () => {
  await inTransaction(makeTraffic(700, 0, 11).lines.slice(650, 700), false, CompressionTypes.LZ4);
  await waitLogEnd(707);
  await waitCaughtUp(bed, p, 120_000);
  expect(worker!.child.exitCode).toBeNull();
  const raws = (await storedKeys(ch, p)).map((k) => k.split(':').slice(2).join(':'));
  expect(raws.length).toBe(stored.length);
  const abortedRaw = new Set(aborted.map((l) => l.toString('latin1')));
  expect(raws.filter((r) => abortedRaw.has(r))).toEqual([]);
});
