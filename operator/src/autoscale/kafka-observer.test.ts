import { KafkaClusterObserver } from './kafka-observer';
import { protocolError } from '../../../common/src/kafka/group-protocol';
import { encodeMetadataV6, type TopicSketch } from '../../../test/fixtures/kafka-metadata-encode';

/* eslint-disable-next-line @typescript-eslint/no-require-imports */
const Decoder = require('kafkajs/src/protocol/decoder');
type Dec = InstanceType<typeof Decoder>;

interface Requested {
  groupId: string;
  topics: Array<{ topic: string; partitions: number[] }>;
}

/** Groups, topics and partitions of an encoded FindCoordinator v4 / OffsetFetch v8 request. */
async function requested(req: {
  request: { apiName: string; encode(): Promise<{ buffer: Buffer }> };
}): Promise<Requested[]> {
  const d = new Decoder((await req.request.encode()).buffer);
  d.readUVarInt();
  if (req.request.apiName === 'FindCoordinator') {
    d.readInt8();
    return d.readUVarIntArray((x: Dec) => ({ groupId: x.readUVarIntString(), topics: [] })) as Requested[];
  }
  return d.readUVarIntArray((g: Dec) => {
    const groupId = g.readUVarIntString();
    const topics = g.readUVarIntArray((t: Dec) => {
      const topic = t.readUVarIntString();
      const partitions = t.readUVarIntArray((p: Dec) => p.readInt32());
      t.readTaggedFields();
      return { topic, partitions };
    });
    g.readTaggedFields();
    return { groupId, topics };
  }) as Requested[];
}

/** The topics named by an encoded Metadata v6 request. */
async function metadataTopics(req: {
  request: { encode(): Promise<{ buffer: Buffer }> };
}): Promise<string[]> {
  const d = new Decoder((await req.request.encode()).buffer);
  return Array.from({ length: d.readInt32() }, () => d.readString() as string);
}

/** A broker speaking Metadata v6: each partition's leader (-1: none, LEADER_NOT_AVAILABLE). */
interface MetadataV6 {
  leaderOf?: (topic: string, partition: number) => number;
}

const BROKERS = [
  { nodeId: 1, host: 'b', port: 9092 },
  { nodeId: 2, host: 'b2', port: 9092 },
];

/**
 * A fake kafkajs cluster: topics with partitions on broker 1, committed offsets per group. With
 * `multiGroup` its broker advertises FindCoordinator v4 and OffsetFetch v8 (Kafka >= 3.0) and
 * answers them; without, only kafkajs's own versions (one group per request). With `v6` it
 * answers Metadata v6 in the broker's byte layout (test/fixtures/kafka-metadata-encode.ts).
 * `asked` lists the topics every Metadata request named ('all': every topic of the cluster) and
 * `routed` the node ids requests were sent to.
 */
