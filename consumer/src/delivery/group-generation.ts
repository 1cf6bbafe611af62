/**
 * Offset commits bound to the group generation of the assignment they belong to. kafkajs's
 * consumer.commitOffsets retries a failed commit inside its own retrier and, after a rejoin, sends
 * it again under the generation it has *by then*; the broker accepts that, so a revoked partition's
 * state (its cut journal) can replace its new owner's. Here the generation id and member id come
 * from the JoinGroup answer of the assignment in force (pinned at GROUP_JOIN, before the worker
 * installs the assignment's states), are fixed when the commit is built, and the commit is sent once
 * as OffsetCommit v7 on kafkajs's own coordinator connection: a stale commit is refused by the broker
 * (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS) and the committer fences itself.
 * Retries are the committer's, which re-checks each state's liveness before every send.
 */
import type { Consumer, Kafka } from 'kafkajs';
import {
  API_KEYS,
  brokerSupports,
  generationCommitRequest,
  sendProtocolRequest,
  type GenerationCommit,
  type ProtocolBroker,
} from '../../../common/src/kafka/group-protocol';
import type { CommitSender } from './offset-committer';
import type { PartitionCommit } from './partition-state';

/** One member's generation of one group, and the coordinator connection it joined through. */
export interface GroupGeneration {
  groupId: string;
  generationId: number;
  memberId: string;
  coordinator: CoordinatorBroker;
}

/** The parts of a kafkajs coordinator Broker used here (kafkajs 2.2.4 is pinned). */
export interface CoordinatorBroker extends ProtocolBroker {
  joinGroup(req: unknown): Promise<{ generationId: number; memberId: string }>;
  offsetCommit(req: {
    groupId: string;
    groupGenerationId: number;
    memberId: string;
    topics: GenerationCommit['topics'];
  }): Promise<unknown>;
}

interface ConsumerCluster {
  findGroupCoordinator(req: { groupId: string }): Promise<CoordinatorBroker>;
}

const TRACKED = Symbol('logpipeline:generationTracked');

/** The generation of the assignment in force, learnt from the consumer's own JoinGroup answers. */
export class GenerationTracker {
  private lastJoin?: Omit<GroupGeneration, 'groupId'>;
  /** The generation of the installed assignment; undefined before the first GROUP_JOIN. */
  current?: GroupGeneration;

  constructor(readonly groupId: string) {}

  /** Records the JoinGroup answers of every coordinator the consumer's cluster hands out. */
  instrument(cluster: ConsumerCluster): void {
    const find = cluster.findGroupCoordinator.bind(cluster);
    cluster.findGroupCoordinator = async (req) => this.track(await find(req));
  }

  /** GROUP_JOIN: the assignment being installed belongs to the last join of this member. */
  pin(memberId: string): void {
    const j = this.lastJoin;
    this.current = j && j.memberId === memberId ? { groupId: this.groupId, ...j } : undefined;
  }

  private track(broker: CoordinatorBroker): CoordinatorBroker {
    const b = broker as CoordinatorBroker & { [TRACKED]?: true };
    if (b[TRACKED]) return broker;
    const join = broker.joinGroup.bind(broker);
    b.joinGroup = async (req) => {
      const res = await join(req);
      this.lastJoin = { generationId: res.generationId, memberId: res.memberId, coordinator: broker };
      return res;
    };
    b[TRACKED] = true;
    return broker;
  }
}

/**
 * Creates the consumer with `make` and tracks its generations: the cluster kafkajs builds for this
 * consumer is instrumented (only that one: the Kafka instance's cluster factory is swapped for the
 * call). Without the kafkajs internals (another kafkajs version) there is no tracker.
 */
export function consumerWithGenerations(
  kafka: Kafka,
  groupId: string,
  make: () => Consumer,
): { consumer: Consumer; generations?: GenerationTracker } {
  const holder = kafka as unknown as Record<symbol, unknown>;
  const key = Object.getOwnPropertySymbols(kafka).find(
    (s) => s.description === 'private:Kafka:createCluster',
  );
  const create = key && holder[key];
  if (!key || typeof create !== 'function') return { consumer: make() };
  let cluster: Partial<ConsumerCluster> | undefined;
  holder[key] = (opts: unknown) => (cluster = (create as (o: unknown) => ConsumerCluster)(opts));
  let consumer: Consumer;
  try {
    consumer = make();
  } finally {
    holder[key] = create;
  }
  if (typeof cluster?.findGroupCoordinator !== 'function') return { consumer };
  const generations = new GenerationTracker(groupId);
  generations.instrument(cluster as ConsumerCluster);
  // Registered before the worker's own GROUP_JOIN listener, which installs the assignment's states.
  consumer.on(consumer.events.GROUP_JOIN, (e) => generations.pin(e.payload.memberId));
  return { consumer, generations };
}

/** Groups partition commits by topic, as OffsetCommit carries them. */
function byTopic(offsets: readonly PartitionCommit[]): GenerationCommit['topics'] {
  const topics = new Map<string, GenerationCommit['topics'][number]>();
  for (const o of offsets) {
    const t = topics.get(o.topic) ?? { topic: o.topic, partitions: [] };
    t.partitions.push({ partition: o.partition, offset: o.offset, metadata: o.metadata });
    topics.set(o.topic, t);
  }
  return [...topics.values()];
}

/** Sends `offsets` once under `g` (OffsetCommit v7, else kafkajs's OffsetCommit with the same fixed generation). */
export async function commitUnderGeneration(
  g: GroupGeneration,
  offsets: readonly PartitionCommit[],
): Promise<void> {
  const topics = byTopic(offsets);
  if (brokerSupports(g.coordinator, API_KEYS.OffsetCommit, 7)) {
    await sendProtocolRequest(g.coordinator, generationCommitRequest({ ...g, topics }));
    return;
  }
  await g.coordinator.offsetCommit({
    groupId: g.groupId,
    groupGenerationId: g.generationId,
    memberId: g.memberId,
    topics,
  });
}

/**
 * A CommitSender that commits under the generation of the assignment in force, read when the
 * committer builds the commit (the same synchronous step that checked its states alive);
 * `fallback` (kafkajs's commitOffsets) only while no generation is known.
 */
export function generationCommitSender(
  generations: GenerationTracker | undefined,
  fallback: CommitSender,
): CommitSender {
  return (offsets) => {
    const g = generations?.current;
    return g ? commitUnderGeneration(g, offsets) : fallback(offsets);
  };
}
