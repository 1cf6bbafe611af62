/**
 * One observation round per Kafka cluster for every pipeline on it: the autoscaler's per-pipeline
 * poll used to cost about 17 requests (Metadata refreshes, GroupCoordinator, OffsetFetch,
 * ListOffsets) per pipeline and interval. Here a round fetches, for every (topic, group) pair
 * asked for recently: one Metadata request naming exactly those topics (a missing one is answered
 * as missing, see observer-metadata.ts), one ListOffsets request per
 * partition leader for the log-end offsets and one for the log-start offsets of all of them, and
 * the groups' committed offsets with one OffsetFetch v8 per coordinator (coordinators looked up
 * once, all new groups in one FindCoordinator v4; see offsets.ts `GroupOffsetsReader`, which falls
 * back to one OffsetFetch per group on brokers older than Kafka 3.0). So a round costs O(brokers)
 * requests, whatever the number of pipelines; each round's duration and requests by API are
 * exported (`logpipeline_operator_observer_round_*`).
 *
 * Rounds are single-flight and gathered: callers that find the snapshot older than they accept
 * join the next round (started after `gatherMs`), which refreshes every pair wanted, so N
 * pipelines polling at the same interval cost one round per interval between them.
 */
import { Kafka } from 'kafkajs';
import { GroupOffsetsReader, type GroupOffsets } from './offsets';
import { buildKafkaConfig, errorMessage, KafkaApplyError, type KafkaConnection } from '../apply/kafka-client';
import { internalCluster } from '../apply/kafka-owner';
import { countKafkaRequest } from '../apply/request-counts';
import { isKafkaUnavailable } from '../../../common/src/kafka/unavailable';
import { recordObserverRound } from '../apply/observer-rounds';
import {
  groupOffsetsOf,
  logOffsets,
  sameOffsets,
  type LogOffsets,
  type ObserverCluster,
  type PartitionMeta,
} from './kafka-round';
import { readTopicMetadata } from './observer-metadata';

interface Wanted {
  topic: string;
  group: string;
  usedAt: number;
  /** The smallest age its callers accept. */
  maxAgeMs: number;
}

interface Observed {
  at: number;
  value?: GroupOffsets;
  error?: string;
  /** The error only says the cluster does not answer (KafkaUnreachable, not KafkaError). */
  unreachable?: boolean;
}

/** Tuning and clock. */
export interface KafkaObserverOptions {
  /** Wait before a round starts, so callers arriving together share it. Default 20 ms. */
  gatherMs?: number;
  /** Pairs not asked for during this long are dropped from rounds. Default 5 min. */
  idleMs?: number;
  now?: () => number;
  /** Builds the cluster client (tests inject a fake). */
  connect?: (conn: KafkaConnection) => ObserverCluster;
}

const pairKey = (topic: string, group: string) => `${topic}\u0000${group}`;

/** The shared observation of one Kafka cluster. */
export class KafkaClusterObserver {
  private readonly wanted = new Map<string, Wanted>();
  private readonly observed = new Map<string, Observed>();
  private readonly groups = new GroupOffsetsReader((api) => this.count(api));
  /** Requests of the running round by API (rounds are single-flight per observer). */
  private roundRequests = new Map<string, number>();
  private cluster?: Promise<ObserverCluster>;
  private next?: Promise<void>;
  private running?: { promise: Promise<void>; pairs: Set<string> };
  private readonly now: () => number;
  /** Rounds run (tests: O(1) per interval whatever the number of pipelines). */
  rounds = 0;

  constructor(
    private readonly conn: KafkaConnection,
    private readonly opts: KafkaObserverOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
  }

  /**
   * The offsets of `topic` and `group`, at most `maxAgeMs` old (sample time in `at`); throws
   * KafkaApplyError when the round failed for this pair (reason KafkaUnreachable when the cluster
   * did not answer).
   */
  async read(topic: string, group: string, maxAgeMs: number): Promise<GroupOffsets & { at: number }> {
    const key = pairKey(topic, group);
    const t = this.now();
    const w = this.wanted.get(key);
    if (w) {
      w.usedAt = t;
      w.maxAgeMs = Math.min(w.maxAgeMs, maxAgeMs);
    } else this.wanted.set(key, { topic, group, usedAt: t, maxAgeMs });
    let o = this.observed.get(key);
    if (!o || t - o.at > maxAgeMs) {
      if (this.running?.pairs.has(key)) await this.running.promise;
      else await this.nextRound();
      o = this.observed.get(key);
    }
    if (!o?.value)
      throw new KafkaApplyError(
        o?.unreachable ? 'KafkaUnreachable' : 'KafkaError',
        o?.error ?? `no offsets for ${topic}`,
      );
    return { ...o.value, at: o.at };
  }

  /** True while no round is running or gathered (round boundaries, for counting per round). */
  get idle(): boolean {
    return !this.running && !this.next;
  }

  /** Stops asking for a pair (pipeline deleted). */
  forget(topic: string, group: string): void {
    const key = pairKey(topic, group);
    this.wanted.delete(key);
    this.observed.delete(key);
  }

