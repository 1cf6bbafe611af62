import { closeUnusedKafkaClients, KafkaConnectionUse, type KafkaClientPool } from './kafka-connection-use';
import { TopicBatchers } from './kafka-topic-batchers';
import { KafkaObservers } from '../autoscale/kafka-observers';
import { kafkaConnectionKey, type KafkaConnection } from './kafka-client';

const GRACE = 300_000;

function pool(): KafkaClientPool & { dropped: string[] } {
  const dropped: string[] = [];
  return { dropped, drop: async (keys) => void dropped.push(...keys) };
}

describe('KafkaConnectionUse', () => {
  it('retires the key of rotated credentials once no pipeline uses it and the grace has passed', async () => {
    let t = 0;
    const use = new KafkaConnectionUse(() => t);
    use.record('a', 'old');
    use.record('b', 'old');
    const p = pool();
    const live = new Set(['a', 'b']);
    t = 1000;
    use.record('a', 'new'); // a's Secret rotated
    expect(await closeUnusedKafkaClients(use, live, GRACE, [p])).toEqual([]); // b still on it
    use.record('b', 'new');
    expect(await closeUnusedKafkaClients(use, live, GRACE, [p])).toEqual([]); // used a moment ago
    t = 1000 + GRACE;
    use.record('a', 'new');
    expect(await closeUnusedKafkaClients(use, live, GRACE, [p])).toEqual(['old']);
    expect(p.dropped).toEqual(['old']);
    expect(use.size).toBe(1);
  });

  it('retires the key of deleted pipelines and keeps one shared with a live pipeline', () => {
    let t = 0;
    const use = new KafkaConnectionUse(() => t);
    use.record('a', 'k1');
    use.record('gone', 'k1');
    use.record('gone2', 'k2');
    t = GRACE;
    expect(use.retire(new Set(['a']), GRACE)).toEqual(['k2']);
    expect(use.retire(new Set(), GRACE)).toEqual(['k1']);
    expect(use.size).toBe(0);
  });
});

describe('dropping the clients of a connection', () => {
  const conn = (password: string): KafkaConnection => ({
    brokers: ['b:9092'],
    sasl: { mechanism: 'scram-sha-512', username: 'u', password },
  });

  it('topic batchers and observers disconnect and forget the dropped keys only', async () => {
    const disconnected: string[] = [];
    const fake = (c: KafkaConnection) =>
      ({
        connect: async () => undefined,
        disconnect: async () => void disconnected.push(c.sasl!.password),
      }) as never;
    const batchers = new TopicBatchers({ connect: fake });
    const observers = new KafkaObservers({ connect: fake });
    const [oldConn, newConn] = [conn('old'), conn('new')];
    for (const c of [oldConn, newConn]) {
      // Connected, as after a round or a batch.
      await (batchers.for(c) as unknown as { connected(): Promise<unknown> }).connected();
      await (observers.for(c) as unknown as { client(): Promise<unknown> }).client();
    }
    expect([batchers.size, observers.size]).toEqual([2, 2]);
    await Promise.all([batchers, observers].map((p) => p.drop([kafkaConnectionKey(oldConn), 'unknown'])));
    expect([batchers.size, observers.size]).toEqual([1, 1]);
    expect(disconnected).toEqual(['old', 'old']);
    // The remaining clients are those of the new credentials.
    expect(batchers.for(newConn)).toBe(batchers.for(conn('new')));
  });
});
