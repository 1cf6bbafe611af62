/**
 * Reads what the autoscaler needs from Kafka: the log-start and log-end offsets of topics and
 * consumer groups' committed offsets with their commit metadata (the workers' cut journal, read
 * for sink health) — for one pipeline through the shared admin (`readGroupOffsets`), and for every
 * group of a cluster at once with O(coordinators) requests (`GroupOffsetsReader`, used by the
 * observer round).
 */
import type { Admin } from 'kafkajs';
import type { OffsetFetchBroker } from '../apply/kafka-owner';
import type { PartitionOffsets } from './lag';
import type { CommitRecord } from './sink-health';
import {
  API_KEYS,
  brokerSupports,
  findCoordinatorsRequest,
  offsetFetchGroupsRequest,
  sendProtocolRequest,
  type GroupTopics,
  type ProtocolBroker,
} from '../../../common/src/kafka/group-protocol';

/** Offsets of every partition plus the group's commits. */
export interface GroupOffsets {
  offsets: PartitionOffsets[];
  commits: CommitRecord[];
}

/** Fetches the topic's start/end offsets and the group's committed offsets (-1: none) for `topic`. */
export async function readGroupOffsets(admin: Admin, topic: string, groupId: string): Promise<GroupOffsets> {
  const [ends, groups] = await Promise.all([
    admin.fetchTopicOffsets(topic),
    admin.fetchOffsets({ groupId, topics: [topic] }),
  ]);
  const byPartition = new Map<number, { offset: string; metadata: string | null }>();
  for (const p of groups.find((g) => g.topic === topic)?.partitions ?? []) byPartition.set(p.partition, p);
  const offsets: PartitionOffsets[] = [];
  const commits: CommitRecord[] = [];
  for (const e of ends) {
    const c = byPartition.get(e.partition);
    const committed = c ? Number(c.offset) : -1;
    offsets.push({ partition: e.partition, end: Number(e.high), start: Number(e.low), committed });
    commits.push({ partition: e.partition, committed, metadata: c?.metadata ?? null });
  }
  offsets.sort((a, b) => a.partition - b.partition);
  return { offsets, commits };
}

/** FindCoordinator v4 requests per round for keys whose coordinator is not available yet. */
const LOOKUP_ATTEMPTS = 3;

/** A kafkajs group coordinator as its own API speaks to it (OffsetFetch v1-v4, one group per request). */
export interface LegacyCoordinator extends ProtocolBroker, OffsetFetchBroker {}

/** The parts of kafkajs's internal cluster the reader uses (kafkajs 2.2.4 is pinned). */
export interface CoordinatorCluster {
  brokerPool: { findConnectedBroker(): Promise<ProtocolBroker> };
  findBroker(req: { nodeId: number }): Promise<ProtocolBroker>;
  findGroupCoordinator(req: { groupId: string }): Promise<LegacyCoordinator>;
}

/** One group's committed offsets by topic and partition, or why they could not be read. */
export type CommittedOffsets = Map<string, Map<number, { offset: string; metadata: string | null }>> | Error;

/**
 * Reads the committed offsets of many groups with O(coordinators) requests: FindCoordinator v4
 * for the groups whose coordinator is not cached yet (one request for all of them) and OffsetFetch
 * v8 (KIP-709) with every group of one coordinator in one request. A broker without those versions
 * gets kafkajs's own requests: one FindCoordinator per new group, one OffsetFetch per group.
 * `count` sees every request by API name (the operator's request counters).
 */
export class GroupOffsetsReader {
  private readonly nodes = new Map<string, number>();
  private readonly legacy = new Map<string, LegacyCoordinator>();

  constructor(private readonly count: (api: string) => void) {}

  /** The committed offsets of each group in `wanted` (groups named twice are merged). */
  async read(
    cluster: CoordinatorCluster,
    wanted: readonly GroupTopics[],
  ): Promise<Map<string, CommittedOffsets>> {
    const groups = mergeGroups(wanted);
    const out = new Map<string, CommittedOffsets>();
    let any: ProtocolBroker;
    try {
      any = await cluster.brokerPool.findConnectedBroker();
    } catch (err) {
      for (const g of groups) out.set(g.groupId, asError(err));
      return out;
    }
    if (!brokerSupports(any, API_KEYS.OffsetFetch, 8)) {
      await Promise.all(groups.map(async (g) => out.set(g.groupId, await this.readLegacy(cluster, g))));
      return out;
    }
    await this.locate(cluster, any, groups, out);
    const byNode = new Map<number, GroupTopics[]>();
    for (const g of groups) {
      const node = this.nodes.get(g.groupId);
      if (node === undefined || out.has(g.groupId)) continue;
      byNode.set(node, [...(byNode.get(node) ?? []), g]);
    }
    await Promise.all([...byNode].map(([node, list]) => this.fetchFrom(cluster, node, list, out)));
    return out;
  }

