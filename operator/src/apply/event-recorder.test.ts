import type { LogPipeline } from '../api/types';
import { COMBINED_PREFIX, EventRecorder, eventResults } from './event-recorder';
import { KubeApiError, type KubeClient } from './kube-rest';

const lp = {
  apiVersion: 'logpipeline.io/v1alpha1',
  kind: 'LogPipeline',
  metadata: { name: 'fw', namespace: 'isp', uid: 'u1' },
  spec: {},
} as unknown as LogPipeline;

function setup(opts: { burst?: number } = {}) {
  let t = 1_000_000;
  let n = 0;
  const calls: Array<{ method: string; path: string; body: Record<string, unknown> }> = [];
  const gone = new Set<string>();
  const client: KubeClient = {
    async request<T>(method: string, path: string, o?: { body?: unknown }): Promise<T> {
      calls.push({ method, path, body: o?.body as Record<string, unknown> });
      if (method === 'PATCH' && gone.has(path)) throw new KubeApiError(404, 'NotFound', 'gone');
      return { metadata: { name: `fw.${++n}` } } as T;
    },
    watch: async () => undefined,
  };
  const rec = new EventRecorder(client, 'op-1', { now: () => t, ...opts });
  return { rec, calls, gone, advance: (ms: number) => (t += ms) };
}

const ev = (message: string, reason = 'TableChanged') => ({ type: 'Normal' as const, reason, message });

describe('EventRecorder', () => {
  it('patches count and lastTimestamp for a repeat within 10 min, creates a new Event after', async () => {
    const { rec, calls, advance } = setup();
    expect((await rec.record(lp, ev('a'))).result).toBe('created');
    advance(60_000);
    expect((await rec.record(lp, ev('a'))).result).toBe('aggregated');
    expect(calls[1]).toMatchObject({ method: 'PATCH', path: '/api/v1/namespaces/isp/events/fw.1' });
    expect(calls[1].body).toMatchObject({ count: 2 });
    advance(600_001);
    expect((await rec.record(lp, ev('a'))).result).toBe('created');
    expect(calls.map((c) => c.method)).toEqual(['POST', 'PATCH', 'POST']);
  });

  it('creates a new Event when the old one expired (404 on PATCH)', async () => {
    const { rec, calls, gone } = setup();
    await rec.record(lp, ev('a'));
    gone.add('/api/v1/namespaces/isp/events/fw.1');
    expect((await rec.record(lp, ev('a'))).result).toBe('created');
    expect(calls.map((c) => c.method)).toEqual(['POST', 'PATCH', 'POST']);
  });

  it('combines 10 distinct messages of one reason into one counted Event', async () => {
    const { rec, calls } = setup();
    for (let i = 0; i < 15; i++) await rec.record(lp, ev(`m${i}`));
    const posts = calls.filter((c) => c.method === 'POST');
    expect(posts).toHaveLength(10);
    expect(String(posts[9].body.message)).toBe(`${COMBINED_PREFIX}m9`);
    expect(calls.filter((c) => c.method === 'PATCH')).toHaveLength(5);
  });

  it('drops Events of one reason beyond its token bucket, refills slowly, and never silences other reasons', async () => {
    const { rec, advance } = setup({ burst: 3 });
    const results = [];
    for (let i = 0; i < 5; i++) results.push((await rec.record(lp, ev(`x${i}`, 'Flapping'))).result);
    expect(results).toEqual(['created', 'created', 'created', 'dropped', 'dropped']);
    // A different cause on the same pipeline (e.g. a scale during a flapping rollout) still gets through.
    expect((await rec.record(lp, ev('scaled down 2 -> 1', 'ScaledDown'))).result).toBe('created');
    advance(300_000);
    expect((await rec.record(lp, ev('y', 'Flapping'))).result).toBe('created');
    expect(rec.stats()).toMatchObject({ created: 5, dropped: 2 });
  });

  it('returns a failure instead of throwing', async () => {
    const client: KubeClient = {
      request: async () => {
        throw new Error('boom');
      },
      watch: async () => undefined,
    };
    const out = await new EventRecorder(client, 'op').record(lp, ev('a'));
    expect(out.result).toBe('failed');
    expect(out.error?.message).toBe('boom');
  });

  it('counts every result process-wide for the metrics (logpipeline_operator_events_total)', async () => {
    const before = new Map(eventResults.snapshot());
    const { rec } = setup({ burst: 2 });
    await rec.record(lp, ev('a'));
    await rec.record(lp, ev('a'));
    await rec.record(lp, ev('a'));
    const delta = (k: string) => eventResults.get(k) - (before.get(k) ?? 0);
    expect([delta('created'), delta('aggregated'), delta('dropped')]).toEqual([1, 1, 1]);
  });
});
