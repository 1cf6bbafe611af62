/**
 * Proves the Kafka part of the test bed is a real broker kafkajs can use for the pipeline's
 * traffic: LZ4 batches produced by our codec are accepted (the broker decompresses them to
 * validate), batches the broker itself compressed with Java's LZ4 are decoded by our codec,
 * and a consumer group reads every message back with its offsets committed.
 */
import { randomUUID } from 'node:crypto';
import {
  CompressionCodecs,
  CompressionTypes,
  Kafka,
  logLevel,
  Partitioners,
  type Admin,
  type Consumer,
  type Producer,
} from 'kafkajs';
import { LZ4_ASYNC_THRESHOLD_BYTES, lz4Codec, registerLz4Codec } from '../common/src/kafka/lz4-codec';
import { restartKafka } from './env/kafka';
import { readTestBed, writeTestBed } from './env/testbed';
import { createTopicsWithLeaders } from './env/kafka-topics';

const bed = readTestBed();
if (!bed.kafka) throw new Error('the test bed has no Kafka part: integration tests need a real broker');
const kafkaBed = bed.kafka;

const PARTITIONS = 3;
const MESSAGES = 10_000;
// ~125 KB per partition per request: the codec's threadpool path is taken for real frames too.
const CHUNK = 3_000;

/** Counts LZ4 frames kafkajs hands to our codec, to prove fetched batches really were LZ4. */
const lz4Frames = { compressed: 0, decompressed: 0, largestDecompressed: 0 };

function line(i: number): string {
  return `<134>Dec  2 12:00:${String(i % 60).padStart(2, '0')} fw${i % 5} kernel: DROP SRC=198.51.100.${i % 250} DST=203.0.113.7 PROTO=TCP SPT=${40000 + (i % 20000)} DPT=443 SEQ=${i}`;
}

async function produceAll(
  producer: Producer,
  topic: string,
  compression: CompressionTypes,
  count = MESSAGES,
): Promise<void> {
  for (let start = 0; start < count; start += CHUNK) {
    const messages = [];
    for (let i = start; i < Math.min(start + CHUNK, count); i++)
      messages.push({ key: `k${i}`, value: line(i), partition: i % PARTITIONS });
    await producer.send({ topic, compression, acks: -1, messages });
  }
}

/** Reads `count` messages with a fresh consumer group; returns the values per partition in offset order. */
async function consumeAll(consumer: Consumer, topic: string, count = MESSAGES): Promise<string[][]> {
  const byPartition: string[][] = Array.from({ length: PARTITIONS }, () => []);
  let received = 0;
  await consumer.subscribe({ topic, fromBeginning: true });
  const all = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`consumed only ${received}/${count} in 60 s`)), 60_000);
    void consumer.run({
      eachMessage: async ({ partition, message }) => {
        byPartition[partition].push(message.value?.toString('utf8') ?? '');
        if (++received === count) {
          clearTimeout(timer);
          resolve();
        }
      },
    });
  });
  try {
    await all;
  } finally {
    // A consumer left running would keep reconnecting (and logging) across a broker restart.
    await consumer.disconnect();
  }
  return byPartition;
}

function expectedPartition(partition: number, count = MESSAGES): string[] {
  const out: string[] = [];
  for (let i = partition; i < count; i += PARTITIONS) out.push(line(i));
  return out;
}

