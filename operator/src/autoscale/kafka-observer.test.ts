import { KafkaClusterObserver } from './kafka-observer';
import { fakeCluster } from '../../../test/fixtures/kafka-observer-fake';

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