function fakeCluster(
  topics: Record<string, number>,
  committed: Record<string, Record<number, string>>,
  multiGroup = false,
  unavailableLookups = 0,
  v6?: MetadataV6,
) {
  const calls = { metadata: 0, listOffsets: 0, coordinator: 0, offsetFetch: 0 };
  const asked: Array<string[] | 'all'> = [];
  const routed: number[] = [];
  /** Topics whose ListOffsets answer carries UNKNOWN_TOPIC_OR_PARTITION (deleted since the Metadata). */
  const gone = new Set<string>();
  let unavailable = unavailableLookups;
  let loaded: string[] | undefined;
  const offsetOf = (g: string, p: number) => committed[g]?.[p] ?? '-1';
  const leaderOf = v6?.leaderOf ?? (() => 1);
  const sketch = (name: string): TopicSketch =>
    name in topics
      ? {
          name,
          partitions: Array.from({ length: topics[name] }, (_, p) => ({
            replicas: [1],
            leader: leaderOf(name, p),
            error: leaderOf(name, p) < 0 ? 5 : 0,
          })),
        }
      : { name, error: 3, partitions: [] };
  const broker = {
    nodeId: 1,
    versions: {
      ...(multiGroup
        ? { 9: { minVersion: 1, maxVersion: 9 }, 10: { minVersion: 0, maxVersion: 6 } }
        : { 9: { minVersion: 1, maxVersion: 4 }, 10: { minVersion: 0, maxVersion: 2 } }),
      ...(v6 ? { 3: { minVersion: 0, maxVersion: 12 } } : {}),
    },
    // ListOffsets as kafkajs's broker sends it: timestamp -2 is the log start, -1 the log end.
    listOffsets: async (req: {
      topics: Array<{ topic: string; partitions: Array<{ partition: number; timestamp: number }> }>;
    }) => {
      calls.listOffsets++;
      if (req.topics.some((r) => gone.has(r.topic))) throw protocolError(3);
      return {
        responses: req.topics.map((r) => ({
          topic: r.topic,
          partitions: r.partitions.map((p) => ({
            partition: p.partition,
            offset: p.timestamp === -2 ? '0' : '100',
          })),
        })),
      };
    },
    connectionPool: {
      send: async (req: never) => {
        const { apiName } = (req as { request: { apiName: string } }).request;
        if (apiName === 'Metadata') {
          calls.metadata++;
          const names = await metadataTopics(req);
          asked.push(names);
          const { response } = req as {
            response: { decode(b: Buffer): Promise<unknown>; parse(d: unknown): unknown };
          };
          return response.parse(await response.decode(encodeMetadataV6('c', names.map(sketch), BROKERS)));
        }
        const groups = await requested(req);
        if (apiName === 'FindCoordinator') {
          calls.coordinator++;
          // COORDINATOR_NOT_AVAILABLE (15, retriable) while __consumer_offsets is being created.
          const error = unavailable-- > 0 ? protocolError(15) : undefined;
          return groups.map((g) => ({
            key: g.groupId,
            nodeId: error ? -1 : 1,
            host: 'b',
            port: 9092,
            error,
          }));
        }
        calls.offsetFetch++;
        return groups.map((g) => ({
          groupId: g.groupId,
          partitions: g.topics.flatMap((t) =>
            t.partitions.map((partition) => ({
              topic: t.topic,
              partition,
              offset: offsetOf(g.groupId, partition),
              metadata: null,
            })),
          ),
        }));
      },
    },
  };
  const cluster = {
    connect: async () => undefined,
    disconnect: async () => undefined,
    findBroker: async ({ nodeId }: { nodeId: number }) => {
      routed.push(nodeId);
      return broker;
    },
    brokerPool: {
      findConnectedBroker: async () => broker,
      refreshMetadata: async (want: string[]) => {
        calls.metadata++;
        asked.push(want.length ? want : 'all');
        if (want.some((t) => !(t in topics)))
          throw Object.assign(new Error('unknown'), { type: 'UNKNOWN_TOPIC_OR_PARTITION' });
        loaded = want.length ? want : Object.keys(topics);
      },
      get metadata() {
        if (!loaded) return null;
        return {
          brokers: v6 ? BROKERS : [BROKERS[0]],
          topicMetadata: loaded.map((topic) => ({
            topic,
            partitionMetadata: Array.from({ length: topics[topic] }, (_, partitionId) => ({
              partitionId,
              leader: 1,
            })),
          })),
        };
      },
    },
    findGroupCoordinator: async () => {
      calls.coordinator++;
      return {
        offsetCommit: async () => undefined,
        offsetFetch: async (req: {
          groupId: string;
          topics: Array<{ topic: string; partitions: Array<{ partition: number }> }>;
        }) => {
          calls.offsetFetch++;
          const t = req.topics[0];
          return {
            responses: [
              {
                topic: t.topic,
                partitions: t.partitions.map((p) => ({
                  partition: p.partition,
                  offset: offsetOf(req.groupId, p.partition),
                  metadata: null,
                })),
              },
            ],
          };
        },
      };
    },
  };
  return { cluster, calls, asked, routed, gone };
}

