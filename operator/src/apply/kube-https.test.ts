import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from './kube-lib';
import { createKubeClient, isStatus } from './kube-rest';

/** A self-signed certificate for 127.0.0.1 (openssl, as the test bed makes its PKI). */
function selfSigned(): { key: Buffer; cert: Buffer } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kube-https-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'k.pem',
      '-out',
      'c.pem',
      '-days',
      '1',
    ].concat(['-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1']),
    { cwd: dir, stdio: 'ignore' },
  );
  const out = {
    key: fs.readFileSync(path.join(dir, 'k.pem')),
    cert: fs.readFileSync(path.join(dir, 'c.pem')),
  };
  fs.rmSync(dir, { recursive: true, force: true });
  return out;
}

interface Seen {
  method: string;
  url: string;
  auth?: string;
  type?: string;
  body: string;
}

describe('kube client over node:https (issue 18)', () => {
  const tls = selfSigned();
  const seen: Seen[] = [];
  let connections = 0;
  let token = 't1';
  let server: https.Server;
  let kc: KubeConfig;

  beforeAll(async () => {
    const used = new WeakSet<object>();
    let dropped = false;
    server = https.createServer(tls, (req, res) => {
      // A kept-alive socket closed under a request once (as a server closing an idle connection).
      if (req.url === '/drop' && used.has(req.socket) && !dropped) {
        dropped = true;
        req.socket.destroy();
        return;
      }
      used.add(req.socket);
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({
          method: req.method!,
          url: req.url!,
          auth: req.headers.authorization,
          type: req.headers['content-type'],
          body,
        });
        res.setHeader('content-type', 'application/json');
        if (req.headers.authorization !== `Bearer ${token}`) {
          res.statusCode = 401;
          res.end(JSON.stringify({ kind: 'Status', reason: 'Unauthorized', message: 'Unauthorized' }));
        } else if (req.url!.startsWith('/api/v1/namespaces/ns/configmaps/missing')) {
          res.statusCode = 404;
          res.end(
            JSON.stringify({ kind: 'Status', reason: 'NotFound', message: 'configmaps "missing" not found' }),
          );
        } else res.end(JSON.stringify({ ok: true, echo: body ? JSON.parse(body) : null }));
      });
    });
    server.on('connection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caData: tls.cert.toString('base64') }],
      users: [{ name: 'u', token: 't1' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
  });

  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it('sends method, query, body and content type, answers parsed JSON, on one kept-alive connection', async () => {
    const client = createKubeClient(kc);
    const before = connections;
    const a = await client.request<{ echo: unknown }>('PATCH', '/api/v1/namespaces/ns/configmaps/cm', {
      body: { data: { k: 'v' } },
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: 'logpipeline-operator', force: true, dryRun: undefined },
    });
    expect(a.echo).toEqual({ data: { k: 'v' } });
    await client.request('GET', '/api/v1/namespaces/ns/configmaps/cm');
    await client.request('GET', '/api/v1/namespaces/ns/configmaps/cm');
    expect(seen.slice(-3).map((s) => [s.method, s.url, s.auth, s.type])).toEqual([
      [
        'PATCH',
        '/api/v1/namespaces/ns/configmaps/cm?fieldManager=logpipeline-operator&force=true',
        'Bearer t1',
        'application/apply-patch+yaml',
      ],
      ['GET', '/api/v1/namespaces/ns/configmaps/cm', 'Bearer t1', undefined],
      ['GET', '/api/v1/namespaces/ns/configmaps/cm', 'Bearer t1', undefined],
    ]);
    expect(connections - before).toBe(1);
  });

  it('sends a request again on a new connection when the kept-alive one was closed under it', async () => {
    const client = createKubeClient(kc);
    await client.request('GET', '/api/v1/namespaces/ns/configmaps/cm');
    const before = connections;
    await expect(client.request('POST', '/drop', { body: { n: 1 } })).resolves.toMatchObject({ ok: true });
    expect(connections - before).toBe(1);
    expect(seen.filter((s) => s.url === '/drop').map((s) => s.body)).toEqual(['{"n":1}']);
  });

  it('maps error answers to KubeApiError and retries once with fresh credentials after a 401', async () => {
    const client = createKubeClient(kc);
    const err = await client
      .request('GET', '/api/v1/namespaces/ns/configmaps/missing')
      .catch((e: Error) => e);
    expect(isStatus(err, 404)).toBe(true);
    expect((err as Error).message).toContain('configmaps "missing" not found');
    // The token is rotated: the first request with the old one gets 401, the retry reads the new one.
    token = 't2';
    (kc.users[0] as { token?: string }).token = 't2';
    const n = seen.length;
    await client.request('GET', '/api/v1/namespaces/ns/configmaps/cm');
    expect(seen.slice(n).map((s) => s.auth)).toEqual(['Bearer t1', 'Bearer t2']);
  });
});
