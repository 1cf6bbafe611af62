/**
 * Idempotent topic applier: create if missing, grow partitions (never shrink), repair drift of the
 * managed configs only. Recorded identity is the cluster id from describeCluster: kafkajs 2.2.4
 * speaks Metadata up to v6 and never sees topic ids (v10+), so `topicId` stays unset and deletion
 * safety rests on the cluster id plus the topic name. The broker round trips are in
 * kafka-topic-admin.ts, the managed-config repair and the message limit in kafka-topic-config.ts.
 */
import type { Admin } from 'kafkajs';
import { parseOwnerComment, type Owner } from '../desired/ownership';
import type { TopicSpec } from '../desired/topic';
import type { DestructiveGuard } from './guard';
import { KafkaApplyError } from './kafka-client';
import { readTopicOwner } from './kafka-owner';
import { call, createTopic, describeTopic } from './kafka-topic-admin';
import {
  MAX_MESSAGE_BYTES,
  maxMessageBytesOf,
  repairConfigsFrom,
  topicConfigs,
  type ConfigEntryView,
} from './kafka-topic-config';
import { countKafkaWrite } from './kafka-writes';
import type { TopicBatcher, TopicMeta } from './kafka-topic-batch';

/** Result of ensureTopic. */
export interface TopicOutcome {
  /** The topic matches the spec (partitions and managed configs). */
  ready: boolean;
  /** The topic exists and can be used even when not ready (e.g. more partitions than asked). */
  exists: boolean;
  /** `TopicReady` or why not: PartitionDecreaseNotSupported, TopicCreateRejected, ConfigRepairRejected. */
  reason: string;
  message: string;
  clusterId: string;
  /** Not available through kafkajs (see the file comment); kept for the status shape. */
  topicId?: string;
  partitions?: number;
  /** What this call changed, for events. */
  changes: string[];
  /** Differences the operator reports but does not change (replication factor). */
  warnings: string[];
  /** The topic's effective max.message.bytes (its own config or the broker default), when read. */
  maxMessageBytes?: number;
  /** Created just now and its configs not describable yet: maxMessageBytes is read next time. */
  limitPending?: boolean;
}

/** Result of deleteTopic. */
export interface TopicDeleteOutcome {
  deleted: boolean;
  reason: 'TopicDeleted' | 'TopicAlreadyGone' | 'ClusterIdMismatch' | 'TopicNotOwned';
  message: string;
  clusterId: string;
}

/** Runs an admin operation on the pipeline's cluster (KafkaAdminPool.withAdmin bound to a connection). */
export type AdminRunner = <T>(fn: (admin: Admin) => Promise<T>) => Promise<T>;

/** Partitions, replication and configs of an existing topic brought to the spec (shared by both appliers). */
async function finishTopic(
  withAdmin: AdminRunner,
  spec: TopicSpec,
  found: { partitions: number; replicas: number },
  base: { clusterId: string; changes: string[]; warnings: string[] },
  configs: () => Promise<ConfigEntryView[] | undefined> | undefined,
): Promise<TopicOutcome> {
  let current = found;
  if (current.partitions < spec.numPartitions) {
    countKafkaWrite('CreatePartitions');
    await call(`adding partitions to ${spec.topic}`, () =>
      withAdmin((admin) =>
        admin.createPartitions({ topicPartitions: [{ topic: spec.topic, count: spec.numPartitions }] }),
      ),
    );
    base.changes.push(`partitions ${current.partitions} -> ${spec.numPartitions}`);
    current = { ...current, partitions: spec.numPartitions };
  }
  if (current.replicas !== spec.replicationFactor) {
    base.warnings.push(
      `replication factor is ${current.replicas}, spec asks ${spec.replicationFactor}; change it with a partition reassignment`,
    );
  }
  // A topic created just now carries the spec's configs: nothing to read back.
  const all = await configs();
  const repaired = all
    ? await repairConfigsFrom(withAdmin, spec, all)
    : { changes: [], rejected: undefined, maxMessageBytes: maxMessageBytesOf([], spec) };
  base.changes.push(...repaired.changes);
  const result = {
    ...base,
    exists: true,
    partitions: current.partitions,
    ...(repaired.maxMessageBytes ? { maxMessageBytes: repaired.maxMessageBytes } : {}),
  };
  if (repaired.rejected)
    return { ...result, ready: false, reason: 'ConfigRepairRejected', message: repaired.rejected };
  if (current.partitions > spec.numPartitions) {
    const message = `topic ${spec.topic} has ${current.partitions} partitions, spec asks ${spec.numPartitions}: Kafka cannot remove partitions (the topic stays usable)`;
    return { ...result, ready: false, reason: 'PartitionDecreaseNotSupported', message };
  }
  return {
    ...result,
    ready: true,
    reason: 'TopicReady',
    message: `topic ${spec.topic} has ${current.partitions} partitions and the managed configs`,
  };
}

function createRejected(base: { clusterId: string; changes: string[]; warnings: string[] }, message: string) {
  return { ...base, ready: false, exists: false, reason: 'TopicCreateRejected', message };
}

