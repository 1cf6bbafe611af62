import { Counter, Registry } from 'prom-client';
import { registrySource, startProbeServer } from './probe-server';

describe('probe server over a prom-client registry (the operator)', () => {
  it('serves /metrics, /healthz and /readyz', async () => {
    const registry = new Registry();
    new Counter({ name: 'logpipeline_operator_reconcile_total', help: 'x', registers: [registry] });
    let ready = false;
    const server = await startProbeServer(
      0,
      registrySource(registry),
      {
        alive: () => true,
        ready: () => (ready ? { ready: true, reason: 'ok' } : { ready: false, reason: 'caches not synced' }),
      },
      '127.0.0.1',
    );
    try {
      const get = (p: string) => fetch(`http://127.0.0.1:${server.port}${p}`);
      expect((await get('/healthz')).status).toBe(200);
      expect((await get('/readyz')).status).toBe(503);
      ready = true;
      expect((await get('/readyz')).status).toBe(200);
      const metrics = await get('/metrics');
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('logpipeline_operator_reconcile_total');
      expect((await get('/nope')).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});
