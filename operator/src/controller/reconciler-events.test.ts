import type { LogPipeline } from '../api/types';
import type { KubeClient } from '../apply/kube-rest';
import type { ExternalPart } from './external';
import { FINALIZER } from './finalize';
import { Reconciler } from './reconciler';

/** A fake apiserver: applies echo the body with metadata, everything else is recorded. */
function fakeClient(lp: LogPipeline, eventsHeld: Promise<void> = Promise.resolve()) {
  const requests: Array<{ method: string; path: string; body?: Record<string, unknown> }> = [];
  let rv = 10;
  const client: KubeClient = {
    async request<T>(method: string, path: string, opts?: { body?: unknown }): Promise<T> {
      const body = opts?.body as Record<string, unknown> | undefined;
      requests.push({ method, path, body });
      if (path.endsWith('/status') || path.includes('/logpipelines/')) return lp as T;
      if (path.endsWith('/events')) {
        await eventsHeld;
        return { metadata: { name: `ev.${rv++}`, resourceVersion: String(rv) } } as T;
      }
      const meta = (body?.metadata ?? {}) as Record<string, unknown>;
      return { ...body, metadata: { ...meta, uid: 'u', resourceVersion: String(rv++) } } as T;
    },
    watch: async () => undefined,
  };
  return { client, requests };
}

const lp: LogPipeline = {
  apiVersion: 'logpipeline.io/v1alpha1',
  kind: 'LogPipeline',
  metadata: { name: 'fw', namespace: 'isp', uid: 'uid-1', generation: 1, finalizers: [FINALIZER] },
  spec: {
    kafka: { bootstrapServers: ['kafka:9092'] },
    clickhouse: { url: 'http://ch:8123', database: 'logs', table: 'fw' },
  },
};

const none = { get: () => undefined };

describe('reconciler records the Events external parts return (PLAN finding 8)', () => {
  it("posts the parts' changes (one Event when both changed) in the background: the reconcile never waits for them", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    const { client, requests } = fakeClient(lp, held);
    const rec = new Reconciler({
      client,
      pipelines: { get: () => lp },
      secrets: none,
      children: { configMaps: none, deployments: none, pdbs: none },
    });
    const part = (name: 'Topic' | 'Table', reason: string): ExternalPart => ({
      name,
      ensure: async () => ({
        status: 'True',
        reason: `${name}Ready`,
        message: 'ok',
        events: [{ type: 'Normal', reason, message: `${name} changed` }],
      }),
      delete: async () => undefined,
    });
    rec.registerPart(part('Topic', 'TopicChanged'));
    rec.registerPart(part('Table', 'TableChanged'));
    // Every Event POST hangs until released: the reconcile finishes anyway (issue 18).
    await rec.reconcile('isp/fw');
    let flushed = false;
    const flush = rec.flushEvents().then(() => (flushed = true));
    await new Promise((r) => setImmediate(r));
    expect(flushed).toBe(false);
    release();
    await flush;
    const reasons = requests
      .filter((r) => r.method === 'POST' && r.path.endsWith('/events'))
      .map((r) => r.body?.reason);
    expect(reasons).toContain('TopicAndTableChanged');
    expect(reasons).not.toContain('TopicChanged');
    expect(reasons).not.toContain('TableChanged');
  });
});

describe('reconciler order of the claims (issue 18)', () => {
  it('checks the topic and the tables at once: a new pipeline waits for the slower, not the sum', async () => {
    const { client } = fakeClient(lp);
    const rec = new Reconciler({
      client,
      pipelines: { get: () => lp },
      secrets: none,
      children: { configMaps: none, deployments: none, pdbs: none },
    });
    const order: string[] = [];
    const part = (name: 'Topic' | 'Table'): ExternalPart => ({
      name,
      ensure: async () => {
        order.push(`${name} started`);
        await new Promise((r) => setImmediate(r));
        order.push(`${name} done`);
        return { status: 'True', reason: `${name}Ready`, message: 'ok' };
      },
      delete: async () => undefined,
    });
    rec.registerPart(part('Topic'));
    rec.registerPart(part('Table'));
    await rec.reconcile('isp/fw');
    expect(order.slice(0, 2)).toEqual(['Topic started', 'Table started']);
  });
});
