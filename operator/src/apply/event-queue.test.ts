import type { LogPipeline } from '../api/types';
import { EventQueue } from './event-queue';
import { EventRecorder } from './event-recorder';
import type { KubeClient } from './kube-rest';

const pipeline = (name: string): LogPipeline =>
  ({
    apiVersion: 'logpipeline.io/v1alpha1',
    kind: 'LogPipeline',
    metadata: { namespace: 'isp', name, uid: `uid-${name}` },
  }) as LogPipeline;
const ev = (message: string) => ({ type: 'Normal' as const, reason: 'TableChanged', message });

/** An apiserver whose Event requests wait until `release()`; `fail` makes them throw. */
function slowServer() {
  const requests: Array<{ method: string; body: Record<string, unknown> }> = [];
  let gate: () => void = () => undefined;
  let open = new Promise<void>((r) => (gate = r));
  let n = 0;
  const state = { fail: false };
  const client: KubeClient = {
    async request<T>(method: string, _path: string, opts?: { body?: unknown }): Promise<T> {
      await open;
      requests.push({ method, body: opts?.body as Record<string, unknown> });
      if (state.fail) throw new Error('apiserver unavailable');
      return { metadata: { name: `ev.${n++}` } } as T;
    },
    watch: async () => undefined,
  };
  return {
    client,
    requests,
    state,
    release: () => gate(),
    hold: () => (open = new Promise<void>((r) => (gate = r))),
  };
}

describe('EventQueue (Events sent in the background, issue 18)', () => {
  it('returns at once, keeps one object in order (a repeat counts up) and flushes', async () => {
    const server = slowServer();
    const recorder = new EventRecorder(server.client, 'test');
    const queue = new EventQueue(recorder);
    expect(queue.enqueue(pipeline('a'), ev('created table'))).toBe('queued');
    expect(queue.enqueue(pipeline('a'), ev('created table'))).toBe('queued');
    expect(queue.enqueue(pipeline('b'), ev('created table'))).toBe('queued');
    expect(queue.size()).toBe(3);
    expect(server.requests).toHaveLength(0);
    server.release();
    await queue.flush();
    expect(queue.size()).toBe(0);
    // a: one POST, then a PATCH of its count (the repeat waited for the first one's name); b: one POST.
    expect(server.requests.map((r) => r.method).sort()).toEqual(['PATCH', 'POST', 'POST']);
    expect(recorder.stats()).toMatchObject({ created: 2, aggregated: 1 });
  });

  it('drops past its bound and counts failures without throwing', async () => {
    const server = slowServer();
    const recorder = new EventRecorder(server.client, 'test');
    const failed: string[] = [];
    const queue = new EventQueue(recorder, { maxQueued: 2, onFailed: (lp) => failed.push(lp.metadata.name) });
    server.state.fail = true;
    queue.enqueue(pipeline('a'), ev('one'));
    queue.enqueue(pipeline('b'), ev('two'));
    expect(queue.enqueue(pipeline('c'), ev('three'))).toBe('dropped');
    server.release();
    await queue.flush();
    expect(failed.sort()).toEqual(['a', 'b']);
    expect(recorder.stats()).toMatchObject({ created: 0, failed: 2, dropped: 1 });
  });

  it('stamps an Event with the time it was queued, not sent', async () => {
    const server = slowServer();
    let t = Date.parse('2026-01-01T00:00:00Z');
    const recorder = new EventRecorder(server.client, 'test', { now: () => t });
    const queue = new EventQueue(recorder, { now: () => t });
    queue.enqueue(pipeline('a'), ev('created table'));
    t += 60_000;
    server.release();
    await queue.flush();
    expect(server.requests[0].body.firstTimestamp).toBe('2026-01-01T00:00:00.000Z');
  });
});
