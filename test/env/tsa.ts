/**
 * A Time Stamping Authority on loopback for tests: a throw-away CA and a TSA certificate
 * (extendedKeyUsage critical timeStamping) made with the openssl CLI in a temp directory, and an
 * HTTP server answering RFC 3161 requests (POST application/timestamp-query) with
 * `openssl ts -reply`. Real OpenSSL tokens, no external network.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A running TSA. */
export interface TsaServer {
  /** POST endpoint. */
  url: string;
  dir: string;
  /** PEM of the CA that issued the TSA certificate (what verifiers trust). */
  caCertPem: string;
  caCertFile: string;
  tsaCertPem: string;
  /** Requests answered so far (refused ones included). */
  requests(): number;
  /** Requests refused for missing or wrong credentials. */
  refused(): number;
  /** With `mtls`: a client certificate and key the TSA accepts (PEM, issued by the same CA). */
  clientCertPem?: string;
  clientKeyPem?: string;
  close(): Promise<void>;
}

/**
 * Options: key algorithm of CA and TSA (default rsa), certificate subject prefix, and the access
 * control of TSAs that are not open: HTTP basic auth, and/or HTTPS requiring a client certificate.
 */
export interface TsaOptions {
  keyType?: 'rsa' | 'ec';
  name?: string;
  basicAuth?: { username: string; password: string };
  /** Serve HTTPS (server certificate for 127.0.0.1 from the test CA) and require a client certificate. */
  mtls?: boolean;
  /** Answer each request only after this long (a slow TSA). */
  delayMs?: number;
}

async function openssl(dir: string, args: string[]): Promise<void> {
  await run('openssl', args, { cwd: dir });
}

function keyArgs(keyType: 'rsa' | 'ec'): string[] {
  return keyType === 'rsa'
    ? ['-newkey', 'rsa:2048']
    : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'];
}

/** Creates ca.crt/ca.key and tsa.crt/tsa.key (signed by the CA) plus the `openssl ts` config in `dir`. */
export async function makeTsaCertificates(dir: string, opts: TsaOptions = {}): Promise<void> {
  const keyType = opts.keyType ?? 'rsa';
  const name = opts.name ?? 'logpipeline test';
  await openssl(dir, [
    'req',
    '-x509',
    ...keyArgs(keyType),
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '3650',
    '-subj',
    `/CN=${name} TSA CA`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  await openssl(dir, [
    'req',
    ...keyArgs(keyType),
    '-nodes',
    '-keyout',
    'tsa.key',
    '-out',
    'tsa.csr',
    '-subj',
    `/CN=${name} TSA`,
  ]);
  fs.writeFileSync(
    path.join(dir, 'tsa-ext.cnf'),
    'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,nonRepudiation\nextendedKeyUsage=critical,timeStamping\n' +
      'subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n',
  );
  await openssl(dir, [
    'x509',
    '-req',
    '-in',
    'tsa.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'tsa.crt',
    '-days',
    '825',
    '-extfile',
    'tsa-ext.cnf',
  ]);
  fs.writeFileSync(path.join(dir, 'serial'), '01\n');
  fs.writeFileSync(
    path.join(dir, 'ts.cnf'),
    [
      '[ tsa ]',
      'default_tsa = tsa_config',
      '[ tsa_config ]',
      `dir = ${dir}`,
      'serial = $dir/serial',
      'crypto_device = builtin',
      'signer_cert = $dir/tsa.crt',
      'certs = $dir/ca.crt',
      'signer_key = $dir/tsa.key',
      'signer_digest = sha256',
      'default_policy = 1.3.6.1.4.1.99999.1',
      'digests = sha256, sha384, sha512',
      'accuracy = secs:1',
      'ordering = no',
      'tsa_name = no',
      'ess_cert_id_chain = no',
      'ess_cert_id_alg = sha256',
      '',
    ].join('\n'),
  );
}

/** Issues `<name>.crt`/`<name>.key` from the test CA with the given extended key usage (and IP SAN). */
async function issueTlsCertificate(dir: string, name: string, usage: string, san?: string): Promise<void> {
  await openssl(
    dir,
    ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'].concat([
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      `/CN=${name}`,
    ]),
  );
  fs.writeFileSync(
    path.join(dir, `${name}-ext.cnf`),
    `basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=${usage}\n` +
      (san ? `subjectAltName=${san}\n` : ''),
  );
  await openssl(
    dir,
    ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key'].concat([
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '30',
      '-extfile',
      `${name}-ext.cnf`,
    ]),
  );
}

