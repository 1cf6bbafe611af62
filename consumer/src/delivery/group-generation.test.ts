import { Kafka } from 'kafkajs';
import { AbortError } from '../../../common/src/timing';
import { protocolError } from '../../../common/src/kafka/group-protocol';
import {
  consumerWithGenerations,
  GenerationTracker,
  generationCommitSender,
  type CoordinatorBroker,
} from './group-generation';
import { OffsetCommitter } from './offset-committer';
import { PartitionState } from './partition-state';

/* eslint-disable-next-line @typescript-eslint/no-require-imports */
const Decoder = require('kafkajs/src/protocol/decoder');

interface Accepted {
  generationId: number;
  partition: number;
  metadata: string;
}

/**
 * A group coordinator that validates commits as the broker does: a commit whose generation or
 * member is not the group's current one is refused with ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID.
 * `hold` keeps the next answer until released (a commit in flight across a rebalance).
 */
function fakeCoordinator() {
  const group = { generationId: 0, memberId: 'm-1' };
  const accepted: Accepted[] = [];
  const refused: Array<{ generationId: number; type: string }> = [];
  let hold: Promise<void> | undefined;
  let failNext: number | undefined;
  const broker: CoordinatorBroker = {
    versions: { 8: { minVersion: 2, maxVersion: 9 } },
    joinGroup: async () => ({ ...group }),
    offsetCommit: async () => undefined,
    connectionPool: {
      send: async (req: never) => {
        const { request } = req as { request: { encode(): Promise<{ buffer: Buffer }> } };
        const d = new Decoder((await request.encode()).buffer);
        const [, generationId, memberId] = [d.readString(), d.readInt32(), d.readString(), d.readString()];
        const parts = d
          .readArray((t: typeof d) => {
            t.readString();
            return t.readArray((p: typeof d) => {
              const partition = p.readInt32();
              p.readInt64();
              p.readInt32();
              return { partition, metadata: p.readString() };
            });
          })
          .flat() as Array<{ partition: number; metadata: string }>;
        if (hold) await hold;
        if (failNext !== undefined) {
          const code = failNext;
          failNext = undefined;
          throw protocolError(code);
        }
        const code = memberId !== group.memberId ? 25 : generationId !== group.generationId ? 22 : 0;
        if (code) {
          refused.push({ generationId, type: protocolError(code)!.type });
          throw protocolError(code);
        }
        for (const p of parts) accepted.push({ generationId, ...p });
      },
    },
  };
  return {
    broker,
    group,
    accepted,
    refused,
    holdNext(): () => void {
      let release!: () => void;
      hold = new Promise((r) => (release = r));
      return () => {
        hold = undefined;
        release();
      };
    },
    failNextWith(code: number) {
      failNext = code;
    },
  };
}

/** A worker's view: tracker + committer + the assignment's states, rebalanced like worker.ts does. */
function harness() {
  const coord = fakeCoordinator();
  const tracker = new GenerationTracker('g');
  const cluster = { findGroupCoordinator: async (_req: { groupId: string }) => coord.broker };
  tracker.instrument(cluster);
  const committer = new OffsetCommitter(
    generationCommitSender(tracker, async () => {
      throw new Error('fallback used');
    }),
  );
  let states: PartitionState[] = [];
  /** The group moves to the next generation; this member joins it and is assigned `partitions`. */
  const rebalance = async (partitions: number[]) => {
    committer.fence();
    coord.group.generationId++;
    // kafkajs: findGroupCoordinator, joinGroup, syncGroup, then GROUP_JOIN.
    const b = await cluster.findGroupCoordinator({ groupId: 'g' });
    await b.joinGroup({});
    tracker.pin(coord.group.memberId);
    for (const s of states) s.kill();
    states = partitions.map((p) => {
      const s = new PartitionState('t', p, { maxRows: 10, maxBytes: 1000, maxDelayMs: 100 });
      s.load(0, []);
      return s;
    });
    committer.unfence();
    return states;
  };
  return { coord, tracker, committer, rebalance };
}

