/**
 * The lag observer's Metadata on the real broker (issue 18): each round sends exactly one Metadata
 * request, naming only the observed topics, even when one of them is missing (never created, or
 * deleted by hand while observed); the missing topic fails only its own pair and the other topics'
 * lag is still read. Pinned with the operator's request counters and a wire tap on the observer's
 * sockets (test/env/kafka-wire-tap.ts), which reads every Metadata request as the broker gets it
 * (before, kafkajs's parser threw on the missing topic and every round asked again for every
 * topic of the cluster).
 */
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { KafkaObservers } from '../operator/src/autoscale/kafka-observers';
import type { ObserverCluster } from '../operator/src/autoscale/kafka-round';
import { buildKafkaConfig } from '../operator/src/apply/kafka-client';
import { internalCluster } from '../operator/src/apply/kafka-owner';
import { kafkaRequests } from '../operator/src/apply/request-counts';
import { readTestBed } from './env/testbed';
import { createTopicsWithLeaders } from './env/kafka-topics';
import { wireTap, type MetadataAsk } from './env/kafka-wire-tap';
import { waitFor } from './operator-harness';

const bed = readTestBed();
const suffix = Date.now().toString(36);
const present = Array.from({ length: 6 }, (_, i) => `it.observed-${suffix}-${i}`);
const deleted = present[5];
const never = `it.observed-${suffix}-never`;
const observed = [...present, never];
const group = (topic: string) => `${topic}.g`;
/** Records produced per partition (at least), and the committed offset of partition 0 (partition 1 has none). */
const RECORDS = 10;
const COMMITTED = 3;

let admin: Admin;
/** Each present topic's offsets as kafkajs's admin reads them (a produce retry may duplicate records). */
const truth = new Map<string, Array<{ partition: number; end: number; start: number; committed: number }>>();

beforeAll(async () => {
  const kafka = new Kafka({ brokers: [bed.kafka!.bootstrap], logLevel: logLevel.NOTHING });
  admin = kafka.admin();
  await admin.connect();
  await createTopicsWithLeaders(
    admin,
    present.map((topic) => ({ topic, numPartitions: 2 })),
  );
  const producer = kafka.producer();
  await producer.connect();
  const messages = Array.from({ length: RECORDS }, (_, i) => ({ value: `line ${i}` }));
  await producer.sendBatch({
    topicMessages: present.flatMap((topic) =>
      [0, 1].map((partition) => ({ topic, messages: messages.map((m) => ({ ...m, partition })) })),
    ),
  });
  await producer.disconnect();
  for (const topic of present) {
    await admin.setOffsets({
      groupId: group(topic),
      topic,
      partitions: [{ partition: 0, offset: String(COMMITTED) }],
    });
    const offsets = await admin.fetchTopicOffsets(topic);
    truth.set(
      topic,
      offsets
        .map((o) => ({
          partition: o.partition,
          end: Number(o.high),
          start: Number(o.low),
          committed: o.partition === 0 ? COMMITTED : -1,
        }))
        .sort((a, b) => a.partition - b.partition),
    );
    expect(truth.get(topic)!.every((o) => o.end >= RECORDS)).toBe(true);
  }
});

afterAll(async () => {
  await admin.deleteTopics({ topics: present }).catch(() => undefined);
  await admin.disconnect();
});

it('asks for exactly the observed topics with one Metadata request per round, while one is missing or deleted', async () => {
  const tap = wireTap();
  const observers = new KafkaObservers({
    gatherMs: 5,
    connect: (conn) =>
      internalCluster(
        new Kafka({ ...buildKafkaConfig(conn), socketFactory: tap.socketFactory }),
      ) as unknown as ObserverCluster,
  });
  const observer = observers.for({ brokers: [bed.kafka!.bootstrap] });
  /** One fresh round over every observed pair: what each read gave and what went on the wire. */
  const round = async () => {
    const counted = kafkaRequests.get('Metadata');
    const written = tap.metadata.length;
    const rounds = observer.rounds;
    const reads = await Promise.allSettled(observed.map((t) => observer.read(t, group(t), 0)));
    expect(observer.rounds).toBe(rounds + 1);
    const byTopic = new Map(observed.map((t, i) => [t, reads[i]]));
    return { byTopic, counted: kafkaRequests.get('Metadata') - counted, asked: tap.metadata.slice(written) };
  };
  const sorted = (ask: MetadataAsk) => (ask === 'all' ? ask : [...ask].sort());
  const lagOf = (r: PromiseSettledResult<{ offsets: unknown }> | undefined) =>
    r?.status === 'fulfilled' ? r.value.offsets : r?.reason;
  const missing = (r: PromiseSettledResult<unknown> | undefined) =>
    r?.status === 'rejected' ? String((r.reason as Error).message) : undefined;
  try {
    // The first round of a connection also fills kafkajs's broker map (it routes ListOffsets and
    // OffsetFetch by node id), naming one topic the answer found.
    const first = await round();
    expect(sorted(first.asked[0])).toEqual([...observed].sort());
    expect(first.asked.slice(1).every((a) => a !== 'all' && a.length === 1 && present.includes(a[0]))).toBe(
      true,
    );
    expect(first.asked.length).toBeLessThanOrEqual(2);
    expect(first.counted).toBe(first.asked.length);

    const steady = [await round(), await round()];
    for (const r of steady) {
      expect(r.counted).toBe(1);
      expect(r.asked.map(sorted)).toEqual([[...observed].sort()]);
      expect(missing(r.byTopic.get(never))).toBe(`topic ${never} does not exist`);
      for (const t of present) expect(lagOf(r.byTopic.get(t))).toEqual(truth.get(t));
    }

    // Deleted by hand while observed: reported missing for its own pair within a few rounds.
    await admin.deleteTopics({ topics: [deleted] });
    const during: Awaited<ReturnType<typeof round>>[] = [];
    await waitFor(
      `${deleted} reported missing`,
      async () => {
        const r = await round();
        during.push(r);
        return missing(r.byTopic.get(deleted))?.includes('does not exist');
      },
      60_000,
    );
    const after = [await round(), await round()];
    for (const r of [...during, ...after]) {
      expect(r.counted).toBe(1);
      expect(r.asked.map(sorted)).toEqual([[...observed].sort()]);
      for (const t of present.filter((p) => p !== deleted))
        expect(lagOf(r.byTopic.get(t))).toEqual(truth.get(t));
    }
    for (const r of after) expect(missing(r.byTopic.get(deleted))).toBe(`topic ${deleted} does not exist`);
    expect(tap.metadata).not.toContain('all');
    console.log(
      JSON.stringify({
        observerMetadata: {
          rounds: 1 + steady.length + during.length + after.length,
          metadataRequests: tap.metadata.length,
          bytesReceived: tap.bytesReceived,
        },
      }),
    );
  } finally {
    await observers.close();
  }
});
