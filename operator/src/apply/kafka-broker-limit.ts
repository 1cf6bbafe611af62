/**
 * The max.message.bytes of a topic the operator has just created, without reading the topic back.
 * A topic created without its own max.message.bytes inherits the broker's `message.max.bytes` (its
 * per-broker dynamic value, else the cluster-wide dynamic default, else the static config), and no
 * one else can have set a topic-level override on a topic that did not exist a moment ago: so the
 * broker's value IS the new topic's limit. One DescribeConfigs of the broker per Kafka cluster,
 * reused for BROKER_LIMIT_TTL_MS, replaces a DescribeConfigs per new topic, which the broker also
 * often could not answer yet (the topic not in its metadata: a 2 s requeue and a second reconcile).
 *
 * Why not the configs a CreateTopics v5+ response carries (KIP-525): in KRaft the controller
 * computes them from ITS own static config (`ConfigurationControlManager.computeEffectiveTopicConfigs`),
 * so with dedicated controllers a `message.max.bytes` set in the brokers' server.properties is not
 * what it reports; a broker's DescribeConfigs answers with the value that broker enforces, as the
 * topic's DescribeConfigs did (both go to the same broker).
 */
import { BROKER_MESSAGE_MAX_BYTES, BROKER_RESOURCE, sizeConfig, type BatchBroker } from './kafka-topic-wire';

/** How long a cluster's broker limit is reused (a steady topic's limit is still read at every recheck). */
export const BROKER_LIMIT_TTL_MS = 60_000;

/**
 * The answering broker's `message.max.bytes`: one DescribeConfigs of its BROKER resource (named by
 * its node id: only that broker answers for it), undefined when the broker did not say.
 */
export async function describeBrokerLimit(broker: BatchBroker): Promise<number | undefined> {
  if (broker.nodeId === undefined || broker.nodeId === null) return undefined;
  const res = await broker.describeConfigs({
    includeSynonyms: false,
    resources: [
      { type: BROKER_RESOURCE, name: String(broker.nodeId), configNames: [BROKER_MESSAGE_MAX_BYTES] },
    ],
  });
  return sizeConfig(res.resources[0]?.configEntries ?? [], BROKER_MESSAGE_MAX_BYTES);
}

/**
 * A value read at most once per `ttlMs` (callers asking meanwhile share the read). A failed read is
 * remembered as undefined for the same time: the caller falls back to its old way (a broker that
 * refuses broker configs, e.g. an ACL on topics only, is not asked again for every new topic).
 */
export class TimedValue<T> {
  private held?: { at: number; value: Promise<T | undefined> };

  constructor(
    private readonly read: () => Promise<T | undefined>,
    private readonly ttlMs = BROKER_LIMIT_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The held value while fresh, else a new read's. */
  get(): Promise<T | undefined> {
    const t = this.now();
    if (!this.held || t - this.held.at >= this.ttlMs) {
      const value = this.read().catch(() => undefined);
      this.held = { at: t, value };
    }
    return this.held.value;
  }

  /** Forgets the held value (a new connection may reach another broker). */
  clear(): void {
    this.held = undefined;
  }
}
