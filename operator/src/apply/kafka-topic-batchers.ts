/**
 * The Topic part's batchers, one TopicBatcher (kafka-topic-batch.ts) per Kafka cluster identity,
 * made on first use and closed with the connections of rotated or unused credentials.
 */
import { Kafka } from 'kafkajs';
import { buildKafkaConfig, kafkaConnectionKey, type KafkaConnection } from './kafka-client';
import { internalCluster } from './kafka-owner';
import { TopicBatcher, type BatchCluster } from './kafka-topic-batch';

/** One TopicBatcher per Kafka cluster identity (kafkaConnectionKey). */
export class TopicBatchers {
  private readonly batchers = new Map<string, TopicBatcher>();

  constructor(
    private readonly opts: { gatherMs?: number; connect?: (conn: KafkaConnection) => BatchCluster } = {},
  ) {}

  /** The batcher of `conn`'s cluster, created on first use (connects lazily). */
  for(conn: KafkaConnection): TopicBatcher {
    const key = kafkaConnectionKey(conn);
    let b = this.batchers.get(key);
    if (!b) {
      const connect =
        this.opts.connect ??
        ((k: KafkaConnection) => internalCluster(new Kafka(buildKafkaConfig(k))) as unknown as BatchCluster);
      b = new TopicBatcher(() => connect(conn), this.opts.gatherMs);
      this.batchers.set(key, b);
    }
    return b;
  }

  /** Batches sent so far by every batcher, by kind (tests pin "N topics, few requests"). */
  batchCounts(): Record<'describe' | 'create' | 'configs' | 'owners' | 'commits', number> {
    const sum = { describe: 0, create: 0, configs: 0, owners: 0, commits: 0 };
    for (const b of this.batchers.values()) {
      sum.describe += b.describes.batchCount();
      sum.create += b.creates.batchCount();
      sum.configs += b.configs.batchCount();
      sum.owners += b.owners.batchCount();
      sum.commits += b.commits.batchCount();
    }
    return sum;
  }

  /** Disconnects every batcher. */
  async close(): Promise<void> {
    await Promise.all([...this.batchers.values()].map((b) => b.close()));
    this.batchers.clear();
  }

  /** Disconnects and forgets the batchers of these connection keys (KafkaClientPool). */
  async drop(keys: readonly string[]): Promise<void> {
    const gone = keys.flatMap((k) => {
      const b = this.batchers.get(k);
      this.batchers.delete(k);
      return b ? [b] : [];
    });
    await Promise.all(gone.map((b) => b.close()));
  }

  /** Batchers held (tests). */
  get size(): number {
    return this.batchers.size;
  }
}
