/** The operator's HTTP endpoint: /metrics (Prometheus), /healthz (alive), /readyz (caches synced). */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/** What the endpoints report. */
export interface HttpProbes {
  registry: Registry;
  healthy(): boolean;
  ready(): boolean;
}

/** Starts the server on `port` (0 = any); resolves with the bound port and a close function. */
export async function startHttpServer(
  port: number,
  probes: HttpProbes,
): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const reply = (code: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(code, { 'content-type': type });
      res.end(body);
    };
    if (path === '/metrics') {
      probes.registry.metrics().then(
        (text) => reply(200, text, probes.registry.contentType),
        (err: Error) => reply(500, err.message),
      );
    } else if (path === '/healthz') {
      if (probes.healthy()) reply(200, 'ok\n');
      else reply(503, 'unhealthy\n');
    } else if (path === '/readyz') {
      if (probes.ready()) reply(200, 'ok\n');
      else reply(503, 'caches not synced\n');
    } else reply(404, 'not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
