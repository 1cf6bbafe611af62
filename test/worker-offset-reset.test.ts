/**
 * A worker whose committed position was deleted by retention (the finding: kafkajs hits
 * OFFSET_OUT_OF_RANGE, logs "Offset out of range, resetting to default offset" and jumps to the
 * log start on its own). Real worker process and Kafka: the group is committed at offset 3, the
 * records up to the log end are deleted (as retention does), the worker starts; the reset is
 * counted in logpipeline_worker_offset_resets_total{partition}, and the worker goes on from the
 * log start (new lines are stored exactly once; the deleted ones are gone).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { Producer } from 'kafkajs';
import { freePort } from './env/process';
import { readTestBed } from './env/testbed';
import {
  chClient,
  createPipeline,
  dropPipeline,
  kafkaClient,
  makeTraffic,
  metricSum,
  newPipeline,
  pollUntil,
  produceLines,
  spawnWorker,
  stopWorker,
  storedCounts,
  testProducer,
  waitCaughtUp,
  workerConfig,
  workerGet,
  type WorkerProcess,
} from './worker-support';

jest.setTimeout(240_000);

const bed = readTestBed();
const p = newPipeline('offreset', 1);
let ch: ClickHouseClient;
let producer: Producer;
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  ch = chClient(bed);
  await createPipeline(bed, p);
  producer = await testProducer(bed);
});

afterAll(async () => {
  if (worker) await stopWorker(worker, 5_000);
  await producer.disconnect();
  await dropPipeline(bed, p);
  await ch.close();
});

test('a committed position deleted by retention is counted as an offset reset; the worker goes on from the log start', async () => {
  await produceLines(producer, p.topic, 1, makeTraffic(20, 0, 3).lines, 1);
  const admin = kafkaClient(bed, 'offreset-admin').admin();
  await admin.connect();
  try {
    const [{ high }] = await admin.fetchTopicOffsets(p.topic);
    await admin.setOffsets({
      groupId: p.groupId,
      topic: p.topic,
      partitions: [{ partition: 0, offset: '3' }],
    });
    await admin.deleteTopicRecords({ topic: p.topic, partitions: [{ partition: 0, offset: high }] });
  } finally {
    await admin.disconnect();
  }
  const port = await freePort();
  worker = spawnWorker(bed, workerConfig(bed, p), port, 'offset-reset');
  const resets = await pollUntil(
    async () => (await workerGet(port, '/metrics')).body,
    (text) => metricSum(text, 'logpipeline_worker_offset_resets_total') >= 1,
    120_000,
  );
  expect(resets).toMatch(/^logpipeline_worker_offset_resets_total\{partition="0"\} 1$/m);

  // The finding: kafkajs commits its default offset itself (EARLIEST, -2), outside the worker's
  // generation-bound committer and without the cut-journal metadata. Nothing new to consume, so
  // the worker commits nothing after it and the group shows kafkajs's commit.
  const check = kafkaClient(bed, 'offreset-check').admin();
  await check.connect();
  try {
    const read = async () =>
      (await check.fetchOffsets({ groupId: p.groupId, topics: [p.topic] }))[0].partitions[0];
    const after = await pollUntil(read, (x) => x.offset !== '3', 60_000);
    expect(after).toMatchObject({ offset: '-2' });
    expect(after.metadata ?? '').toBe('');
  } finally {
    await check.disconnect();
  }

  await produceLines(producer, p.topic, 1, makeTraffic(10, 0, 4).lines, 1);
  await waitCaughtUp(bed, p);
  const stored = await storedCounts(ch, p);
  expect(stored).toMatchObject({ rows: 10, distinct: 10, dlq: 0 });
  expect(worker.child.exitCode).toBeNull();
});