  async close(): Promise<void> {
    const c = this.cluster;
    this.cluster = undefined;
    if (c) await (await c).disconnect().catch(() => undefined);
  }

  private nextRound(): Promise<void> {
    if (!this.next) {
      const after = this.running?.promise ?? Promise.resolve();
      this.next = after
        .then(() => new Promise((r) => setTimeout(r, this.opts.gatherMs ?? 20)))
        .then(() => {
          this.next = undefined;
          // Only the pairs past their accepted age (their callers wait for this round): a storm
          // of new pipelines refreshes only the new pairs, not every pair once per newcomer;
          // the autoscaler asks for all pairs of a cluster in the same tick once per interval.
          const at = this.now();
          const pairs = new Set<string>();
          for (const [k, w] of this.wanted) {
            const o = this.observed.get(k);
            if (!o || at - o.at > w.maxAgeMs) pairs.add(k);
          }
          const promise = this.round(pairs).finally(() => {
            if (this.running?.promise === promise) this.running = undefined;
          });
          this.running = { promise, pairs };
          return promise;
        });
    }
    return this.next;
  }

  private client(): Promise<ObserverCluster> {
    if (!this.cluster) {
      const c = this.opts.connect
        ? this.opts.connect(this.conn)
        : (internalCluster(new Kafka(buildKafkaConfig(this.conn))) as unknown as ObserverCluster);
      this.cluster = c.connect().then(
        () => c,
        (err: unknown) => {
          this.cluster = undefined;
          throw err;
        },
      );
    }
    return this.cluster;
  }

  /** Counts one request in the process counters and in the running round. */
  private count(api: string, n = 1): void {
    countKafkaRequest(api, n);
    this.roundRequests.set(api, (this.roundRequests.get(api) ?? 0) + n);
  }

  private async round(pairs: Set<string>): Promise<void> {
    this.rounds++;
    this.roundRequests = new Map();
    const started = process.hrtime.bigint();
    try {
      await this.observe(pairs);
    } finally {
      recordObserverRound('kafka', Number(process.hrtime.bigint() - started) / 1e9, this.roundRequests);
    }
  }

  private async observe(pairs: Set<string>): Promise<void> {
    const t = this.now();
    for (const [k, w] of this.wanted)
      if (t - w.usedAt > (this.opts.idleMs ?? 300_000)) {
        this.wanted.delete(k);
        this.observed.delete(k);
      }
    const list = [...pairs].map((k) => this.wanted.get(k)).filter((w): w is Wanted => !!w);
    const fail = (error: string, which: Wanted[] = list, cause?: unknown) => {
      const unreachable = isKafkaUnavailable(cause);
      for (const w of which) this.observed.set(pairKey(w.topic, w.group), { at: t, error, unreachable });
    };
    let cluster: ObserverCluster;
    try {
      cluster = await this.client();
    } catch (err) {
      return fail(`cannot connect to Kafka ${this.conn.brokers.join(',')}: ${errorMessage(err)}`, list, err);
    }
    const topics = [...new Set(list.map((w) => w.topic))];
    // One Metadata request naming exactly the observed topics, answered per topic: a missing
    // topic fails only its own pipelines (observer-metadata.ts).
    let partitions: Map<string, PartitionMeta[]>;
    try {
      const read = await readTopicMetadata(cluster, topics, (api) => this.count(api));
      partitions = read.partitions;
      for (const w of list) {
        const why = read.failed.get(w.topic);
        if (why) fail(why, [w]);
      }
    } catch (err) {
      await this.close();
      return fail(`reading topic metadata: ${errorMessage(err)}`, list, err);
    }
    let logs: LogOffsets;
    try {
      logs = await logOffsets(cluster, partitions, (api, n) => this.count(api, n));
    } catch (err) {
      return fail(
        `reading log offsets: ${errorMessage(err)}`,
        list.filter((w) => partitions.has(w.topic)),
        err,
      );
    }
    for (const w of list) {
      const err = logs.failed.get(w.topic);
      if (err) fail(`reading log offsets of topic ${w.topic}: ${errorMessage(err)}`, [w], err);
    }
    const live = list.filter((w) => partitions.has(w.topic) && !logs.failed.has(w.topic));
    const committed = await this.groups.read(
      cluster,
      live.map((w) => ({
        groupId: w.group,
        topics: [{ topic: w.topic, partitions: partitions.get(w.topic)!.map((m) => m.partitionId) }],
      })),
    );
    for (const w of live) {
      const got = committed.get(w.group);
      if (!got || got instanceof Error) {
        fail(`reading offsets of group ${w.group}: ${got ? errorMessage(got) : 'no answer'}`, [w], got);
        continue;
      }
      const value = groupOffsetsOf(partitions.get(w.topic)!, logs, w.topic, got.get(w.topic));
      // An idle pair keeps the value it had: the new one dies young instead of being promoted
      // and collected by a full GC (one per pair and interval at fleet scale).
      const key = pairKey(w.topic, w.group);
      const before = this.observed.get(key);
      if (before?.value && sameOffsets(before.value, value)) {
        before.at = t;
        before.error = undefined;
        before.unreachable = undefined;
      } else this.observed.set(key, { at: t, value });
    }
  }
}