/** Polls the group's committed offsets until they reach the partitions' ends (commits are async). */
async function committedOffsets(
  admin: Admin,
  groupId: string,
  topic: string,
  want: Map<number, string>,
): Promise<Map<number, string>> {
  // Generous for a loaded machine; the loop ends as soon as the offsets are there.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const [res] = await admin.fetchOffsets({ groupId, topics: [topic] });
    const got = new Map(res.partitions.map((p) => [p.partition, p.offset]));
    const done = [...want].every(([p, o]) => got.get(p) === o);
    if (done || Date.now() > deadline) return got;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('Kafka test bed', () => {
  const kafka = new Kafka({
    clientId: 'kafka-smoke',
    brokers: [kafkaBed.bootstrap],
    logLevel: logLevel.WARN,
  });
  const admin = kafka.admin();
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  const consumers: Consumer[] = [];

  beforeAll(async () => {
    registerLz4Codec();
    CompressionCodecs[CompressionTypes.LZ4] = () => ({
      compress: (encoder: { buffer: Buffer }) => (lz4Frames.compressed++, lz4Codec.compress(encoder)),
      decompress: (buffer: Buffer) => {
        lz4Frames.decompressed++;
        lz4Frames.largestDecompressed = Math.max(lz4Frames.largestDecompressed, buffer.length);
        return lz4Codec.decompress(buffer);
      },
    });
    await admin.connect();
    await producer.connect();
  });

  afterAll(async () => {
    for (const c of consumers) await c.disconnect();
    await producer.disconnect();
    await admin.disconnect();
  });

  function newConsumerOf(client: Kafka, groupId: string): Consumer {
    const consumer = client.consumer({ groupId, maxWaitTimeInMs: 200 });
    consumers.push(consumer);
    return consumer;
  }
  const newConsumer = (groupId: string) => newConsumerOf(kafka, groupId);

  it('is the broker the bed started: describeCluster returns its cluster id', async () => {
    const cluster = await admin.describeCluster();
    expect(cluster.clusterId).toBe(kafkaBed.clusterId);
    expect(cluster.brokers).toEqual([expect.objectContaining({ nodeId: 1, host: '127.0.0.1' })]);
    expect(kafkaBed.bootstrap).toBe(`127.0.0.1:${cluster.brokers[0].port}`);
  });

  const ROUND_TRIP_TIMEOUT_MS = 90_000;

  it(
    'round-trips 10k LZ4-compressed messages through 3 partitions and a consumer group',
    async () => {
      const topic = `smoke-lz4-${randomUUID()}`;
      const groupId = `smoke-${randomUUID()}`;
      expect(await createTopicsWithLeaders(admin, [{ topic, numPartitions: PARTITIONS }])).toBe(true);

      await produceAll(producer, topic, CompressionTypes.LZ4);
      expect(lz4Frames.compressed).toBeGreaterThanOrEqual(MESSAGES / CHUNK);
      const ends = await admin.fetchTopicOffsets(topic);
      const want = new Map(ends.map((p) => [p.partition, p.high]));
      expect([...want].sort()).toEqual([
        [0, '3334'],
        [1, '3333'],
        [2, '3333'],
      ]);

      const before = lz4Frames.decompressed;
      lz4Frames.largestDecompressed = 0;
      const byPartition = await consumeAll(newConsumer(groupId), topic);
      // The fetched batches carry the LZ4 codec bits, so the broker kept what we produced.
      expect(lz4Frames.decompressed - before).toBeGreaterThanOrEqual(PARTITIONS);
      expect(lz4Frames.largestDecompressed).toBeGreaterThanOrEqual(LZ4_ASYNC_THRESHOLD_BYTES / 4);
      for (let p = 0; p < PARTITIONS; p++) expect(byPartition[p]).toEqual(expectedPartition(p));
      expect(await committedOffsets(admin, groupId, topic, want)).toEqual(want);
    },
    ROUND_TRIP_TIMEOUT_MS,
  );

  it(
    'decodes batches the broker compressed itself with Java’s LZ4 (topic compression.type=lz4)',
    async () => {
      const topic = `smoke-broker-lz4-${randomUUID()}`;
      const configEntries = [{ name: 'compression.type', value: 'lz4' }];
      await createTopicsWithLeaders(admin, [{ topic, numPartitions: PARTITIONS, configEntries }]);
      const described = await admin.describeConfigs({
        resources: [{ type: 2, name: topic, configNames: ['compression.type'] }],
        includeSynonyms: false,
      });
      expect(described.resources[0].configEntries).toEqual([
        expect.objectContaining({ configName: 'compression.type', configValue: 'lz4' }),
      ]);

      const compressedBefore = lz4Frames.compressed;
      await produceAll(producer, topic, CompressionTypes.None);
      expect(lz4Frames.compressed).toBe(compressedBefore);

      const before = lz4Frames.decompressed;
      lz4Frames.largestDecompressed = 0;
      const byPartition = await consumeAll(newConsumer(`smoke-${randomUUID()}`), topic);
      expect(lz4Frames.decompressed - before).toBeGreaterThanOrEqual(PARTITIONS);
      expect(lz4Frames.largestDecompressed).toBeGreaterThanOrEqual(LZ4_ASYNC_THRESHOLD_BYTES / 4);
      for (let p = 0; p < PARTITIONS; p++) expect(byPartition[p]).toEqual(expectedPartition(p));
    },
    ROUND_TRIP_TIMEOUT_MS,
  );

  it('restarts on the same port with its data and cluster id (restartKafka)', async () => {
    const topic = `smoke-restart-${randomUUID()}`;
    const count = 300;
    await createTopicsWithLeaders(admin, [{ topic, numPartitions: PARTITIONS }]);
    await produceAll(producer, topic, CompressionTypes.LZ4, count);

    const restarted = await restartKafka(kafkaBed);
    // Later test files and the global teardown must find the new process.
    writeTestBed({ ...readTestBed(), kafka: restarted });
    expect(restarted.process.pid).not.toBe(kafkaBed.process.pid);
    expect({ bootstrap: restarted.bootstrap, clusterId: restarted.clusterId }).toEqual({
      bootstrap: kafkaBed.bootstrap,
      clusterId: kafkaBed.clusterId,
    });

    const fresh = new Kafka({
      clientId: 'kafka-smoke-restarted',
      brokers: [restarted.bootstrap],
      logLevel: logLevel.WARN,
    });
    const byPartition = await consumeAll(newConsumerOf(fresh, `smoke-${randomUUID()}`), topic, count);
    for (let p = 0; p < PARTITIONS; p++) expect(byPartition[p]).toEqual(expectedPartition(p, count));
  }, 180_000);
});
