import {
  METADATA_V6_CLUSTER_ID,
  METADATA_V6_MIXED,
  METADATA_V6_NO_TOPICS,
} from '../../../test/fixtures/kafka-metadata-v6';
import { decodeMetadata, describeWithKafkajs, fillKafkajsCache, metadataRequest } from './kafka-metadata';
import type { MetadataView } from './kafka-topic-wire';
import {
  encodeMetadataV6,
  type PartitionSketch,
  type TopicSketch,
} from '../../../test/fixtures/kafka-metadata-encode';

const metadataV6 = (clusterId: string, topics: TopicSketch[]) => encodeMetadataV6(clusterId, topics);

const one = (replicas = [1]): PartitionSketch => ({ replicas });

describe('Metadata v6 decoder (bytes captured from the bed broker)', () => {
  it('answers each topic of a batch: existing ones with their shape, the missing one as missing', () => {
    const a = decodeMetadata(METADATA_V6_MIXED);
    expect(a.clusterId).toBe(METADATA_V6_CLUSTER_ID);
    expect([...a.topics]).toEqual([
      ['fixture.one', { partitions: 1, replicas: 1 }],
      ['fixture.three', { partitions: 3, replicas: 1 }],
      ['fixture.missing', undefined],
    ]);
  });

  it("gives the brokers and each existing topic's partition leaders of the same answer", () => {
    const a = decodeMetadata(METADATA_V6_MIXED);
    expect(a.brokers).toEqual([{ nodeId: 1, host: '127.0.0.1', port: 44461 }]);
    const leader = (partitionId: number) => ({ partitionId, leader: 1, errorCode: 0 });
    expect([...a.leaders!]).toEqual([
      ['fixture.one', [leader(0)]],
      ['fixture.three', [leader(0), leader(1), leader(2)]],
    ]);
    expect(decodeMetadata(METADATA_V6_NO_TOPICS).leaders!.size).toBe(0);
  });

  it('asks for no topic with an empty list: the cluster id and no topics', () => {
    const a = decodeMetadata(METADATA_V6_NO_TOPICS);
    expect(a.clusterId).toBe(METADATA_V6_CLUSTER_ID);
    expect(a.topics.size).toBe(0);
  });

  it('lays out responses exactly as the broker does (the synthetic cases below rely on it)', () => {
    const captured = metadataV6(METADATA_V6_CLUSTER_ID, [
      { name: 'fixture.one', partitions: [one()] },
      { name: 'fixture.three', partitions: [one(), one(), one()] },
      { name: 'fixture.missing', error: 3, partitions: [] },
    ]);
    expect(captured.equals(METADATA_V6_MIXED)).toBe(true);
    expect(metadataV6(METADATA_V6_CLUSTER_ID, []).equals(METADATA_V6_NO_TOPICS)).toBe(true);
  });

  it('keeps a topic error with its topic and leaves the others answered', () => {
    const a = decodeMetadata(
      metadataV6('c', [
        { name: 'denied', error: 29, partitions: [] },
        { name: 'ok', partitions: [one([1, 2, 3]), one([1, 2])] },
        { name: 'empty', partitions: [] },
      ]),
    );
    expect(a.topics.get('denied')).toMatchObject({ type: 'TOPIC_AUTHORIZATION_FAILED' });
    // The smallest assigned replica count is the topic's replication.
    expect(a.topics.get('ok')).toEqual({ partitions: 2, replicas: 2 });
    expect(a.topics.get('empty')).toBeInstanceOf(Error);
  });

  it('reports the shape of a topic whose partitions have no leader yet or a replica offline', () => {
    const a = decodeMetadata(
      metadataV6('c', [
        {
          name: 'new',
          partitions: [
            { error: 5, replicas: [1] },
            { error: 9, replicas: [1] },
          ],
        },
      ]),
    );
    expect(a.topics.get('new')).toEqual({ partitions: 2, replicas: 1 });
  });

  it('reports leaderless partitions with their error, leaders on other brokers, and no leaders for failed topics', () => {
    const brokers = [
      { nodeId: 1, host: 'k1', port: 9092 },
      { nodeId: 2, host: 'k2', port: 9093 },
    ];
    const body = encodeMetadataV6(
      'c',
      [
        { name: 'denied', error: 29, partitions: [] },
        {
          name: 'moving',
          partitions: [
            { replicas: [2, 1] },
            { error: 5, replicas: [1, 2], leader: -1 },
            { replicas: [1, 2] },
          ],
        },
      ],
      brokers,
    );
    const a = decodeMetadata(body);
    expect(a.brokers).toEqual(brokers);
    expect(a.leaders!.has('denied')).toBe(false);
    expect(a.leaders!.get('moving')).toEqual([
      { partitionId: 0, leader: 2, errorCode: 0 },
      { partitionId: 1, leader: -1, errorCode: 5 },
      { partitionId: 2, leader: 1, errorCode: 0 },
    ]);
    expect(a.topics.get('moving')).toEqual({ partitions: 3, replicas: 2 });
  });
});

