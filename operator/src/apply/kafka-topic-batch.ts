/**
 * Batched topic reads and writes for the Topic part, one batcher per Kafka cluster (same key as
 * KafkaAdminPool). A new pipeline used to cost ~20 admin requests of its own (describeCluster
 * twice, kafkajs metadata refreshes of every topic it had ever seen, CreateTopics with a wait for
 * leaders, DescribeConfigs, an OffsetFetch for the owner record and a fresh connection for the
 * owner-record commit). Here every call goes through a coalescer (apply/coalesce.ts): the
 * reconciles asking within a few milliseconds share ONE Metadata, CreateTopics, DescribeConfigs,
 * OffsetFetch or OffsetCommit request on one long-lived connection, and each gets its own answer
 * (errors per topic). kafkajs 2.2.4 (pinned) is used through its internal cluster, as
 * kafka-owner.ts already does, because its admin API neither batches owner records nor answers
 * per topic.
 */
import type { TopicSpec } from '../desired/topic';
import { Coalescer } from './coalesce';
import { describeBrokerLimit, TimedValue } from './kafka-broker-limit';
import { errorMessage, KafkaApplyError } from './kafka-client';
import { OWNER_GROUP } from './kafka-owner';
import { countKafkaWrite } from './kafka-writes';
import { countKafkaRequest } from './request-counts';
import { brokerSupports, sendProtocolRequest } from '../../../common/src/kafka/group-protocol';
import { sendOwnerRecords, type OwnerCommitAnswer } from './kafka-owner-commit';
import {
  describeWithKafkajs,
  fillKafkajsCache,
  METADATA_API_KEY,
  METADATA_VERSION,
  metadataRequest,
  type MetadataAnswer,
} from './kafka-metadata';
import {
  coordinatorMoved,
  createErrors,
  createResults,
  errorType,
  TOPIC_RESOURCE,
  withSplit,
  type BatchCluster,
  type Coordinator,
  type CreateResult,
  type TopicConfigEntry,
  type TopicMeta,
} from './kafka-topic-wire';

export type { BatchCluster, CreateResult, TopicConfigEntry, TopicMeta } from './kafka-topic-wire';

/** See the module comment. One instance per Kafka cluster identity. */
export class TopicBatcher {
  private cluster?: Promise<BatchCluster>;
  private coordinator?: Promise<Coordinator>;
  /** Topics this process created and has not yet recorded an owner for: topic -> owner uid. */
  private readonly created = new Map<string, string>();
  readonly describes: Coalescer<string, TopicMeta | undefined>;
  readonly creates: Coalescer<TopicSpec, CreateResult>;
  readonly configs: Coalescer<string, TopicConfigEntry[]>;
  readonly owners: Coalescer<string, string | undefined>;
  readonly commits: Coalescer<{ topic: string; record: string }, void>;
  private clusterIdSeen?: string;
  /** A topic the latest describe found (kafkajsMetadata). */
  private topicSeen?: string;
  /** The broker's message.max.bytes: a new topic's limit (kafka-broker-limit.ts). */
  private readonly brokerLimit = new TimedValue(() => this.brokerLimitRead());

  constructor(
    private readonly connect: () => BatchCluster,
    gatherMs = 10,
  ) {
    const byName = { idOf: (t: string) => t, gatherMs };
    this.describes = new Coalescer((t) => this.describeBatch(t), byName);
    this.creates = new Coalescer((s) => this.createBatch(s), { idOf: (s: TopicSpec) => s.topic, gatherMs });
    this.configs = new Coalescer((t) => withSplit(t, (k) => this.configBatch(k)), byName);
    this.owners = new Coalescer((t) => withSplit(t, (k) => this.ownerBatch(k)), byName);
    this.commits = new Coalescer(
      (c) =>
        withSplit(
          c.map((x) => x.topic),
          (k) => this.commitBatch(c.filter((x) => k.includes(x.topic))),
        ),
      { idOf: (c) => c.topic, gatherMs },
    );
  }

  /** The cluster id (from the latest Metadata response; one request when none was seen yet). */
  async clusterId(): Promise<string> {
    if (!this.clusterIdSeen) await this.describes.get('');
    if (!this.clusterIdSeen)
      throw new KafkaApplyError('KafkaError', 'the Kafka cluster reported no cluster id');
    return this.clusterIdSeen;
  }

