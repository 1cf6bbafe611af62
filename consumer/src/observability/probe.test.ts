import { startProbeServer } from '../../../common/src/probe-server';
import { WorkerMetrics } from './metrics';

describe('observability server', () => {
  it('serves metrics (with the autoscaler contract), liveness and readiness', async () => {
    const metrics = new WorkerMetrics(false);
    let ready = { ready: false, reason: 'not joined to the consumer group' };
    let alive = true;
    const server = await startProbeServer(
      0,
      metrics,
      { alive: () => alive, ready: () => ready },
      '127.0.0.1',
    );
    const get = async (p: string) => {
      const res = await fetch(`http://127.0.0.1:${server.port}${p}`);
      return { status: res.status, body: await res.text() };
    };
    try {
      metrics.linesIn.inc(3);
      const m = await get('/metrics');
      expect(m.status).toBe(200);
      expect(m.body).toContain('logpipeline_worker_lines_total 3');
      expect(m.body).toContain('logpipeline_worker_insert_failures_total{kind="retriable"} 0');
      expect(m.body).toMatch(/logpipeline_worker_cpu_seconds\{mode="user"\} [0-9.]+/);
      expect(await get('/healthz')).toEqual({ status: 200, body: 'ok\n' });
      expect(await get('/readyz')).toEqual({ status: 503, body: 'not joined to the consumer group\n' });
      ready = { ready: true, reason: 'ok' };
      expect((await get('/readyz')).status).toBe(200);
      alive = false;
      expect((await get('/healthz')).status).toBe(503);
      expect((await get('/nope')).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});