  private async locate(
    cluster: CoordinatorCluster,
    any: ProtocolBroker,
    groups: GroupTopics[],
    out: Map<string, CommittedOffsets>,
  ): Promise<void> {
    const unknown = groups.map((g) => g.groupId).filter((g) => !this.nodes.has(g));
    if (unknown.length === 0) return;
    if (!brokerSupports(any, API_KEYS.FindCoordinator, 4)) {
      await Promise.all(
        unknown.map(async (groupId) => {
          this.count('GroupCoordinator');
          try {
            const b = await cluster.findGroupCoordinator({ groupId });
            if (typeof b.nodeId === 'number') this.nodes.set(groupId, b.nodeId);
            else out.set(groupId, new Error('coordinator without a node id'));
          } catch (err) {
            out.set(groupId, asError(err));
          }
        }),
      );
      return;
    }
    let ask = unknown;
    // A fresh cluster creates __consumer_offsets on the first lookup (COORDINATOR_NOT_AVAILABLE for
    // a moment): ask again for those keys, a bounded number of times, like kafkajs's own lookup.
    for (let attempt = 0; ask.length > 0 && attempt < LOOKUP_ATTEMPTS; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
      this.count('FindCoordinator');
      const retry: string[] = [];
      try {
        for (const a of await sendProtocolRequest(any, findCoordinatorsRequest(ask))) {
          if (!a.error) {
            this.nodes.set(a.key, a.nodeId);
            out.delete(a.key);
          } else {
            out.set(a.key, a.error);
            if (a.error.retriable) retry.push(a.key);
          }
        }
      } catch (err) {
        for (const g of ask) out.set(g, asError(err));
      }
      ask = retry;
    }
    for (const g of unknown) if (!this.nodes.has(g) && !out.has(g)) out.set(g, new Error('no coordinator'));
  }

  private async fetchFrom(
    cluster: CoordinatorCluster,
    node: number,
    list: GroupTopics[],
    out: Map<string, CommittedOffsets>,
  ): Promise<void> {
    try {
      const broker = await cluster.findBroker({ nodeId: node });
      this.count('OffsetFetch');
      const answers = await sendProtocolRequest(broker, offsetFetchGroupsRequest(list));
      for (const a of answers) {
        const failed = a.error ?? a.partitions.find((p) => p.error)?.error;
        if (failed) {
          // NOT_COORDINATOR, a loading coordinator: look the coordinator up again next round.
          this.nodes.delete(a.groupId);
          out.set(a.groupId, failed);
          continue;
        }
        const byTopic = new Map<string, Map<number, { offset: string; metadata: string | null }>>();
        for (const p of a.partitions) {
          const m = byTopic.get(p.topic) ?? new Map();
          m.set(p.partition, { offset: p.offset, metadata: p.metadata });
          byTopic.set(p.topic, m);
        }
        out.set(a.groupId, byTopic);
      }
    } catch (err) {
      for (const g of list) this.nodes.delete(g.groupId);
      for (const g of list) out.set(g.groupId, asError(err));
    }
    for (const g of list)
      if (!out.has(g.groupId)) out.set(g.groupId, new Error('group missing from the answer'));
  }

  /** kafkajs's OffsetFetch (v1-v4): one request per group, coordinators cached. */
  private async readLegacy(cluster: CoordinatorCluster, g: GroupTopics): Promise<CommittedOffsets> {
    try {
      let coordinator = this.legacy.get(g.groupId);
      if (!coordinator) {
        this.count('GroupCoordinator');
        coordinator = await cluster.findGroupCoordinator({ groupId: g.groupId });
        this.legacy.set(g.groupId, coordinator);
      }
      this.count('OffsetFetch');
      const { responses } = await coordinator.offsetFetch({
        groupId: g.groupId,
        topics: g.topics.map((t) => ({
          topic: t.topic,
          partitions: t.partitions.map((partition) => ({ partition })),
        })),
      });
      return new Map(
        responses.map((r) => [r.topic, new Map(r.partitions.map((p) => [p.partition, p]))] as const),
      );
    } catch (err) {
      this.legacy.delete(g.groupId);
      return asError(err);
    }
  }
}

function mergeGroups(wanted: readonly GroupTopics[]): GroupTopics[] {
  const byGroup = new Map<string, GroupTopics>();
  for (const w of wanted) {
    const g = byGroup.get(w.groupId) ?? { groupId: w.groupId, topics: [] };
    g.topics.push(...w.topics.filter((t) => !g.topics.some((x) => x.topic === t.topic)));
    byGroup.set(w.groupId, g);
  }
  return [...byGroup.values()];
}

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));
