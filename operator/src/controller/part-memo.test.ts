import type { ResolvedSpec } from '../api/defaults';
import type { LogPipeline } from '../api/types';
import { UNGUARDED } from '../apply/guard';
import { silentLogger } from '../../../common/src/log';
import type { ExternalPart, PartContext, PartOutcome } from './external';
import { PartMemo } from './part-memo';

function fixture(outcome: PartOutcome = { status: 'True', reason: 'TopicReady', message: 'ok' }) {
  let t = 0;
  const calls: string[] = [];
  const part: ExternalPart = {
    name: 'Topic',
    ensure: async (spec) => {
      calls.push(spec.uid);
      return outcome;
    },
    delete: async () => undefined,
  };
  const lp = { metadata: { name: 'p', namespace: 'ns', uid: 'u1', generation: 1 } } as unknown as LogPipeline;
  const spec = {
    uid: 'u1',
    name: 'p',
    namespace: 'ns',
    kafka: { topic: { name: 't' } },
  } as unknown as ResolvedSpec;
  const ctx: PartContext = {
    pipeline: lp,
    readSecretKey: async () => undefined,
    log: silentLogger,
    guard: UNGUARDED,
    pipelines: () => [],
  };
  const memo = new PartMemo({ recheckMs: 1000, jitter: 0, now: () => t });
  return { part, spec, ctx, memo, calls, advance: (ms: number) => (t += ms) };
}

describe('PartMemo', () => {
  it('reuses a clean outcome until the recheck is due', async () => {
    const f = fixture();
    await f.memo.ensure(f.part, f.spec, f.ctx, 'sv');
    f.advance(999);
    await f.memo.ensure(f.part, f.spec, f.ctx, 'sv');
    expect(f.calls).toHaveLength(1);
    f.advance(2);
    await f.memo.ensure(f.part, f.spec, f.ctx, 'sv');
    expect(f.calls).toHaveLength(2);
  });

  it('runs the part when the spec, Secrets or annotations changed', async () => {
    const f = fixture();
    await f.memo.ensure(f.part, f.spec, f.ctx, 'sv');
    await f.memo.ensure(f.part, f.spec, f.ctx, 'sv2');
    await f.memo.ensure(f.part, { ...f.spec, name: 'x' } as ResolvedSpec, f.ctx, 'sv2');
    const annotated = {
      ...f.ctx.pipeline,
      metadata: { ...f.ctx.pipeline.metadata, annotations: { a: 'b' } },
    };
    await f.memo.ensure(
      f.part,
      { ...f.spec, name: 'x' } as ResolvedSpec,
      { ...f.ctx, pipeline: annotated },
      'sv2',
    );
    expect(f.calls).toHaveLength(4);
  });

  it('runs the part again when the workers start or stop asking for pods (parser-stats table)', async () => {
    const f = fixture();
    let asking = false;
    const ctx: PartContext = { ...f.ctx, workersAskForPods: () => asking };
    await f.memo.ensure(f.part, f.spec, ctx, 'sv');
    await f.memo.ensure(f.part, f.spec, ctx, 'sv');
    expect(f.calls).toHaveLength(1);
    asking = true;
    await f.memo.ensure(f.part, f.spec, ctx, 'sv');
    await f.memo.ensure(f.part, f.spec, ctx, 'sv');
    expect(f.calls).toHaveLength(2);
    // A context that does not say counts as asking (the tables of pods are wanted).
    await f.memo.ensure(f.part, f.spec, f.ctx, 'sv');
    expect(f.calls).toHaveLength(2);
  });

  it('never keeps outcomes that are not clean', async () => {
    for (const o of [
      { status: 'False', reason: 'X', message: '' },
      { status: 'True', reason: 'X', message: '', retry: true },
      {
        status: 'True',
        reason: 'X',
        message: '',
        events: [{ type: 'Warning', reason: 'TopicDrift', message: '' }],
      },
    ] as PartOutcome[]) {
      const f = fixture(o);
      await f.memo.ensure(f.part, f.spec, f.ctx, undefined);
      await f.memo.ensure(f.part, f.spec, f.ctx, undefined);
      expect(f.calls).toHaveLength(2);
    }
  });

  it('keeps an outcome that changed something, without its Events (said once)', async () => {
    const f = fixture({
      status: 'True',
      reason: 'TopicReady',
      message: '',
      events: [{ type: 'Normal', reason: 'TopicChanged', message: 'topic t: created with 3 partitions' }],
    });
    const first = await f.memo.ensure(f.part, f.spec, f.ctx, undefined);
    const second = await f.memo.ensure(f.part, f.spec, f.ctx, undefined);
    expect(f.calls).toHaveLength(1);
    expect(first.events).toHaveLength(1);
    expect(second.events).toBeUndefined();
    expect(second).toMatchObject({ status: 'True', reason: 'TopicReady' });
  });

  it('invalidate forces the next check', async () => {
    const f = fixture();
    await f.memo.ensure(f.part, f.spec, f.ctx, undefined);
    f.memo.invalidate('u1');
    await f.memo.ensure(f.part, f.spec, f.ctx, undefined);
    expect(f.calls).toHaveLength(2);
  });
});

