/**
 * The wire side of a Kafka observer round (kafka-observer.ts): the parts of kafkajs's internal
 * cluster it drives, the log offsets read from the partition leaders, and the pure assembly of a
 * group's offsets from the round's answers.
 */
import type { CoordinatorCluster, GroupOffsets } from './offsets';

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
/** A broker's ListOffsets as kafkajs sends it (offsets as decimal strings). */
export interface ListOffsetsBroker {
  listOffsets(req: {
    isolationLevel?: number;
    topics: Array<{ topic: string; partitions: Array<{ partition: number; timestamp: number }> }>;
  }): Promise<{
    responses: Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }>;
  }>;
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
 * copying an object per topic, quadratic in the number of topics). A topic-level error in an
 * answer (a topic deleted since the Metadata answer, a leader moved) fails only the topics that
 * have it (`failed`); a connection-level error fails the call.
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
  const logs: LogOffsets = { ends: new Map(), starts: new Map(), failed: new Map() };
  await Promise.all(
    [...byLeader].flatMap(([nodeId, topics]) =>
      [LATEST, EARLIEST].map(async (timestamp) => {
        const broker = (await cluster.findBroker({ nodeId })) as unknown as ListOffsetsBroker;
        const ask = (list: Array<[string, number[]]>) => {
          count('ListOffsets', 1);
          return broker.listOffsets({
            isolationLevel: cluster.isolationLevel,
            topics: list.map(([topic, ids]) => ({
              topic,
              partitions: ids.map((partition) => ({ partition, timestamp })),
            })),
          });
        };
        await listBisected(ask, [...topics], timestamp === LATEST ? logs.ends : logs.starts, logs.failed);
      }),
    ),
  );
  return logs;
}

type ListOffsetsAnswer = Awaited<ReturnType<ListOffsetsBroker['listOffsets']>>;

/**
 * Asks for `topics`; kafkajs's ListOffsets parser throws on the first partition error, so a
 * request that fails with a protocol error is split in halves until the topics with the error
 * stand alone: O(k log n) more requests for k such topics, and only in a round that has them.
 */
async function listBisected(
  ask: (topics: Array<[string, number[]]>) => Promise<ListOffsetsAnswer>,
  topics: Array<[string, number[]]>,
  into: OffsetIndex,
  failed: Map<string, Error>,
): Promise<void> {
  let responses: ListOffsetsAnswer['responses'];
  try {
    ({ responses } = await ask(topics));
  } catch (err) {
    if (!(err instanceof Error) || (err as { type?: string }).type === undefined) throw err;
    if (topics.length === 1) return void failed.set(topics[0][0], err);
    const half = topics.length >> 1;
    await Promise.all([
      listBisected(ask, topics.slice(0, half), into, failed),
      listBisected(ask, topics.slice(half), into, failed),
    ]);
    return;
  }
  for (const r of responses) {
    let m = into.get(r.topic);
    if (!m) into.set(r.topic, (m = new Map()));
    for (const p of r.partitions) m.set(p.partition, Number(p.offset));
  }
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
