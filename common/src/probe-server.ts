/**
 * The HTTP endpoint both processes expose: `/metrics` (Prometheus text), `/healthz` (liveness: the
 * process answers, its event loop is not stalled, and it has not failed for good) and `/readyz`
 * (readiness, with the reason in the body). One server so the operator's and the worker's probes
 * mean the same thing.
 */
import http from 'node:http';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { Registry } from 'prom-client';

/** Liveness fails when the event loop was blocked longer than this within the last probe period. */
export const MAX_EVENT_LOOP_DELAY_MS = 10_000;

/** Where `/metrics` comes from. */
export interface MetricsSource {
  render(): Promise<string>;
  contentType(): string;
}

/** What the probes ask the process. */
export interface HealthSource {
  /** False once the process failed for good (it should be restarted). */
  alive(): boolean;
  /** Ready to serve, or why not. */
  ready(): { ready: boolean; reason: string };
}

/** A started probe server and its close function. */
export interface ProbeServer {
  port: number;
  close(): Promise<void>;
}

/** A MetricsSource over a prom-client registry. */
export function registrySource(registry: Registry): MetricsSource {
  return { render: () => registry.metrics(), contentType: () => registry.contentType };
}

/** Starts the server on `port` (0 picks a free port); resolves once listening. */
export function startProbeServer(
  port: number,
  metrics: MetricsSource,
  health: HealthSource,
  host = '0.0.0.0',
): Promise<ProbeServer> {
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
    if (path === '/healthz') return reply(res, ...liveness(loop, health));
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

function liveness(loop: IntervalHistogram, health: HealthSource): [number, string] {
  const maxMs = loop.max / 1e6;
  loop.reset();
  if (!health.alive()) return [503, 'stopped\n'];
  if (maxMs > MAX_EVENT_LOOP_DELAY_MS) return [503, `event loop stalled ${Math.round(maxMs)} ms\n`];
  return [200, 'ok\n'];
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