/** Cuts a batch on `s` (its journal is what the commit carries). */
function cut(s: PartitionState, first: number, last: number): void {
  s.tracker.register(first, last, 1_700_000_000_000);
  s.version++;
}

describe('commits bound to the generation of their assignment', () => {
  let h: ReturnType<typeof harness>;
  beforeEach(() => {
    h = harness();
  });

  it('commits under the generation the assignment joined with', async () => {
    const [s] = await h.rebalance([0]);
    cut(s, 0, 9);
    await h.committer.flush(s);
    expect(h.coord.accepted).toEqual([{ generationId: 1, partition: 0, metadata: 'lp1;0-9@1700000000000' }]);
  });

  it('a commit in flight when the group moves on is refused, and never lands under the new generation', async () => {
    const [old] = await h.rebalance([0]);
    cut(old, 0, 9);
    const release = h.coord.holdNext();
    const pending = h.committer.flush(old);
    await new Promise((r) => setImmediate(r));
    // The group rebalances while the commit is on the wire; this member now owns partition 1 only.
    const [fresh] = await h.rebalance([1]);
    release();
    await expect(pending).rejects.toBeInstanceOf(AbortError);
    expect(h.coord.refused).toEqual([{ generationId: 1, type: 'ILLEGAL_GENERATION' }]);
    expect(h.coord.accepted.filter((a) => a.partition === 0)).toEqual([]);
    // The new assignment commits under its own generation (the late refusal did not fence it).
    cut(fresh, 50, 59);
    await h.committer.flush(fresh);
    expect(h.coord.accepted).toEqual([
      { generationId: 2, partition: 1, metadata: 'lp1;50-59@1700000000000' },
    ]);
  });

  it('a retriable failure is retried by the committer only while its state is alive, never under a later generation', async () => {
    const [old] = await h.rebalance([0]);
    cut(old, 0, 9);
    h.coord.failNextWith(16); // NOT_COORDINATOR: retriable, the committer backs off and retries
    const pending = h.committer.flush(old);
    await new Promise((r) => setTimeout(r, 20));
    await h.rebalance([1]);
    await expect(pending).rejects.toBeInstanceOf(AbortError);
    await new Promise((r) => setTimeout(r, 300));
    expect(h.coord.accepted).toEqual([]);
  });

  it('a member the group no longer knows is refused with UNKNOWN_MEMBER_ID and fences the committer', async () => {
    const [s] = await h.rebalance([0]);
    h.coord.group.memberId = 'm-2';
    cut(s, 0, 9);
    const results: boolean[] = [];
    const c = new OffsetCommitter(
      generationCommitSender(h.tracker, async () => undefined),
      (ok) => results.push(ok),
    );
    c.unfence();
    void c.flush(s).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 50));
    expect(results).toEqual([false]); // one refusal, then fenced: no retry loop
    expect(h.coord.refused).toEqual([{ generationId: 1, type: 'UNKNOWN_MEMBER_ID' }]);
  });
});

describe('consumerWithGenerations', () => {
  it("instruments only the consumer's own cluster and pins the generation at GROUP_JOIN", async () => {
    const kafka = new Kafka({ brokers: ['127.0.0.1:1'], logLevel: 0 });
    const { consumer, generations } = consumerWithGenerations(kafka, 'grp', () =>
      kafka.consumer({ groupId: 'grp' }),
    );
    expect(generations).toBeInstanceOf(GenerationTracker);
    // The factory is restored: the admin's cluster is not instrumented.
    const key = Object.getOwnPropertySymbols(kafka).find(
      (s) => s.description === 'private:Kafka:createCluster',
    )!;
    const admin = (kafka as unknown as Record<symbol, (o: object) => { findGroupCoordinator: unknown }>)[key](
      {},
    );
    expect(Object.prototype.hasOwnProperty.call(admin, 'findGroupCoordinator')).toBe(false);
    expect(typeof consumer.on).toBe('function');
    // GROUP_JOIN of an unknown join leaves no generation (commits then fall back).
    generations!.pin('nobody');
    expect(generations!.current).toBeUndefined();
  });
});