describe('KafkaClusterObserver', () => {
  it('serves N pipelines polling together from one round (one OffsetFetch per group on old brokers)', async () => {
    const topics = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`t${i}`, 3]));
    const { cluster, calls } = fakeCluster(topics, { g0: { 0: '40', 1: '100', 2: '100' } });
    let t = 1000;
    const obs = new KafkaClusterObserver({ brokers: ['b:9092'] } as never, {
      gatherMs: 1,
      now: () => t,
      connect: () => cluster as never,
    });
    const reads = await Promise.all(Object.keys(topics).map((tp, i) => obs.read(tp, `g${i}`, 7500)));
    expect(obs.rounds).toBe(1);
    expect(calls.metadata).toBe(1);
    expect(calls.listOffsets).toBe(2); // log end and log start, one request each for every topic
    expect(calls.offsetFetch).toBe(50);
    expect(reads[0].offsets).toEqual([
      { partition: 0, end: 100, start: 0, committed: 40 },
      { partition: 1, end: 100, start: 0, committed: 100 },
      { partition: 2, end: 100, start: 0, committed: 100 },
    ]);
    // Fresh enough: no new round; coordinators are cached across rounds.
    t += 5000;
    await obs.read('t1', 'g1', 7500);
    expect(obs.rounds).toBe(1);
    t += 5000;
    await Promise.all(Object.keys(topics).map((tp, i) => obs.read(tp, `g${i}`, 7500)));
    expect(obs.rounds).toBe(2);
    expect(calls.coordinator).toBe(50);
    expect(calls.metadata).toBe(2);
  });

  it('reads every group of a coordinator with one OffsetFetch v8 and locates new groups with one FindCoordinator v4', async () => {
    const topics = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`t${i}`, 2]));
    const { cluster, calls } = fakeCluster(topics, { g3: { 0: '7', 1: '9' } }, true);
    let t = 1000;
    const obs = new KafkaClusterObserver({ brokers: ['b:9092'] } as never, {
      gatherMs: 1,
      now: () => t,
      connect: () => cluster as never,
    });
    const reads = await Promise.all(Object.keys(topics).map((tp, i) => obs.read(tp, `g${i}`, 7500)));
    expect(obs.rounds).toBe(1);
    expect(calls).toEqual({ metadata: 1, listOffsets: 2, coordinator: 1, offsetFetch: 1 });
    expect(reads[3].offsets).toEqual([
      { partition: 0, end: 100, start: 0, committed: 7 },
      { partition: 1, end: 100, start: 0, committed: 9 },
    ]);
    expect(reads[4].offsets.map((o) => o.committed)).toEqual([-1, -1]);
    // The next round: coordinators cached, still one OffsetFetch for all 50 groups.
    t += 10_000;
    const again = await Promise.all(Object.keys(topics).map((tp, i) => obs.read(tp, `g${i}`, 7500)));
    expect(obs.rounds).toBe(2);
    expect(calls).toEqual({ metadata: 2, listOffsets: 4, coordinator: 1, offsetFetch: 2 });
    // Nothing moved: the pair keeps its offsets (no new arrays per idle pair and round), newly dated.
    expect(again[3].offsets).toBe(reads[3].offsets);
    expect(again[3].at).toBe(t);
  });

  it('asks again, a bounded number of times, for coordinators not available yet (fresh cluster)', async () => {
    const { cluster, calls } = fakeCluster({ a: 1 }, { g: { 0: '3' } }, true, 2);
    const obs = new KafkaClusterObserver({ brokers: ['b:9092'] } as never, {
      gatherMs: 1,
      connect: () => cluster as never,
    });
    const read = await obs.read('a', 'g', 1000);
    expect(read.offsets[0].committed).toBe(3);
    expect(calls.coordinator).toBe(3);
    const { cluster: never } = fakeCluster({ a: 1 }, {}, true, 100);
    const failing = new KafkaClusterObserver({ brokers: ['b:9092'] } as never, {
      gatherMs: 1,
      connect: () => never as never,
    });
    await expect(failing.read('a', 'g', 1000)).rejects.toThrow(/coordinator/i);
  });

  it('a missing topic fails only its own pipeline', async () => {
    const { cluster } = fakeCluster({ a: 1 }, {});
    const obs = new KafkaClusterObserver({ brokers: ['b:9092'] } as never, {
      gatherMs: 1,
      connect: () => cluster as never,
    });
    const [ok, missing] = await Promise.allSettled([obs.read('a', 'g', 1000), obs.read('gone', 'g2', 1000)]);
    expect(ok.status).toBe('fulfilled');
    expect(missing.status).toBe('rejected');
    expect(String((missing as PromiseRejectedResult).reason.message)).toMatch(/does not exist/);
  });

  it('names only the observed topics in one Metadata request per round when one is missing, never every topic', async () => {
    const { cluster, calls, asked } = fakeCluster({ a: 2, b: 1, other: 1 }, { ga: { 0: '60' } }, true, 0, {});
    let t = 1000;
    const obs = new KafkaClusterObserver({ brokers: ['b:9092'] } as never, {
      gatherMs: 1,
      now: () => t,
      connect: () => cluster as never,
    });
    const round = () =>
      Promise.allSettled([
        obs.read('a', 'ga', 7500),
        obs.read('b', 'gb', 7500),
        obs.read('gone', 'gg', 7500),
      ]);
    const first = await round();
    // The first round of a connection also fills kafkajs's broker map (ListOffsets and OffsetFetch
    // are routed by node id through it), naming one topic the answer found.
    expect(asked).toEqual([['a', 'b', 'gone'], ['a']]);
    for (let i = 0; i < 3; i++) {
      t += 10_000;
      const before = asked.length;
      const again = await round();
      expect(asked.slice(before)).toEqual([['a', 'b', 'gone']]);
      expect(again.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    }
    expect(obs.rounds).toBe(4);
    expect(calls.metadata).toBe(5);
    expect(asked).not.toContain('all');
    const [a, b, gone] = first;
    expect(a.status === 'fulfilled' && a.value.offsets).toEqual([
      { partition: 0, end: 100, start: 0, committed: 60 },
      { partition: 1, end: 100, start: 0, committed: -1 },
    ]);
    expect(b.status === 'fulfilled' && b.value.offsets).toEqual([
      { partition: 0, end: 100, start: 0, committed: -1 },
    ]);
    expect(gone.status === 'rejected' && gone.reason).toMatchObject({
      reason: 'KafkaError',
      message: 'topic gone does not exist',
    });
  });

  it('routes ListOffsets to each partition leader of the answer; a leaderless partition fails only its topic', async () => {
    const leaderOf = (topic: string, p: number) => (topic === 'new' ? -1 : p % 2 ? 2 : 1);
    const { cluster, calls, routed } = fakeCluster({ a: 4, new: 1 }, {}, true, 0, { leaderOf });
    const obs = new KafkaClusterObserver({ brokers: ['b:9092'] } as never, {
      gatherMs: 1,
      connect: () => cluster as never,
    });
    const [a, leaderless] = await Promise.allSettled([obs.read('a', 'g', 1000), obs.read('new', 'g2', 1000)]);
    expect(a.status === 'fulfilled' && a.value.offsets.map((o) => o.end)).toEqual([100, 100, 100, 100]);
    // Log end and log start from each of the two leaders, then the one coordinator.
    expect(calls.listOffsets).toBe(4);
    expect(routed.slice(0, 4).sort()).toEqual([1, 1, 2, 2]);
    expect(leaderless.status === 'rejected' && leaderless.reason.message).toBe(
      'partition 0 of topic new has no leader (LEADER_NOT_AVAILABLE)',
    );
  });

  it('a topic deleted between Metadata and ListOffsets fails only its own pair (the request is bisected)', async () => {
    const topics = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`t${i}`, 1]));
    const { cluster, calls, gone } = fakeCluster(topics, {}, true, 0, {});
    gone.add('t5');
    const obs = new KafkaClusterObserver({ brokers: ['b:9092'] } as never, {
      gatherMs: 1,
      connect: () => cluster as never,
    });
    const reads = await Promise.allSettled(Object.keys(topics).map((t) => obs.read(t, `g-${t}`, 1000)));
    expect(reads.map((r) => r.status)).toEqual([
      ...Array(5).fill('fulfilled'),
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    expect(reads[5].status === 'rejected' && reads[5].reason.message).toBe(
      'reading log offsets of topic t5: This server does not host this topic-partition',
    );
    // Per timestamp: the whole batch, then halves down to t5 alone (8 -> 4 -> 2 -> 1): 7 requests.
    expect(calls.listOffsets).toBe(2 * 7);
  });

  it("keeps kafkajs's Metadata on brokers without v6 (every topic asked for once one is missing)", async () => {
    const { cluster, asked } = fakeCluster({ a: 1, b: 1 }, {});
    const obs = new KafkaClusterObserver({ brokers: ['b:9092'] } as never, {
      gatherMs: 1,
      connect: () => cluster as never,
    });
    const [ok, gone] = await Promise.allSettled([obs.read('a', 'g', 1000), obs.read('gone', 'g2', 1000)]);
    expect(ok.status).toBe('fulfilled');
    expect(gone.status === 'rejected' && gone.reason.message).toBe('topic gone does not exist');
    expect(asked).toEqual([['a', 'gone'], 'all']);
  });

  it('says KafkaUnreachable when the cluster does not answer, KafkaError otherwise', async () => {
    const named = (name: string, message: string) => Object.assign(new Error(message), { name });
    const refusing = (err: Error) => ({
      ...fakeCluster({ a: 1 }, {}).cluster,
      connect: async () => Promise.reject(err),
    });
    const read = (cluster: unknown) =>
      new KafkaClusterObserver({ brokers: ['b:9092'] } as never, {
        gatherMs: 1,
        connect: () => cluster as never,
      })
        .read('a', 'g', 1000)
        .then(
          () => undefined,
          (e: { reason: string; message: string }) => e,
        );
    const down = await read(refusing(named('KafkaJSConnectionError', 'connect ECONNREFUSED 10.0.0.1:9092')));
    expect(down).toMatchObject({ reason: 'KafkaUnreachable' });
    expect(down?.message).toBe('cannot connect to Kafka b:9092: connect ECONNREFUSED 10.0.0.1:9092');
    const auth = await read(refusing(named('KafkaJSSASLAuthenticationError', 'bad password')));
    expect(auth).toMatchObject({ reason: 'KafkaError' });
    const { cluster } = fakeCluster({ a: 1 }, {});
    cluster.brokerPool.refreshMetadata = async () => {
      throw named('KafkaJSNumberOfRetriesExceeded', 'Connection error: connect ECONNREFUSED');
    };
    expect(await read(cluster)).toMatchObject({ reason: 'KafkaUnreachable' });
    expect(await read(fakeCluster({}, {}).cluster)).toMatchObject({ reason: 'KafkaError' });
  });
});
