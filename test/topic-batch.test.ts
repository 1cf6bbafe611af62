/**
 * The Topic part's coalescing batcher against the real broker: N topics asked for in the same
 * moment cost ONE request of each kind (Metadata too: missing topics are answered as missing in
 * the same request), every caller gets its own answer, and errors stay with their topic. Pinned
 * with the product's request counters, never with timings.
 */
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { TopicBatchers } from '../operator/src/apply/kafka-topic-batchers';
import { kafkaRequests } from '../operator/src/apply/request-counts';
import { ownerRecord, parseOwnerComment } from '../operator/src/desired/ownership';
import type { TopicSpec } from '../operator/src/desired/topic';
import { readTestBed } from './env/testbed';

const bed = readTestBed();
const suffix = randomBytes(4).toString('hex');
const N = 20;

function topicSpec(
  topic: string,
  config: Record<string, string> = { 'retention.ms': '86400000' },
): TopicSpec {
  return {
    topic,
    numPartitions: 2,
    replicationFactor: 1,
    configEntries: Object.entries(config).map(([name, value]) => ({ name, value })),
  };
}

/** The Kafka request counters of this process, by API. */
function kafkaRequestCounts(): ReadonlyMap<string, number> {
  return new Map(kafkaRequests.entries());
}

/** Requests of `api` counted since `before`. */
function delta(before: ReadonlyMap<string, number>, api: string): number {
  return (kafkaRequestCounts().get(api) ?? 0) - (before.get(api) ?? 0);
}

describe('TopicBatcher (real broker)', () => {
  const conn = { brokers: [bed.kafka!.bootstrap] };
  const batchers = new TopicBatchers();
  let raw: Admin;
  const names = Array.from({ length: N }, (_, i) => `it.batch-${suffix}-${i}`);

  beforeAll(async () => {
    raw = new Kafka({ brokers: conn.brokers, logLevel: logLevel.NOTHING }).admin();
    await raw.connect();
    // One topic exists already (created by someone else): its creation answers "not created".
    await raw.createTopics({ topics: [{ topic: names[0], numPartitions: 1 }] });
  });
  afterAll(async () => {
    await raw.deleteTopics({ topics: names }).catch(() => undefined);
    await raw.disconnect();
    await batchers.close();
  });

  it('creates N topics with one CreateTopics request, errors per topic', async () => {
    const batch = batchers.for(conn);
    const before = kafkaRequestCounts();
    const found = await Promise.all(names.map((n) => batch.describes.get(n)));
    expect(found[0]).toEqual({ partitions: 1, replicas: 1 });
    expect(found.slice(1).every((f) => f === undefined)).toBe(true);
    // The missing names are answered as missing by the same request, never by one for all topics.
    expect(delta(before, 'Metadata')).toBe(1);

    const bad = `it.batch-${suffix}-bad`;
    const results = await Promise.all([
      ...names.map((n) => batch.creates.get(topicSpec(n))),
      batch.creates.get(topicSpec(bad, { 'cleanup.policy': 'no-such-policy' })),
    ]);
    expect(delta(before, 'CreateTopics')).toBe(1);
    expect(results[0]).toEqual({ created: false });
    expect(results.slice(1, N).every((r) => r.created)).toBe(true);
    expect(results[N].created).toBe(false);
    expect(results[N].rejected).toMatch(/INVALID/);

    const meta = await raw.fetchTopicMetadata({ topics: names.slice(1) });
    expect(meta.topics.map((t) => t.partitions.length)).toEqual(Array(N - 1).fill(2));
    const configs = await Promise.all(names.map((n) => batch.configs.get(n)));
    expect(delta(before, 'DescribeConfigs')).toBe(1);
    const retention = configs[1].find((e) => e.configName === 'retention.ms');
    expect(retention?.configValue).toBe('86400000');
  });

  it("learns a new topic's max.message.bytes from ONE DescribeConfigs of the broker, equal to the topic's own", async () => {
    const batch = batchers.for(conn);
    const before = kafkaRequestCounts();
    // Every creation of a storm asks at once: one request between them, reused afterwards.
    const limits = await Promise.all(names.map(() => batch.newTopicLimit()));
    expect(await batch.newTopicLimit()).toBe(limits[0]);
    expect(delta(before, 'DescribeConfigs')).toBe(1);
    expect(new Set(limits).size).toBe(1);
    // What the topic read back would have said (a topic without its own max.message.bytes).
    const res = await raw.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: 2, name: names[1] }],
    });
    const own = res.resources[0].configEntries.find((e) => e.configName === 'max.message.bytes');
    expect(own?.configSource).not.toBe(1);
    expect(limits[0]).toBe(Number(own?.configValue));
  });

  it('reads and writes N owner records with one OffsetFetch and one OffsetCommit', async () => {
    const batch = batchers.for(conn);
    const before = kafkaRequestCounts();
    const records = names.map((_, i) =>
      ownerRecord({ namespace: 'it', name: `p${i}`, uid: `uid-${suffix}-${i}` }),
    );
    await Promise.all(names.map((n, i) => batch.commitOwner(n, records[i])));
    expect(delta(before, 'OwnerRecordCommit')).toBe(1);
    const read = await Promise.all(names.map((n) => batch.owners.get(n)));
    expect(delta(before, 'OffsetFetch')).toBe(1);
    expect(read.map((r) => parseOwnerComment(r)?.uid)).toEqual(names.map((_, i) => `uid-${suffix}-${i}`));
    // A topic without a record answers undefined, in the same single request.
    const none = `it.batch-${suffix}-none`;
    const [again, missing] = await Promise.all([batch.owners.get(names[1]), batch.owners.get(none)]);
    expect(parseOwnerComment(again)?.uid).toBe(`uid-${suffix}-1`);
    expect(missing).toBeUndefined();
    expect(delta(before, 'OffsetFetch')).toBe(2);
  });

  it('answers an owner-record commit per topic: a topic the coordinator does not know fails alone, in one request', async () => {
    const batch = batchers.for(conn);
    const before = kafkaRequestCounts();
    const ghost = `it.batch-${suffix}-never-created`;
    const rec = ownerRecord({ namespace: 'it', name: 'p1', uid: `uid-${suffix}-1` });
    const [ok, unknown] = await Promise.allSettled([
      batch.commitOwner(names[1], rec),
      batch.commitOwner(ghost, rec),
    ]);
    expect(ok.status).toBe('fulfilled');
    expect(unknown).toMatchObject({
      status: 'rejected',
      reason: { type: 'UNKNOWN_TOPIC_OR_PARTITION', reason: 'KafkaError' },
    });
    // One request between them: no re-sending of each record alone.
    expect(delta(before, 'OwnerRecordCommit')).toBe(1);
  });
});
