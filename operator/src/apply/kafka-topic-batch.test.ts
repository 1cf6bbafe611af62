import { KafkaApplyError } from './kafka-client';
import { TopicBatcher, type BatchCluster } from './kafka-topic-batch';

/** A fake cluster whose owner-record commits fail (with `type`, default X) while `down` is set. */
function fakeCluster(state: { down: boolean; commits: number; type?: string }): BatchCluster {
  const coordinator = {
    async offsetCommit() {
      state.commits++;
      if (state.down)
        throw Object.assign(new Error('coordinator load in progress'), { type: state.type ?? 'X' });
      return {};
    },
    async offsetFetch() {
      return { responses: [] };
    },
  };
  return {
    async connect() {},
    async disconnect() {},
    brokerPool: {
      async refreshMetadata() {},
      metadata: { clusterId: 'c1', topicMetadata: [] },
      async findConnectedBroker() {
        throw new Error('unused');
      },
    },
    async findControllerBroker() {
      throw new Error('unused');
    },
    async findGroupCoordinator() {
      return coordinator;
    },
  };
}

describe('TopicBatcher owner records of topics it created', () => {
  it('remembers its creation until the owner record is stored, so a failed commit is retried, not judged foreign', async () => {
    const state = { down: true, commits: 0 };
    const batch = new TopicBatcher(() => fakeCluster(state), 0);
    batch.noteCreated('t1', 'uid-1');
    await expect(batch.commitOwner('t1', 'rec')).rejects.toThrow(/recording the owners of t1/);
    // The next reconcile finds the topic without a record: ours, since we created it.
    expect(batch.createdBy('t1', 'uid-1')).toBe(true);
    expect(batch.createdBy('t1', 'uid-2')).toBe(false);
    state.down = false;
    await batch.commitOwner('t1', 'rec');
    expect(batch.createdBy('t1', 'uid-1')).toBe(false);
    expect(state.commits).toBe(2);
  });

  it('commits the records of many topics asked together in one request', async () => {
    const state = { down: false, commits: 0 };
    const batch = new TopicBatcher(() => fakeCluster(state), 1);
    await Promise.all(['a', 'b', 'c', 'd'].map((t) => batch.commitOwner(t, `rec-${t}`)));
    expect(state.commits).toBe(1);
    expect(batch.commits.batchCount()).toBe(1);
  });
});

describe('TopicBatcher errors', () => {
  it("keep the broker's error type, so the Topic part can tell a topic the coordinator does not know yet", async () => {
    const state = { down: true, commits: 0, type: 'UNKNOWN_TOPIC_OR_PARTITION' };
    const batch = new TopicBatcher(() => fakeCluster(state), 0);
    const err = await batch.commitOwner('t1', 'rec').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KafkaApplyError);
    expect(err).toMatchObject({ reason: 'KafkaError', type: 'UNKNOWN_TOPIC_OR_PARTITION' });
  });
});