  /**
   * The max.message.bytes of a topic created just now without its own (the broker's
   * message.max.bytes, read once per cluster and minute); undefined when the broker did not say.
   */
  newTopicLimit(): Promise<number | undefined> {
    return this.brokerLimit.get();
  }

  /** Remembers that `owner` created `topic` here, so a failed owner-record commit is retried, not judged foreign. */
  noteCreated(topic: string, ownerUid: string): void {
    this.created.set(topic, ownerUid);
  }

  /** Whether `ownerUid` created `topic` through this process and its owner record is not written yet. */
  createdBy(topic: string, ownerUid: string): boolean {
    return this.created.get(topic) === ownerUid;
  }

  /** Commits owner records, and forgets the creation once its record is stored. */
  async commitOwner(topic: string, record: string): Promise<void> {
    await this.commits.get({ topic, record });
    this.created.delete(topic);
  }

  /** Disconnects the long-lived connection. */
  async close(): Promise<void> {
    const c = this.cluster;
    this.cluster = undefined;
    this.coordinator = undefined;
    this.brokerLimit.clear();
    await c?.then((x) => x.disconnect()).catch(() => undefined);
  }

  private async connected(): Promise<BatchCluster> {
    if (!this.cluster) {
      const c = this.connect();
      this.cluster = c.connect().then(
        () => c,
        (err: unknown) => {
          this.cluster = undefined;
          throw new KafkaApplyError('KafkaUnreachable', `cannot connect to Kafka: ${errorMessage(err)}`);
        },
      );
    }
    return this.cluster;
  }

  /** A connection-level failure: reconnect on the next call. */
  private async failed(err: unknown, doing: string): Promise<never> {
    const name = err instanceof Error ? err.name : '';
    if (/Connection|NumberOfRetriesExceeded|BrokerNotFound|Timeout/.test(name)) await this.close();
    if (coordinatorMoved(errorType(err))) this.coordinator = undefined;
    throw new KafkaApplyError('KafkaError', `${doing}: ${errorMessage(err)}`, errorType(err));
  }

  /**
   * One Metadata v6 for the named topics, answered per topic (kafka-metadata.ts): missing topics
   * are undefined, a topic's own error fails only its caller. A broker without v6 gets kafkajs's
   * request (on any topic error, one more for every topic). kafkajs's own cache, which its
   * controller and coordinator lookups read, is filled once per connection (fillKafkajsCache).
   */
  private async describeBatch(names: string[]): Promise<Map<string, TopicMeta | undefined | Error>> {
    const c = await this.connected();
    const wanted = names.filter((n) => n !== '');
    let answer: MetadataAnswer;
    try {
      const broker = await c.brokerPool.findConnectedBroker();
      answer = brokerSupports(broker, METADATA_API_KEY, METADATA_VERSION)
        ? (countMetadata(), await sendProtocolRequest(broker, metadataRequest(wanted)))
        : await describeWithKafkajs(c.brokerPool, wanted, countMetadata);
    } catch (err) {
      return this.failed(err, 'reading topic metadata');
    }
    if (answer.clusterId) this.clusterIdSeen = answer.clusterId;
    // A name the broker left out of its answer stays unanswered: an error for its caller.
    const out = new Map<string, TopicMeta | undefined | Error>(names.map((n) => [n, undefined]));
    for (const n of wanted) {
      const a = answer.topics.get(n);
      if (a && !(a instanceof Error)) this.topicSeen = n;
      if (answer.topics.has(n)) out.set(n, a);
      else out.delete(n);
    }
    return out;
  }

  /** One CreateTopics on the controller; per-topic errors become per-topic results. */
  private async createBatch(specs: TopicSpec[]): Promise<Map<string, CreateResult | Error>> {
    const c = await this.connected();
    let errors: ReturnType<typeof createErrors>;
    try {
      await fillKafkajsCache(c.brokerPool, this.topicSeen, countMetadata);
      const controller = await c.findControllerBroker();
      countKafkaWrite('CreateTopics');
      countKafkaRequest('CreateTopics');
      await controller.createTopics({
        timeout: 5_000,
        topics: specs.map((s) => ({
          topic: s.topic,
          numPartitions: s.numPartitions,
          replicationFactor: s.replicationFactor,
          configEntries: s.configEntries,
        })),
      });
    } catch (err) {
      errors = createErrors(err);
      // NOT_CONTROLLER and the like: learn the new controller, callers retry.
      if (!errors) {
        await c.brokerPool.refreshMetadata([]).catch(() => undefined);
        return this.failed(err, 'creating topics');
      }
    }
    return createResults(specs, errors);
  }

