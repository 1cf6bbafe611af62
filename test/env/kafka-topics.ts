/**
 * Topic creation for tests and benchmarks that resolves only once the broker serves every partition.
 *
 * kafkajs's `createTopics({ waitForLeaders: true })` polls metadata but waits through
 * LEADER_NOT_AVAILABLE only. A KRaft broker that has not yet applied the new topic's metadata record
 * answers UNKNOWN_TOPIC_OR_PARTITION for a moment after CreateTopics succeeded, and kafkajs then
 * fails the call (seen on a loaded CI machine: "This server does not host this topic-partition").
 */
import type { Admin, ITopicConfig } from 'kafkajs';

/** Errors a broker answers while a just-created topic's leaders are still being settled. */
const SETTLING = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE', 'NOT_LEADER_OR_FOLLOWER']);

/** How long a new topic may take to get leaders before the call fails (generous: loaded CI machines). */
const LEADER_WAIT_MS = 60_000;

function errorType(err: unknown): string | undefined {
  return (err as { type?: string } | undefined)?.type;
}

/** True when the broker reports every partition of every topic with a leader. */
export async function topicsHaveLeaders(admin: Admin, topics: ITopicConfig[]): Promise<boolean> {
  try {
    const meta = await admin.fetchTopicMetadata({ topics: topics.map((t) => t.topic) });
    return topics.every((want) => {
      const got = meta.topics.find((t) => t.name === want.topic);
      const partitions = want.numPartitions ?? 1;
      return (
        got !== undefined && got.partitions.length >= partitions && got.partitions.every((p) => p.leader >= 0)
      );
    });
  } catch (err) {
    if (SETTLING.has(errorType(err) ?? '')) return false;
    throw err;
  }
}

/**
 * Creates `topics` (false when they all existed already, as kafkajs answers) and resolves once every
 * partition has a leader; fails after LEADER_WAIT_MS with the topics named.
 */
export async function createTopicsWithLeaders(admin: Admin, topics: ITopicConfig[]): Promise<boolean> {
  const created = await admin.createTopics({ topics, waitForLeaders: false });
  const deadline = Date.now() + LEADER_WAIT_MS;
  while (!(await topicsHaveLeaders(admin, topics))) {
    if (Date.now() > deadline) {
      throw new Error(
        `topics ${topics.map((t) => t.topic).join(', ')} have no leaders after ${LEADER_WAIT_MS} ms`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return created;
}
