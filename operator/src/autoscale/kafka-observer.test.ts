import { KafkaClusterObserver } from './kafka-observer';

/** A fake kafkajs cluster: topics with partitions on broker 1, committed offsets per group. */
function fakeCluster(topics: Record<string, number>, committed: Record<string, Record<number, string>>) {
  const calls = { metadata: 0, listOffsets: 0, coordinator: 0, offsetFetch: 0 };
  let loaded: string[] = [];
  const cluster = {
    connect: async () => undefined,
    disconnect: async () => undefined,
    brokerPool: {
      refreshMetadata: async (want: string[]) => {
        calls.metadata++;
        if (want.some((t) => !(t in topics)))
          throw Object.assign(new Error('unknown'), { type: 'UNKNOWN_TOPIC_OR_PARTITION' });
        loaded = want.length ? want : Object.keys(topics);
      },
    },
    findTopicPartitionMetadata: (topic: string) =>
      loaded.includes(topic)
        ? Array.from({ length: topics[topic] }, (_, partitionId) => ({ partitionId, leader: 1 }))
        : [],
    fetchTopicsOffset: async (
      req: Array<{ topic: string; partitions: Array<{ partition: number }>; fromBeginning: boolean }>,
    ) => {
      calls.listOffsets++;
      return req.map((r) => ({
        topic: r.topic,
        partitions: r.partitions.map((p) => ({
          partition: p.partition,
          offset: r.fromBeginning ? '0' : '100',
        })),
      }));
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
                  offset: committed[req.groupId]?.[p.partition] ?? '-1',
                  metadata: null,
                })),
              },
            ],
          };
        },
      };
    },
  };
  return { cluster, calls };
}

describe('KafkaClusterObserver', () => {
  it('serves N pipelines polling together from one round', async () => {
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