  /** One DescribeConfigs with every topic as a resource. */
  private async configBatch(topics: string[]): Promise<Map<string, TopicConfigEntry[]>> {
    const c = await this.connected();
    try {
      await fillKafkajsCache(c.brokerPool, this.topicSeen, countMetadata);
      const broker = await c.findControllerBroker();
      countKafkaRequest('DescribeConfigs');
      const res = await broker.describeConfigs({
        includeSynonyms: false,
        resources: topics.map((name) => ({ type: TOPIC_RESOURCE, name })),
      });
      return new Map(res.resources.map((r) => [r.resourceName, r.configEntries]));
    } catch (err) {
      return this.failed(err, `describing configs of ${topics.join(', ')}`);
    }
  }

  /** One DescribeConfigs of the broker's message.max.bytes, on the broker topic configs are read from. */
  private async brokerLimitRead(): Promise<number | undefined> {
    const c = await this.connected();
    await fillKafkajsCache(c.brokerPool, this.topicSeen, countMetadata);
    const broker = await c.findControllerBroker();
    countKafkaRequest('DescribeConfigs');
    return describeBrokerLimit(broker);
  }

  private group(c: BatchCluster): Promise<Coordinator> {
    if (!this.coordinator) {
      countKafkaRequest('GroupCoordinator');
      this.coordinator = fillKafkajsCache(c.brokerPool, this.topicSeen, countMetadata).then(() =>
        c.findGroupCoordinator({ groupId: OWNER_GROUP }),
      );
      this.coordinator.catch(() => (this.coordinator = undefined));
    }
    return this.coordinator;
  }

  /** One OffsetFetch of the owner group for partition 0 of every topic. */
  private async ownerBatch(topics: string[]): Promise<Map<string, string | undefined>> {
    const c = await this.connected();
    try {
      const coordinator = await this.group(c);
      countKafkaRequest('OffsetFetch');
      const res = await coordinator.offsetFetch({
        groupId: OWNER_GROUP,
        topics: topics.map((topic) => ({ topic, partitions: [{ partition: 0 }] })),
      });
      const out = new Map<string, string | undefined>(topics.map((t) => [t, undefined]));
      for (const r of res.responses) {
        const p0 = r.partitions.find((p) => p.partition === 0);
        if (p0 && p0.offset !== '-1' && p0.metadata) out.set(r.topic, p0.metadata);
      }
      return out;
    } catch (err) {
      return this.failed(err, `reading the owner records of ${topics.join(', ')}`);
    }
  }

  /**
   * One OffsetCommit (generation -1: a group no consumer joins) carrying every record, answered per
   * topic (kafka-owner-commit.ts; a broker without v7 gets kafkajs's, which fails the whole batch).
   */
  private async commitBatch(
    records: Array<{ topic: string; record: string }>,
  ): Promise<Map<string, void | Error>> {
    const c = await this.connected();
    const doing = (topics: string[]) => `recording the owners of ${topics.join(', ')}`;
    let refused: OwnerCommitAnswer;
    try {
      const coordinator = await this.group(c);
      countKafkaWrite('OwnerRecordCommit');
      countKafkaRequest('OwnerRecordCommit');
      refused = await sendOwnerRecords(coordinator, OWNER_GROUP, records);
    } catch (err) {
      return this.failed(err, doing(records.map((r) => r.topic)));
    }
    const out = new Map<string, void | Error>();
    for (const { topic } of records) {
      const e = refused.get(topic);
      if (coordinatorMoved(e?.type)) this.coordinator = undefined;
      out.set(topic, e && new KafkaApplyError('KafkaError', `${doing([topic])}: ${e.message}`, e.type));
    }
    return out;
  }
}

const countMetadata = () => countKafkaRequest('Metadata');