describe('PartMemo claim index', () => {
  const part: ExternalPart = {
    name: 'Topic',
    ensure: async () => ({ status: 'True', reason: 'TopicReady', message: 'ok' }),
    delete: async () => undefined,
  };
  const specOf = (uid: string, name: string, topic: string) =>
    ({
      uid,
      name,
      namespace: 'ns',
      kafka: { bootstrapServers: ['k:9092'], topic: { name: topic } },
      clickhouse: { url: 'http://ch:8123', database: 'logs', table: name },
    }) as unknown as ResolvedSpec;
  const ctxOf = (uid: string, name: string, generation = 1): PartContext => ({
    pipeline: { metadata: { name, namespace: 'ns', uid, generation } } as unknown as LogPipeline,
    readSecretKey: async () => undefined,
    log: silentLogger,
    guard: UNGUARDED,
    pipelines: () => [],
  });

  it('drops and requeues the memo of a pipeline whose topic another pipeline starts naming', async () => {
    const requeued: string[] = [];
    const memo = new PartMemo({
      recheckMs: 60_000,
      jitter: 0,
      now: () => 0,
      onPeerChanged: (k) => requeued.push(k),
    });
    await memo.ensure(part, specOf('a', 'a', 'shared'), ctxOf('a', 'a'), 'sv');
    await memo.ensure(part, specOf('b', 'b', 'other'), ctxOf('b', 'b'), 'sv');
    expect(requeued).toEqual([]);
    expect(memo.size).toBe(2);
    // b is edited to name a's topic: a must be judged again now, not at its next recheck.
    await memo.ensure(part, specOf('b', 'b', 'shared'), ctxOf('b', 'b', 2), 'sv');
    expect(requeued).toEqual(['ns/a']);
    expect(memo.misses).toBe(3);
    await memo.ensure(part, specOf('a', 'a', 'shared'), ctxOf('a', 'a'), 'sv');
    expect(memo.misses).toBe(4);
    // Unchanged inputs requeue nobody.
    await memo.ensure(part, specOf('b', 'b', 'shared'), ctxOf('b', 'b', 2), 'sv');
    expect(requeued).toEqual(['ns/a']);
  });

  it('forgets a deleted pipeline and its claims', async () => {
    const requeued: string[] = [];
    const memo = new PartMemo({
      recheckMs: 60_000,
      jitter: 0,
      now: () => 0,
      onPeerChanged: (k) => requeued.push(k),
    });
    await memo.ensure(part, specOf('a', 'a', 'shared'), ctxOf('a', 'a'), 'sv');
    memo.forget('a');
    expect(memo.size).toBe(0);
    await memo.ensure(part, specOf('b', 'b', 'shared'), ctxOf('b', 'b'), 'sv');
    expect(requeued).toEqual([]);
  });

  it('keeps a key shared by three pipelines through deletions (one uid stored alone, more in a set)', async () => {
    const requeued: string[] = [];
    const memo = new PartMemo({
      recheckMs: 60_000,
      jitter: 0,
      now: () => 0,
      onPeerChanged: (k) => requeued.push(k),
    });
    await memo.ensure(part, specOf('a', 'a', 'shared'), ctxOf('a', 'a'), 'sv');
    await memo.ensure(part, specOf('b', 'b', 'shared'), ctxOf('b', 'b'), 'sv');
    await memo.ensure(part, specOf('c', 'c', 'shared'), ctxOf('c', 'c'), 'sv');
    expect(requeued).toEqual(['ns/a', 'ns/a', 'ns/b']);
    memo.forget('b');
    memo.forget('c');
    requeued.length = 0;
    // a still claims the topic: a newcomer naming it requeues a, and only a.
    await memo.ensure(part, specOf('d', 'd', 'shared'), ctxOf('d', 'd'), 'sv');
    expect(requeued).toEqual(['ns/a']);
    memo.forget('a');
    memo.forget('d');
    requeued.length = 0;
    await memo.ensure(part, specOf('e', 'e', 'shared'), ctxOf('e', 'e'), 'sv');
    expect(requeued).toEqual([]);
  });
});
