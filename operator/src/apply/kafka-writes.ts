/**
 * Counts of the Kafka writes this process sent (topic creations, config and partition changes,
 * deletions, owner-record commits), by API. Tests pin "a restart changes no topic" with them
 * (test/fleet-restart.test.ts); the request counters of observability/ cover reads as well.
 */
const counts = new Map<string, number>();

/** Kafka write APIs counted here. */
export type KafkaWriteApi =
  'CreateTopics' | 'AlterConfigs' | 'CreatePartitions' | 'DeleteTopics' | 'OwnerRecordCommit';

/** Counts one write request of `api`. */
export function countKafkaWrite(api: KafkaWriteApi): void {
  counts.set(api, (counts.get(api) ?? 0) + 1);
}

/** Writes sent by this process since start, by API. */
export function kafkaWriteCounts(): ReadonlyMap<string, number> {
  return new Map(counts);
}
