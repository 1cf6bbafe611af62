/**
 * The worker's HTTP endpoints on config.httpPort: `/metrics` (Prometheus text), `/healthz`
 * (liveness: the process answers and its event loop is not stalled, the consumer has not crashed
 * for good) and `/readyz` (readiness: joined the consumer group and ClickHouse reachable).
 */
import http from 'node:http';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { WorkerMetrics } from './metrics';

/** What the probes ask the worker. */
export interface HealthSource {
  /** False once the consumer failed for good (kafkajs gave up restarting). */
  alive(): boolean;
  /** Joined the group with an assignment and ClickHouse answered recently. */
  ready(): { ready: boolean; reason: string };
}

/** Liveness fails when the event loop was blocked longer than this within the last probe period. */
export const MAX_EVENT_LOOP_DELAY_MS = 10_000;

/** A started HTTP server and its close function. */
export interface ObservabilityServer {
  port: number;
  close(): Promise<void>;
}

/** Starts the server; resolves once listening (port 0 picks a free port). */
export function startObservabilityServer(
  port: number,
  metrics: WorkerMetrics,
  health: HealthSource,
  host = '0.0.0.0',
): Promise<ObservabilityServer> {
  const loop: IntervalHistogram = monitorEventLoopDelay({ resolution: 50 });
  loop.enable();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics') {
      metrics.render().then(
        (text) => reply(res, 200, text, metrics.contentType()),
        (err: Error) => reply(res, 500, `metrics failed: ${err.message}\n`),
      );
      return;
    }
    if (path === '/healthz') {
      const maxMs = loop.max / 1e6;
      loop.reset();
      if (!health.alive()) return reply(res, 503, 'consumer stopped\n');
      if (maxMs > MAX_EVENT_LOOP_DELAY_MS)
        return reply(res, 503, `event loop stalled ${Math.round(maxMs)} ms\n`);
      return reply(res, 200, 'ok\n');
    }
    if (path === '/readyz') {
      const r = health.ready();
      return reply(res, r.ready ? 200 : 503, `${r.reason}\n`);
    }
    reply(res, 404, 'not found\n');
  });
  // Probes and scrapes are short; never let a slow client hold a socket.
  server.requestTimeout = 10_000;
  server.keepAliveTimeout = 5_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const addr = server.address();
      resolve({
        port: typeof addr === 'object' && addr ? addr.port : port,
        close: () =>
          new Promise<void>((r) => {
            loop.disable();
            server.close(() => r());
            server.closeAllConnections();
          }),
      });
    });
  });
}

function reply(
  res: http.ServerResponse,
  status: number,
  body: string,
  contentType = 'text/plain; charset=utf-8',
): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  res.end(body);
}
