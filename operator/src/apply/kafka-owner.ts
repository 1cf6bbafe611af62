/**
 * The owner record of a Kafka topic, kept on the Kafka cluster itself. Kafka refuses topic
 * configs it does not know ("Unknown topic config name"), and none of its configs takes free
 * text, so the record cannot be a topic config. It is the metadata string of a committed offset
 * (partition 0 of the topic) in the dedicated consumer group `logpipeline.owners`, which no
 * consumer ever joins: any client of the cluster can read it (kafka-consumer-groups, AdminClient
 * listConsumerGroupOffsets), Kafka removes it with the topic, and the operator renews it daily,
 * because an empty group's offsets expire after `offsets.retention.minutes` (7 days by default).
 */
import { countKafkaRequest } from './request-counts';
import { Kafka, type Admin } from 'kafkajs';
import { buildKafkaConfig, errorMessage, KafkaApplyError, type KafkaConnection } from './kafka-client';

/** Consumer group holding the owner records of every topic the operator manages. */
export const OWNER_GROUP = 'logpipeline.owners';

/**
 * The owner record of `topic`, or undefined when none is committed. kafkajs asks only for the
 * partitions its metadata cache knows; when a concurrent metadata refresh on the shared admin left
 * the topic out, the answer has no partition 0 at all, which is not "no record": read again, and
 * fail (retry later) rather than report a missing record that would be re-written.
 */
export async function readTopicOwner(admin: Admin, topic: string): Promise<string | undefined> {
  for (let attempt = 0; attempt < 4; attempt++) {
    let res: Awaited<ReturnType<Admin['fetchOffsets']>>;
    try {
      // A metadata request for one topic replaces kafkajs' whole metadata cache: load ours again.
      if (attempt > 0) await admin.fetchTopicMetadata({ topics: [topic] });
      res = await admin.fetchOffsets({ groupId: OWNER_GROUP, topics: [topic] });
    } catch (err) {
      throw new KafkaApplyError('KafkaError', `reading the owner record of ${topic}: ${errorMessage(err)}`);
    }
    const p0 = res.find((t) => t.topic === topic)?.partitions.find((p) => p.partition === 0);
    if (p0) return p0.offset !== '-1' && p0.metadata ? p0.metadata : undefined;
  }
  throw new OwnerRecordUnreadable(`reading the owner record of ${topic}: no partition metadata`);
}

/** The owner record could not be read (kafkajs kept losing the topic's metadata); not "no record". */
export class OwnerRecordUnreadable extends KafkaApplyError {
  constructor(message: string) {
    super('KafkaError', message);
  }
}

export interface CoordinatorBroker {
  offsetCommit(req: {
    groupId: string;
    groupGenerationId: number;
    memberId: string;
    topics: Array<{
      topic: string;
      partitions: Array<{ partition: number; offset: string; metadata: string }>;
    }>;
  }): Promise<unknown>;
}
/** kafkajs's own OffsetFetch (v1-v4, one group per request) on a group coordinator. */
export interface OffsetFetchBroker {
  offsetFetch(req: {
    groupId: string;
    topics: Array<{ topic: string; partitions: Array<{ partition: number }> }>;
  }): Promise<{
    responses: Array<{
      topic: string;
      partitions: Array<{ partition: number; offset: string; metadata: string | null }>;
    }>;
  }>;
}
export interface InternalCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  findGroupCoordinator(req: { groupId: string }): Promise<CoordinatorBroker>;
}

/**
 * kafkajs commits offsets with metadata only through its internal cluster (its consumer and
 * admin APIs drop the metadata string); kafkajs 2.2.4 is pinned, and the integration tests
 * (test/ownership.test.ts) fail if this ever changes.
 */
export function internalCluster(kafka: Kafka): InternalCluster {
  const key = Object.getOwnPropertySymbols(kafka).find(
    (s) => s.description === 'private:Kafka:createCluster',
  );
  const create = key && (kafka as unknown as Record<symbol, unknown>)[key];
  if (typeof create !== 'function')
    throw new KafkaApplyError('KafkaError', 'kafkajs internals changed: cannot commit owner records');
  return (create as (o: object) => InternalCluster)({ allowAutoTopicCreation: false });
}

/** Commits `record` as the owner of `topic` (generation -1: a group no consumer ever joins). */
export async function writeTopicOwner(conn: KafkaConnection, topic: string, record: string): Promise<void> {
  const cluster = internalCluster(new Kafka(buildKafkaConfig(conn)));
  countKafkaRequest('OwnerRecordCommit');
  try {
    await cluster.connect();
    const coordinator = await cluster.findGroupCoordinator({ groupId: OWNER_GROUP });
    await coordinator.offsetCommit({
      groupId: OWNER_GROUP,
      groupGenerationId: -1,
      memberId: '',
      topics: [{ topic, partitions: [{ partition: 0, offset: '0', metadata: record }] }],
    });
  } catch (err) {
    throw new KafkaApplyError('KafkaError', `recording the owner of ${topic}: ${errorMessage(err)}`);
  } finally {
    await cluster.disconnect().catch(() => undefined);
  }
}
