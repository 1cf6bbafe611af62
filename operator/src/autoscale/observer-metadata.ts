/**
 * The Metadata step of a Kafka observer round (kafka-observer.ts): which observed topics can be
 * read this round, with their partitions' leaders (ListOffsets goes to each leader), and why the
 * others cannot. One Metadata v6 request names exactly the observed topics and is answered per
 * topic (apply/kafka-metadata.ts), so a missing topic (a deleted pipeline's, still observed for a
 * few minutes; one deleted by hand; one not created yet) is reported for its pipelines alone.
 * kafkajs's own parser throws on any topic error, so with it a round that named one missing topic
 * had to ask again for every topic in the cluster, every round. Brokers without Metadata v6 keep
 * that path.
 */
import {
  METADATA_API_KEY,
  METADATA_VERSION,
  metadataRequest,
  type BrokerAddress,
  type MetadataAnswer,
} from '../apply/kafka-metadata';
import { errorMessage } from '../apply/kafka-client';
import { brokerSupports, protocolError, sendProtocolRequest } from '../../../common/src/kafka/group-protocol';
import { topicIndex, type ObserverCluster, type PartitionMeta } from './kafka-round';

/** What a round's Metadata says about the observed topics. */
export interface ObservedTopics {
  /** The partitions (sorted by id, with their leaders) of each topic that can be read. */
  partitions: Map<string, PartitionMeta[]>;
  /** Why each other topic cannot be read this round (missing, its own error, a partition without leader). */
  failed: Map<string, string>;
}

/**
 * Reads the metadata of exactly `topics` for one round; `count` sees each request by API. Throws
 * only when the request itself fails (connection, authentication): topic-level trouble stays with
 * its topic in `failed`.
 */
export async function readTopicMetadata(
  cluster: ObserverCluster,
  topics: readonly string[],
  count: (api: string) => void,
): Promise<ObservedTopics> {
  const broker = await cluster.brokerPool.findConnectedBroker();
  if (!brokerSupports(broker, METADATA_API_KEY, METADATA_VERSION))
    return readWithKafkajs(cluster, topics, count);
  count('Metadata');
  const answer = await sendProtocolRequest(broker, metadataRequest(topics));
  const read = routable(answer, topics);
  // kafkajs's own parser throws on any partition error: its refresh names a topic without one.
  const clean = [...read.partitions.keys()].find((t) =>
    answer.leaders!.get(t)!.every((p) => p.errorCode === 0),
  );
  if (clean !== undefined) await knowBrokers(cluster, answer.brokers ?? [], clean, count);
  return read;
}

/** The answer's readable topics (every partition has a leader) and why the others are not. */
export function routable(answer: MetadataAnswer, topics: readonly string[]): ObservedTopics {
  const out: ObservedTopics = { partitions: new Map(), failed: new Map() };
  for (const topic of topics) {
    const a = answer.topics.get(topic);
    const leaders = answer.leaders?.get(topic);
    const leaderless = leaders?.find((p) => p.leader < 0);
    if (!answer.topics.has(topic)) out.failed.set(topic, `the broker left topic ${topic} out of its answer`);
    else if (a === undefined) out.failed.set(topic, `topic ${topic} does not exist`);
    else if (a instanceof Error) out.failed.set(topic, `topic ${topic}: ${errorMessage(a)}`);
    else if (!leaders) out.failed.set(topic, `the broker gave no partitions for topic ${topic}`);
    else if (leaderless) {
      const why = protocolError(leaderless.errorCode)?.type ?? 'no leader';
      out.failed.set(topic, `partition ${leaderless.partitionId} of topic ${topic} has no leader (${why})`);
    } else
      out.partitions.set(
        topic,
        leaders.map(({ partitionId, leader }) => ({ partitionId, leader })),
      );
  }
  return out;
}

/**
 * kafkajs routes a request to a node id through its broker map, filled by its own Metadata; a node
 * it does not know makes it refresh its metadata of every topic. So when the answer lists a
 * broker kafkajs does not know (a new connection, a broker added or moved), its map is refreshed
 * once naming one readable topic without partition errors: small, and answered without error.
 */
async function knowBrokers(
  cluster: ObserverCluster,
  brokers: readonly BrokerAddress[],
  topic: string,
  count: (api: string) => void,
): Promise<void> {
  const known = cluster.brokerPool.metadata?.brokers ?? [];
  const same = (b: BrokerAddress) =>
    known.some((k) => k.nodeId === b.nodeId && k.host === b.host && k.port === b.port);
  if (brokers.every(same) && known.length > 0) return;
  count('Metadata');
  await cluster.brokerPool.refreshMetadata([topic]);
}

/**
 * kafkajs's Metadata (brokers without v6): it throws on any topic error, so when a topic is
 * missing every topic of the cluster is asked for instead and the missing ones are left out.
 * The answer is indexed once: kafkajs's own lookups scan the whole topic list per topic.
 */
async function readWithKafkajs(
  cluster: ObserverCluster,
  topics: readonly string[],
  count: (api: string) => void,
): Promise<ObservedTopics> {
  try {
    count('Metadata');
    await cluster.brokerPool.refreshMetadata([...topics]);
  } catch (err) {
    if ((err as { type?: string }).type !== 'UNKNOWN_TOPIC_OR_PARTITION') throw err;
    count('Metadata');
    await cluster.brokerPool.refreshMetadata([]);
  }
  const partitions = topicIndex(cluster.brokerPool.metadata?.topicMetadata ?? [], topics);
  const failed = new Map<string, string>();
  for (const t of topics) if (!partitions.has(t)) failed.set(t, `topic ${t} does not exist`);
  return { partitions, failed };
}