/** True when the request carries the expected basic credentials (or none are required). */
function authorized(req: http.IncomingMessage, basic: TsaOptions['basicAuth']): boolean {
  if (!basic) return true;
  const expected = `Basic ${Buffer.from(`${basic.username}:${basic.password}`).toString('base64')}`;
  return req.headers.authorization === expected;
}

/** Answers one request body with `openssl ts -reply`; requests are serialised (shared serial file). */
async function reply(dir: string, body: Buffer, seq: number): Promise<Buffer> {
  const req = path.join(dir, `req-${seq}.tsq`);
  const out = path.join(dir, `resp-${seq}.tsr`);
  fs.writeFileSync(req, body);
  try {
    await openssl(dir, ['ts', '-reply', '-config', path.join(dir, 'ts.cnf'), '-queryfile', req, '-out', out]);
    return fs.readFileSync(out);
  } finally {
    fs.rmSync(req, { force: true });
    fs.rmSync(out, { force: true });
  }
}

/** Starts a TSA on 127.0.0.1 with fresh certificates in a temp directory. */
export async function startTsa(opts: TsaOptions = {}): Promise<TsaServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'logpipeline-tsa-'));
  await makeTsaCertificates(dir, opts);
  let count = 0;
  let refused = 0;
  let queue: Promise<unknown> = Promise.resolve();
  const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const tlsRefused = opts.mtls && !(req.socket as TLSSocket).authorized;
      if (tlsRefused || !authorized(req, opts.basicAuth)) {
        count++;
        refused++;
        res.writeHead(401, { 'www-authenticate': 'Basic realm="tsa"' }).end();
        return;
      }
      if (req.method !== 'POST' || req.headers['content-type'] !== 'application/timestamp-query') {
        res.writeHead(400).end();
        return;
      }
      const seq = ++count;
      const slow = new Promise((r) => setTimeout(r, opts.delayMs ?? 0));
      const turn = Promise.all([queue, slow]).then(() => reply(dir, Buffer.concat(chunks), seq));
      queue = turn.catch(() => undefined);
      turn.then(
        (body) => res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(body),
        (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(err.message),
      );
    });
  };
  let server: http.Server;
  if (opts.mtls) {
    await issueTlsCertificate(dir, 'server', 'serverAuth', 'IP:127.0.0.1');
    await issueTlsCertificate(dir, 'client', 'clientAuth');
    const read = (f: string) => fs.readFileSync(path.join(dir, f));
    server = https.createServer(
      // rejectUnauthorized false: a client without a certificate from the CA gets a 401 (checked in
      // the handler) rather than a bare TLS abort, so tests can tell the refusal apart.
      {
        key: read('server.key'),
        cert: read('server.crt'),
        ca: read('ca.crt'),
        requestCert: true,
        rejectUnauthorized: false,
      },
      handler,
    );
  } else {
    server = http.createServer(handler);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `${opts.mtls ? 'https' : 'http'}://127.0.0.1:${port}/tsa`,
    clientCertPem: opts.mtls ? fs.readFileSync(path.join(dir, 'client.crt'), 'utf8') : undefined,
    clientKeyPem: opts.mtls ? fs.readFileSync(path.join(dir, 'client.key'), 'utf8') : undefined,
    dir,
    caCertPem: fs.readFileSync(path.join(dir, 'ca.crt'), 'utf8'),
    caCertFile: path.join(dir, 'ca.crt'),
    tsaCertPem: fs.readFileSync(path.join(dir, 'tsa.crt'), 'utf8'),
    requests: () => count,
    refused: () => refused,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
