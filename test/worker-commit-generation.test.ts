/**
 * Exactly-once across a rebalance, against the bed's real broker: a commit is bound to the
 * generation of the assignment it was built for. kafkajs's consumer.commitOffsets stamps whatever
 * generation the consumer has when it (re-)sends, so a partition state built during generation G and
 * sent after the rebalance to G+1 is accepted and replaces the new owner's cut journal (the hazard,
 * shown first); the worker's generation-bound commit (OffsetCommit v7 with G fixed) is refused with
 * ILLEGAL_GENERATION, and a commit of the assignment in force is accepted.
 */
import { Kafka, logLevel, type Admin, type Consumer } from 'kafkajs';
import {
  commitUnderGeneration,
  consumerWithGenerations,
  type GenerationTracker,
} from '../consumer/src/delivery/group-generation';
import { readTestBed } from './env/testbed';
import { pollUntil } from './worker-support';
import { createTopicsWithLeaders } from './env/kafka-topics';

jest.setTimeout(180_000);

const bed = readTestBed();
const id = `gen-${process.pid}-${Date.now()}`;
const topic = `${id}.t`;
const group = `${id}.g`;
let admin: Admin;
const consumers: Consumer[] = [];

/** A running group member with its generation tracker. */
async function member(clientId: string): Promise<{ consumer: Consumer; generations: GenerationTracker }> {
  const kafka = new Kafka({ brokers: [bed.kafka!.bootstrap], clientId, logLevel: logLevel.NOTHING });
  const { consumer, generations } = consumerWithGenerations(kafka, group, () =>
    kafka.consumer({
      groupId: group,
      // kafkajs heartbeats between fetches: short fetch waits keep them regular, and a session
      // timeout far above a loaded box's stalls keeps the group at G+1 while the test commits.
      sessionTimeout: 30_000,
      heartbeatInterval: 300,
      rebalanceTimeout: 30_000,
      maxWaitTimeInMs: 500,
    }),
  );
  consumers.push(consumer);
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({ autoCommit: false, eachMessage: async () => undefined });
  return { consumer, generations: generations! };
}

async function committed(): Promise<{ offset: string; metadata: string | null }> {
  const res = await admin.fetchOffsets({ groupId: group, topics: [topic] });
  const p = res[0].partitions.find((x) => x.partition === 0)!;
  return { offset: p.offset, metadata: p.metadata };
}

beforeAll(async () => {
  admin = new Kafka({ brokers: [bed.kafka!.bootstrap], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await createTopicsWithLeaders(admin, [{ topic, numPartitions: 2 }]);
  // Offsets 0-9 exist, so every offset committed below (at most 8) lies inside the log. On an empty
  // partition a committed 5 is out of range: after any later rebalance kafkajs's owner fetches
  // from it, gets OFFSET_OUT_OF_RANGE and commits its default offset (-2, no metadata) over it.
  const producer = new Kafka({ brokers: [bed.kafka!.bootstrap], logLevel: logLevel.NOTHING }).producer();
  await producer.connect();
  await producer.send({
    topic,
    messages: Array.from({ length: 10 }, (_, i) => ({ partition: 0, value: `line ${i}` })),
  });
  await producer.disconnect();
});

afterAll(async () => {
  await Promise.allSettled(consumers.map((c) => c.disconnect()));
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
});

it('a commit built for generation G is refused after a rebalance to G+1 (kafkajs would accept it)', async () => {
  const a = await member('a');
  const g1 = await pollUntil(
    async () => a.generations.current,
    (g) => g !== undefined,
    60_000,
    100,
  );
  // Generation G: a owns both partitions and journals a cut of partition 0.
  await commitUnderGeneration(g1!, [{ topic, partition: 0, offset: '0', metadata: 'lp1;0-9@1' }]);
  expect(await committed()).toEqual({ offset: '0', metadata: 'lp1;0-9@1' });

  // A second member joins: the group rebalances to G+1 and both members are assigned again.
  const b = await member('b');
  const g2 = await pollUntil(
    async () => [a.generations.current, b.generations.current] as const,
    ([x, y]) => !!x && !!y && x.generationId > g1!.generationId && x.generationId === y.generationId,
    90_000,
    100,
  );
  expect(g2[0]!.memberId).toBe(g1!.memberId);

  // The hazard: kafkajs's commit of a state built during G is accepted under G+1.
  await a.consumer.commitOffsets([
    { topic, partition: 0, offset: '5', metadata: 'lp1;stale-kafkajs' } as never,
  ]);
  expect(await committed()).toEqual({ offset: '5', metadata: 'lp1;stale-kafkajs' });

  // The worker's commit of that state keeps G and is refused: the new owner's journal stands.
  await b.consumer.commitOffsets([{ topic, partition: 0, offset: '6', metadata: 'lp1;new-owner' } as never]);
  await expect(
    commitUnderGeneration(g1!, [{ topic, partition: 0, offset: '7', metadata: 'lp1;stale' }]),
  ).rejects.toMatchObject({ type: 'ILLEGAL_GENERATION' });
  expect(await committed()).toEqual({ offset: '6', metadata: 'lp1;new-owner' });

  // A commit of the assignment in force is accepted.
  await commitUnderGeneration(b.generations.current!, [
    { topic, partition: 0, offset: '8', metadata: 'lp1;current' },
  ]);
  expect(await committed()).toEqual({ offset: '8', metadata: 'lp1;current' });
});
