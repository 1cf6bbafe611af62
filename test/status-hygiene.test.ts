/**
 * Status hygiene on the real bed (issue 11): an endpoint that is not ClickHouse (a proxy answering
 * a 24 KB HTML page) yields a short, sanitized condition and Event message, never its body.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Manager } from '../operator/src/controller/manager';
import { registerExternalParts, type ExternalClients } from '../operator/src/controller/parts';
import {
  apis,
  condition,
  createNamespace,
  createPipeline,
  deleteNamespace,
  getPipeline,
  pipeline,
  startManager,
  waitFor,
} from './operator-harness';
import { readTestBed } from './env/testbed';

const bed = readTestBed();
const BODY = `<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>${'proxy error '.repeat(2000)}</body></html>`;
let server: http.Server;
let namespace: string;
let manager: Manager;
let external: ExternalClients;

beforeAll(async () => {
  server = http.createServer((_req, res) => {
    res.writeHead(502, { 'content-type': 'text/html' });
    res.end(BODY);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  namespace = await createNamespace('hygiene');
  manager = startManager(namespace);
  external = registerExternalParts(manager);
});

afterAll(async () => {
  await manager.stop();
  await external.close();
  await deleteNamespace(namespace);
  await new Promise((resolve) => server.close(resolve));
});

it('reports a foreign HTML answer as a short first-line message without the body', async () => {
  const port = (server.address() as AddressInfo).port;
  await createPipeline({
    ...pipeline(namespace, 'proxied'),
    spec: {
      kafka: { bootstrapServers: [bed.kafka!.bootstrap], topic: { name: 'hygiene.proxied', partitions: 1 } },
      clickhouse: { url: `http://127.0.0.1:${port}`, database: 'hygiene', table: 'proxied' },
    } as never,
  });
  const lp = await waitFor(
    'TableReady False',
    async () => {
      const p = await getPipeline(namespace, 'proxied');
      return condition(p, 'TableReady')?.status === 'False' ? p : undefined;
    },
    60_000,
  );
  const message = condition(lp, 'TableReady')!.message;
  expect([...message].length).toBeLessThanOrEqual(256);
  expect(message).not.toMatch(/<|proxy error proxy error/);
  expect(message).toContain('[markup body omitted]');
  expect(condition(lp, 'Ready')!.message).toBe(message);
  const events = await waitFor('a TableReady event', async () => {
    const list = await apis().core.listNamespacedEvent({ namespace });
    return list.items.some((e) => e.message?.startsWith('TableReady is False')) ? list.items : undefined;
  });
  for (const e of events) {
    expect(e.message ?? '').not.toMatch(/<html|proxy error proxy error/i);
    expect((e.message ?? '').length).toBeLessThanOrEqual(1024);
  }
});
