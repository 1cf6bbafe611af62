/**
 * Single kafkajs admin calls on one topic (describe, create), and the classification of kafkajs
 * failures into KafkaApplyError reasons (unreachable vs. other) shared by every topic applier.
 * Separate from kafka-topic.ts because these are the raw broker round trips and their error
 * words; the appliers there decide what to change.
 */
import type { Admin } from 'kafkajs';
import type { TopicSpec } from '../desired/topic';
import { KafkaApplyError, errorMessage } from './kafka-client';
import { countKafkaWrite } from './kafka-writes';

/** The failure as a KafkaApplyError: KafkaUnreachable for connection-level errors, else KafkaError. */
export function kafkaError(err: unknown, doing: string): KafkaApplyError {
  if (err instanceof KafkaApplyError) return err;
  const name = err instanceof Error ? err.name : '';
  // Connection-level kafkajs errors: the broker is down or unreachable, worth a reconnect.
  const unreachable = /Connection|NumberOfRetriesExceeded|BrokerNotFound|Timeout/.test(name);
  return new KafkaApplyError(
    unreachable ? 'KafkaUnreachable' : 'KafkaError',
    `${doing}: ${errorMessage(err)}`,
  );
}

/** Runs one admin call, turning its failure into a KafkaApplyError saying what was being done. */
export async function call<T>(doing: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw kafkaError(err, doing);
  }
}

/** The broker's error type name (e.g. UNKNOWN_TOPIC_OR_PARTITION) carried by a kafkajs error. */
export function errorType(err: unknown): string | undefined {
  return (err as { type?: string })?.type;
}

/** Partition count and replication factor of a topic, or undefined when it does not exist. */
export async function describeTopic(
  admin: Admin,
  topic: string,
): Promise<{ partitions: number; replicas: number } | undefined> {
  try {
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
    const meta = topics.find((t) => t.name === topic);
    if (!meta) return undefined;
    return {
      partitions: meta.partitions.length,
      replicas: Math.min(...meta.partitions.map((p) => p.replicas.length)),
    };
  } catch (err) {
    if (errorType(err) === 'UNKNOWN_TOPIC_OR_PARTITION') return undefined;
    throw kafkaError(err, `describing topic ${topic}`);
  }
}

/** Creates the topic; a topic that already exists is not created, a policy refusal is returned. */
export async function createTopic(
  admin: Admin,
  spec: TopicSpec,
): Promise<{ created: boolean; rejected?: string }> {
  try {
    countKafkaWrite('CreateTopics');
    const created = await admin.createTopics({
      waitForLeaders: true,
      topics: [
        {
          topic: spec.topic,
          numPartitions: spec.numPartitions,
          replicationFactor: spec.replicationFactor,
          configEntries: spec.configEntries,
        },
      ],
    });
    return { created };
  } catch (err) {
    // createTopics wraps per-topic failures in an aggregate whose first entry has the broker's words.
    const first = (err as { errors?: Array<{ type?: string; message?: string }> }).errors?.[0];
    const type = errorType(err) ?? first?.type;
    if (type === 'TOPIC_ALREADY_EXISTS') return { created: false };
    if (type && /INVALID|POLICY/.test(type))
      return { created: false, rejected: `${type}: ${first?.message ?? errorMessage(err)}` };
    throw kafkaError(err, `creating topic ${spec.topic}`);
  }
}