/** Creates or updates the topic to match `spec`; throws KafkaApplyError only for unexpected failures. */
export async function ensureTopic(admin: Admin, spec: TopicSpec): Promise<TopicOutcome> {
  const { clusterId } = await call('describing the Kafka cluster', () => admin.describeCluster());
  const base = { clusterId, changes: [] as string[], warnings: [] as string[] };
  let current = await describeTopic(admin, spec.topic);
  if (!current) {
    const created = await createTopic(admin, spec);
    if (created.rejected) return createRejected(base, created.rejected);
    if (created.created) base.changes.push(`created with ${spec.numPartitions} partitions`);
    current = await describeTopic(admin, spec.topic);
    if (!current)
      throw new KafkaApplyError('KafkaError', `topic ${spec.topic} is not visible after creation`);
  }
  return finishTopic(
    (fn) => fn(admin),
    spec,
    current,
    base,
    async () => {
      return (await topicConfigs(admin, spec.topic)).all;
    },
  );
}

/**
 * ensureTopic through the cluster's batcher (apply/kafka-topic-batch.ts): `found` is the topic's
 * metadata the caller already read (undefined: missing). A missing topic is created in the next
 * coalesced CreateTopics; `created` says whether this call created it (then it carries the spec's
 * configs and is not read back, unless `readLimit` asks for the broker's max.message.bytes the spec
 * leaves to the default). Rare changes (partitions, config repairs) go through `withAdmin`.
 * `onCreated` is called as soon as this call has created the topic.
 */
export async function ensureTopicBatched(
  batch: TopicBatcher,
  withAdmin: AdminRunner,
  spec: TopicSpec,
  found: TopicMeta | undefined,
  clusterId: string,
  readLimit = false,
  onCreated?: () => void,
): Promise<TopicOutcome & { created: boolean }> {
  const base = { clusterId, changes: [] as string[], warnings: [] as string[] };
  let current = found;
  let created = false;
  if (!current) {
    const r = await call(`creating topic ${spec.topic}`, () => batch.creates.get(spec));
    if (r.rejected) return { ...createRejected(base, r.rejected), created };
    created = r.created;
    // Said before anything below can fail (a new topic's configs may not be readable yet): the
    // caller must remember the topic is ours even when this call throws.
    if (created) onCreated?.();
    if (created) {
      base.changes.push(`created with ${spec.numPartitions} partitions`);
      current = { partitions: spec.numPartitions, replicas: spec.replicationFactor };
    } else current = await call(`describing topic ${spec.topic}`, () => batch.describes.get(spec.topic));
    if (!current)
      throw new KafkaApplyError('KafkaError', `topic ${spec.topic} is not visible after creation`);
  }
  // A receiver packs up to the topic's limit: when the spec leaves it to the broker default, the
  // new topic's limit is the broker's message.max.bytes (kafka-broker-limit.ts: no override can
  // exist on a topic created just now), so IngestReady can judge packing.maxBytes at once.
  const limitUnknown = readLimit && !spec.configEntries.some((e) => e.name === MAX_MESSAGE_BYTES);
  const inherited = created && limitUnknown ? await newTopicLimit(batch) : undefined;
  const read = () => call(`describing configs of ${spec.topic}`, () => batch.configs.get(spec.topic));
  // Without the broker's value the new topic is read back; the broker may not describe a topic it
  // created a moment ago ("does not host this topic-partition"): not a failure, the limit is read
  // at the next reconcile.
  let limitPending = false;
  const out = await finishTopic(withAdmin, spec, current, base, () =>
    !created
      ? read()
      : !limitUnknown || inherited
        ? undefined
        : read().catch(() => {
            limitPending = true;
            return undefined;
          }),
  );
  const limit = out.maxMessageBytes ?? inherited;
  return {
    ...out,
    ...(limit ? { maxMessageBytes: limit } : {}),
    created,
    ...(limitPending ? { limitPending } : {}),
  };
}

/** The broker's limit for a new topic; a failure (or a batcher without it) leaves the topic read back. */
async function newTopicLimit(batch: TopicBatcher): Promise<number | undefined> {
  try {
    return await batch.newTopicLimit();
  } catch {
    return undefined;
  }
}

/**
 * Deletes the topic (deletionPolicy Delete) when the cluster is the one it was created on and,
 * given `claim`, its owner record names that pipeline; the leadership guard is confirmed right
 * before the deletion.
 */
export async function deleteTopic(
  admin: Admin,
  topic: string,
  expectedClusterId: string,
  claim?: { owner: Owner; guard: DestructiveGuard },
): Promise<TopicDeleteOutcome> {
  const { clusterId } = await call('describing the Kafka cluster', () => admin.describeCluster());
  if (clusterId !== expectedClusterId) {
    return {
      deleted: false,
      reason: 'ClusterIdMismatch',
      message: `Kafka cluster is ${clusterId}, topic ${topic} was created on ${expectedClusterId}; not deleted`,
      clusterId,
    };
  }
  if (!(await describeTopic(admin, topic)))
    return {
      deleted: false,
      reason: 'TopicAlreadyGone',
      message: `topic ${topic} does not exist`,
      clusterId,
    };
  if (claim) {
    const owner = parseOwnerComment(await readTopicOwner(admin, topic));
    if (owner?.uid !== claim.owner.uid) {
      const who = owner ? `owned by ${owner.namespace}/${owner.name}` : 'it has no owner record';
      return {
        deleted: false,
        reason: 'TopicNotOwned',
        message: `topic ${topic} left in place: ${who}`,
        clusterId,
      };
    }
    await claim.guard.confirm(`delete topic ${topic}`);
  }
  countKafkaWrite('DeleteTopics');
  await call(`deleting topic ${topic}`, () => admin.deleteTopics({ topics: [topic] }));
  return { deleted: true, reason: 'TopicDeleted', message: `deleted topic ${topic}`, clusterId };
}