describe('Metadata v6 request', () => {
  it('names exactly the topics asked for, never "all topics", and never asks for auto-creation', async () => {
    const bytes = async (topics: string[]) =>
      (await metadataRequest(topics).request.encode()) as unknown as { buffer: Buffer };
    const two = await bytes(['a', 'bc']);
    expect(two.buffer.toString('hex')).toBe('00000002' + '000161' + '00026263' + '00');
    // An empty list is an empty array (length 0); -1 (null) would mean every topic.
    const none = await bytes([]);
    expect(none.buffer.toString('hex')).toBe('00000000' + '00');
    expect(metadataRequest([]).request).toMatchObject({ apiKey: 3, apiVersion: 6, apiName: 'Metadata' });
  });
});

/** kafkajs's broker pool over a fixed set of topics: like kafkajs, it fails on any unknown topic. */
function fakePool(existing: Record<string, number>) {
  const asked: string[][] = [];
  const pool = {
    metadata: undefined as MetadataView | undefined,
    async refreshMetadata(topics: string[]) {
      asked.push(topics);
      const names = topics.length === 0 ? Object.keys(existing) : topics;
      if (names.some((t) => !(t in existing)))
        throw Object.assign(new Error('unknown'), { type: 'UNKNOWN_TOPIC_OR_PARTITION' });
      pool.metadata = {
        clusterId: 'c1',
        topicMetadata: names.map((topic) => ({
          topic,
          partitionMetadata: Array.from({ length: existing[topic] }, () => ({ replicas: [1] })),
        })),
      };
    },
  };
  return { pool, asked };
}

describe("kafkajs's own Metadata (brokers without v6, and kafkajs's lookup cache)", () => {
  it('describes through kafkajs, asking for every topic once a named one is missing', async () => {
    const { pool, asked } = fakePool({ a: 2, b: 1 });
    let count = 0;
    const answer = await describeWithKafkajs(pool, ['a', 'gone'], () => count++);
    expect([...answer.topics]).toEqual([
      ['a', { partitions: 2, replicas: 1 }],
      ['gone', undefined],
    ]);
    expect(answer.clusterId).toBe('c1');
    expect(asked).toEqual([['a', 'gone'], []]);
    expect(count).toBe(2);
  });

  it('fills the lookup cache once, naming a topic already seen, else every topic', async () => {
    const { pool, asked } = fakePool({ a: 1, b: 1 });
    let count = 0;
    await fillKafkajsCache(pool, 'a', () => count++);
    await fillKafkajsCache(pool, 'a', () => count++);
    expect(asked).toEqual([['a']]);
    // The topic seen is gone meanwhile: every topic is asked for instead.
    const other = fakePool({ b: 1 });
    await fillKafkajsCache(other.pool, 'a', () => count++);
    expect(other.asked).toEqual([['a'], []]);
    expect(other.pool.metadata?.topicMetadata.map((t) => t.topic)).toEqual(['b']);
    expect(count).toBe(3);
  });
});
