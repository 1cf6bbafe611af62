import { KafkaClusterObserver } from './kafka-observer';
import { fakeCluster } from '../../../test/fixtures/kafka-observer-fake';

describe('KafkaClusterObserver with Metadata v6 (observer-metadata.ts)', () => {
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

  it('a topic deleted between Metadata and ListOffsets fails only its own pair, in the same requests', async () => {
    const topics = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`t${i}`, 2]));
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
      'reading log offsets of topic t5: partition 0: This server does not host this topic-partition',
    );
    expect(reads[0].status === 'fulfilled' && reads[0].value.offsets).toEqual([
      { partition: 0, end: 100, start: 0, committed: -1 },
      { partition: 1, end: 100, start: 0, committed: -1 },
    ]);
    // One ListOffsets per leader for the log end and one for the log start, errors or not.
    expect(calls.listOffsets).toBe(2);
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

  it("fills kafkajs's broker map naming a topic without partition errors (kafkajs's parser throws on any)", async () => {
    const errorOf = (topic: string) => (topic === 'a' ? 9 : 0);
    const { cluster, asked } = fakeCluster({ a: 1, b: 1 }, {}, true, 0, { errorOf });
    const obs = new KafkaClusterObserver({ brokers: ['b:9092'] } as never, {
      gatherMs: 1,
      connect: () => cluster as never,
    });
    const reads = await Promise.allSettled([obs.read('a', 'g', 1000), obs.read('b', 'g2', 1000)]);
    // A replica offline leaves the partition's leader serving: both are read.
    expect(reads.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    expect(asked).toEqual([['a', 'b'], ['b']]);
  });
});
