/**
 * The wire side of a Kafka observer round (kafka-observer.ts): the parts of kafkajs's internal
 * cluster it drives, the log offsets read from the partition leaders, and the pure assembly of a
 * group's offsets from the round's answers.
 */
import type { CoordinatorCluster, GroupOffsets } from './offsets';
import { listOffsets } from './list-offsets';

/** The parts of kafkajs's internal cluster a round uses (kafkajs 2.2.4 is pinned). */
export interface PartitionMeta {
  partitionId: number;
  leader: number;
}
/** A topic of the Metadata answer. */
export interface TopicMeta {
  topic: string;
  partitionMetadata: PartitionMeta[];
}
/** The internal cluster client an observer round drives. */
export interface ObserverCluster extends CoordinatorCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  brokerPool: CoordinatorCluster['brokerPool'] & {
    refreshMetadata(topics: string[]): Promise<void>;
    metadata?: {
      topicMetadata?: TopicMeta[];
      brokers?: Array<{ nodeId: number; host: string; port: number }>;
    } | null;
  };
  isolationLevel?: number;
}

/** ListOffsets timestamps: the log start and the log end (kafkajs constants). */
const EARLIEST = -2;
const LATEST = -1;

/**
 * Log-start and log-end offsets of every partition: one ListOffsets per partition leader and
 * timestamp, sent to the leaders directly (kafkajs's fetchTopicsOffset merges its answers by
 * copying an object per topic, quadratic in the number of topics). A partition error in an answer
 * (a topic deleted since the Metadata answer, a leader that does not serve a new partition yet, a
 * leader moved) fails only its topic (`failed`, list-offsets.ts); a connection-level error fails
 * the call.
 */
export async function logOffsets(
  cluster: ObserverCluster,
  partitions: Map<string, PartitionMeta[]>,
  count: (api: string, n: number) => void,
): Promise<LogOffsets> {
  const byLeader = new Map<number, Map<string, number[]>>();
  for (const [topic, metas] of partitions)
    for (const m of metas) {
      let topics = byLeader.get(m.leader);
      if (!topics) byLeader.set(m.leader, (topics = new Map()));
      let list = topics.get(topic);
      if (!list) topics.set(topic, (list = []));
      list.push(m.partitionId);
    }
  count('ListOffsets', 2 * byLeader.size);
  const logs: LogOffsets = { ends: new Map(), starts: new Map(), failed: new Map() };
  await Promise.all(
    [...byLeader].flatMap(([nodeId, topics]) =>
      [LATEST, EARLIEST].map(async (timestamp) => {
        const broker = await cluster.findBroker({ nodeId });
        const responses = await listOffsets(broker, {
          isolationLevel: cluster.isolationLevel,
          topics: [...topics].map(([topic, ids]) => ({
            topic,
            partitions: ids.map((partition) => ({ partition, timestamp })),
          })),
        });
        const into = timestamp === LATEST ? logs.ends : logs.starts;
        for (const r of responses) {
          let m = into.get(r.topic);
          if (!m) into.set(r.topic, (m = new Map()));
          for (const p of r.partitions)
            if (!p.error) m.set(p.partition, Number(p.offset));
            else if (!logs.failed.has(r.topic))
              logs.failed.set(r.topic, new Error(`partition ${p.partition}: ${p.error.message}`));
        }
      }),
    ),
  );
  return logs;
}

/** Same partitions, offsets and commit metadata. */
export function sameOffsets(a: GroupOffsets, b: GroupOffsets): boolean {
  return (
    a.offsets.length === b.offsets.length &&
    a.offsets.every((x, i) => {
      const y = b.offsets[i];
      return (
        x.partition === y.partition && x.end === y.end && x.start === y.start && x.committed === y.committed
      );
    }) &&
    a.commits.every((x, i) => x.metadata === b.commits[i].metadata && x.committed === b.commits[i].committed)
  );
}

/** Offsets by topic and partition. */
export type OffsetIndex = Map<string, Map<number, number>>;

/** The partitions (sorted by id) of each wanted topic that the metadata names; absent topics are left out. */
export function topicIndex(
  meta: readonly TopicMeta[],
  wanted: readonly string[],
): Map<string, PartitionMeta[]> {
  const want = new Set(wanted);
  const out = new Map<string, PartitionMeta[]>();
  for (const t of meta)
    if (want.has(t.topic) && t.partitionMetadata.length > 0)
      out.set(
        t.topic,
        [...t.partitionMetadata].sort((a, b) => a.partitionId - b.partitionId),
      );
  return out;
}

/** Log-start and log-end offsets by topic and partition, and the topics whose offsets could not be read. */
export interface LogOffsets {
  ends: OffsetIndex;
  starts: OffsetIndex;
  failed: Map<string, Error>;
}

/**
 * A group's offsets on one topic: every partition of the metadata with its log start and end and
 * the group's committed offset (-1 where it has none) and commit metadata.
 */
export function groupOffsetsOf(
  partitions: readonly PartitionMeta[],
  logs: LogOffsets,
  topic: string,
  committed: ReadonlyMap<number, { offset: string; metadata?: string | null }> | undefined,
): GroupOffsets {
  const ends = logs.ends.get(topic);
  const starts = logs.starts.get(topic);
  const value: GroupOffsets = { offsets: [], commits: [] };
  for (const { partitionId: p } of partitions) {
    const c = committed?.get(p);
    const offset = c ? Number(c.offset) : -1;
    value.offsets.push({
      partition: p,
      end: ends?.get(p) ?? 0,
      start: starts?.get(p) ?? 0,
      committed: offset,
    });
    value.commits.push({ partition: p, committed: offset, metadata: c?.metadata ?? null });
  }
  return value;
}
