/**
 * The Kafka topics a pipeline needs, as plain specs for the admin API.
 *
 * Managed topic configs are exactly the keys in `kafka.topic.config` plus `compression.type` (which
 * resolveSpec defaults to lz4). The applier creates the topic with them and later repairs drift of
 * those keys only; every other topic config (set by an admin or by broker defaults) is left alone.
 */
import type { ResolvedSpec } from '../api/defaults';
import { catchSchemaError, SchemaError, type Result } from '../../../common/src/sql/identifiers';

/** A topic as the admin API creates it; `configEntries` are the managed configs. */
export interface TopicSpec {
  topic: string;
  numPartitions: number;
  replicationFactor: number;
  configEntries: Array<{ name: string; value: string }>;
}

// Kafka's own rule: legal characters, at most 249; '.' and '..' are reserved.
const TOPIC_RE = /^[A-Za-z0-9._-]{1,249}$/;
const CONFIG_KEY_RE = /^[a-z][a-z0-9.]{0,127}$/;
const MAX_PARTITIONS = 10_000;

function checkTopicName(name: string, what: string): string {
  if (!TOPIC_RE.test(name) || name === '.' || name === '..') {
    throw new SchemaError(
      'InvalidTopic',
      `${what} ${JSON.stringify(name)} must match ${TOPIC_RE.source} and not be '.' or '..'`,
    );
  }
  return name;
}

function checkCount(n: number, what: string, max: number): number {
  if (!Number.isSafeInteger(n) || n < 1 || n > max)
    throw new SchemaError('InvalidTopic', `${what} must be an integer in 1..${max}`);
  return n;
}

function configEntries(config: Record<string, string>): TopicSpec['configEntries'] {
  return Object.keys(config)
    .sort()
    .map((name) => {
      const value = config[name];
      if (!CONFIG_KEY_RE.test(name))
        throw new SchemaError(
          'InvalidTopicConfig',
          `topic config key ${JSON.stringify(name)} is not a Kafka config name`,
        );
      if (typeof value !== 'string' || value.length > 1024)
        throw new SchemaError(
          'InvalidTopicConfig',
          `topic config ${name} must be a string of at most 1024 characters`,
        );
      return { name, value };
    });
}

/** The pipeline's main topic: name, partitions, replication factor and managed configs. */
export function buildTopicSpec(spec: ResolvedSpec): Result<TopicSpec> {
  return catchSchemaError(() => {
    const t = spec.kafka.topic;
    return {
      topic: checkTopicName(t.name, 'kafka.topic.name'),
      numPartitions: checkCount(t.partitions, 'kafka.topic.partitions', MAX_PARTITIONS),
      replicationFactor: checkCount(t.replicationFactor, 'kafka.topic.replicationFactor', 32),
      configEntries: configEntries(t.config),
    };
  });
}

/**
 * The dead-letter topic (only when deadLetter.enabled): as many partitions as the main topic so a
 * parser misconfiguration that rejects everything cannot bottleneck on one partition; only
 * compression.type is managed on it.
 */
export function buildDeadLetterTopicSpec(spec: ResolvedSpec): Result<TopicSpec> | undefined {
  if (!spec.deadLetter.enabled) return undefined;
  return catchSchemaError(() => ({
    topic: checkTopicName(spec.deadLetter.topic, 'deadLetter.topic'),
    numPartitions: checkCount(spec.kafka.topic.partitions, 'kafka.topic.partitions', MAX_PARTITIONS),
    replicationFactor: checkCount(spec.kafka.topic.replicationFactor, 'kafka.topic.replicationFactor', 32),
    configEntries: configEntries({
      'compression.type': spec.kafka.topic.config['compression.type'] ?? 'lz4',
    }),
  }));
}
