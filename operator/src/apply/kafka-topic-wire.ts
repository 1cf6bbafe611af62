/**
 * The wire side of the topic batcher (kafka-topic-batch.ts): the parts of kafkajs's internal
 * cluster it talks to, the answers it hands out, and the pure mapping of broker responses to
 * per-topic results (kafkajs 2.2.4 is pinned).
 */
import type { TopicSpec } from '../desired/topic';
import { KafkaApplyError } from './kafka-client';
import type { CoordinatorBroker, OffsetFetchBroker } from './kafka-owner';
import type { ProtocolBroker } from '../../../common/src/kafka/group-protocol';

/** Partition count and smallest replica count of an existing topic. */
export interface TopicMeta {
  partitions: number;
  replicas: number;
}

/** Outcome of a creation: created by this call, already there, or refused by the broker. */
export interface CreateResult {
  created: boolean;
  rejected?: string;
}

/** One config of a topic as DescribeConfigs reports it. */
export interface TopicConfigEntry {
  configName: string;
  configValue: string;
  /** 1 = set on the topic itself (DYNAMIC_TOPIC_CONFIG). */
  configSource: number;
  isSensitive: boolean;
}

/** Metadata as kafkajs's broker pool keeps it. */
export interface MetadataView {
  clusterId?: string;
  topicMetadata: Array<{ topic: string; partitionMetadata: Array<{ replicas: number[] }> }>;
}
/** The controller broker's requests the batcher sends. */
export interface BatchBroker {
  /** The broker's id (a BROKER config resource is named by it and answered only by that broker). */
  nodeId?: number | null;
  createTopics(req: { topics: object[]; timeout: number }): Promise<unknown>;
  describeConfigs(req: {
    resources: Array<{ type: number; name: string; configNames?: string[] }>;
    includeSynonyms: boolean;
  }): Promise<{ resources: Array<{ resourceName: string; configEntries: TopicConfigEntry[] }> }>;
}
/** The owner group's coordinator. */
export type Coordinator = CoordinatorBroker & OffsetFetchBroker;
/** The parts of kafkajs's internal cluster the batcher uses (tests inject a fake). */
export interface BatchCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  brokerPool: {
    refreshMetadata(topics: string[]): Promise<void>;
    metadata?: MetadataView;
    findConnectedBroker(): Promise<ProtocolBroker>;
  };
  findControllerBroker(): Promise<BatchBroker>;
  findGroupCoordinator(req: { groupId: string }): Promise<Coordinator>;
}

/** DescribeConfigs resource type of a topic. */
export const TOPIC_RESOURCE = 2;
/** DescribeConfigs resource type of a broker. */
export const BROKER_RESOURCE = 4;
/** The broker config a topic without its own max.message.bytes inherits. */
export const BROKER_MESSAGE_MAX_BYTES = 'message.max.bytes';

/** The positive integer value of `name` in a DescribeConfigs answer, if any. */
export function sizeConfig(entries: readonly TopicConfigEntry[], name: string): number | undefined {
  const value = entries.find((e) => e.configName === name)?.configValue;
  const n = value === undefined || value === null ? NaN : Number(value);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** The kafkajs error type (`UNKNOWN_TOPIC_OR_PARTITION`...), if any. */
export function errorType(err: unknown): string | undefined {
  return (err as { type?: string })?.type;
}

/**
 * Whether a broker error type says the group coordinator moved or is not up: the coordinator is
 * looked up again. kafkajs 2.2.4 names them NOT_COORDINATOR_FOR_GROUP and
 * GROUP_COORDINATOR_NOT_AVAILABLE (Kafka's own names, without the group words, are matched too).
 */
export function coordinatorMoved(type: string | undefined): boolean {
  return /^(NOT_COORDINATOR(_FOR_GROUP)?|(GROUP_)?COORDINATOR_NOT_AVAILABLE)$/.test(type ?? '');
}

/** Per-topic errors of a CreateTopics aggregate, by topic. */
export function createErrors(err: unknown): Map<string, { type?: string; message: string }> | undefined {
  const errors = (err as { errors?: Array<{ topic?: string; type?: string; message?: string }> }).errors;
  if (!Array.isArray(errors)) return undefined;
  return new Map(errors.map((e) => [e.topic ?? '', { type: e.type, message: e.message ?? '' }]));
}

/** Runs `batch` over all keys; when it fails and there is more than one, answers each key alone. */
export async function withSplit<V>(keys: string[], batch: (keys: string[]) => Promise<Map<string, V>>) {
  try {
    return (await batch(keys)) as Map<string, V | Error>;
  } catch (err) {
    if (keys.length <= 1) throw err;
    const out = new Map<string, V | Error>();
    for (const k of keys) {
      const one = await batch([k]).catch((e: unknown) => new Map([[k, toError(e)]]));
      out.set(k, one.get(k) as V | Error);
    }
    return out;
  }
}

function toError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

/** Each named topic's partition count and smallest replica count ('' and absent topics: undefined). */
export function topicMetas(
  names: readonly string[],
  meta: MetadataView | undefined,
): Map<string, TopicMeta | undefined> {
  const byName = new Map((meta?.topicMetadata ?? []).map((t) => [t.topic, t]));
  const out = new Map<string, TopicMeta | undefined>();
  for (const n of names) {
    const t = byName.get(n);
    out.set(
      n,
      t && {
        partitions: t.partitionMetadata.length,
        replicas: Math.min(...t.partitionMetadata.map((p) => p.replicas.length)),
      },
    );
  }
  return out;
}

/** Per-topic results of one CreateTopics from its per-topic errors (none: every topic created). */
export function createResults(
  specs: readonly TopicSpec[],
  errors: ReturnType<typeof createErrors>,
): Map<string, CreateResult | Error> {
  const out = new Map<string, CreateResult | Error>();
  for (const s of specs) {
    const e = errors?.get(s.topic);
    if (!e) out.set(s.topic, { created: true });
    else if (e.type === 'TOPIC_ALREADY_EXISTS') out.set(s.topic, { created: false });
    else if (e.type && /INVALID|POLICY/.test(e.type))
      out.set(s.topic, { created: false, rejected: `${e.type}: ${e.message}` });
    else out.set(s.topic, new KafkaApplyError('KafkaError', `creating topic ${s.topic}: ${e.message}`));
  }
  return out;
}
