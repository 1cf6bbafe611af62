/**
 * Reads what the autoscaler needs from Kafka in two admin requests per poll: the log-start and
 * log-end offsets of the topic and the group's committed offsets with their commit metadata (the
 * workers' cut journal, read for sink health). Uses the shared admin of the pipeline's cluster.
 */
import type { Admin } from 'kafkajs';
import type { PartitionOffsets } from './lag';
import type { CommitRecord } from './sink-health';

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
