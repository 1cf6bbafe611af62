/**
 * A Time Stamping Authority on loopback for tests: a throw-away CA and a TSA certificate
 * (extendedKeyUsage critical timeStamping) made with the openssl CLI in a temp directory, and an
 * HTTP server answering RFC 3161 requests (POST application/timestamp-query) with
 * `openssl ts -reply`. Real OpenSSL tokens, no external network.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
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
  /** Requests answered so far. */
  requests(): number;
  close(): Promise<void>;
}

/** Options: key algorithm of CA and TSA (default rsa), certificate subject prefix. */
export interface TsaOptions {
  keyType?: 'rsa' | 'ec';
  name?: string;
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
  let queue: Promise<unknown> = Promise.resolve();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
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
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/tsa`,
    dir,
    caCertPem: fs.readFileSync(path.join(dir, 'ca.crt'), 'utf8'),
    caCertFile: path.join(dir, 'ca.crt'),
    tsaCertPem: fs.readFileSync(path.join(dir, 'tsa.crt'), 'utf8'),
    requests: () => count,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
