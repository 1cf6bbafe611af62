/**
 * `logpipeline seal` against the real ClickHouse engine and the loopback TSA (real OpenSSL tokens):
 * a past day is sealed (export, manifest, Ed25519 signature, RFC 3161 token, row in fw_seals), the
 * auditor's procedure from docs/compliance.md is run verbatim with openssl, gzip and sha256sum, and
 * every tampering — a changed byte or a removed row in the export, a changed manifest, rows changed
 * in ClickHouse after sealing — fails it and `logpipeline verify --seal` / `seal export`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { ClickHouseClient } from '@clickhouse/client';
import { IntegrityRecorder, tsaAuthFromEnv } from '../consumer/src/integrity';
import { runSeal } from '../operator/cli/seal';
import { runVerify } from '../operator/cli/verify';
import type { SealManifest } from '../operator/src/compliance/seal-manifest';
import { bedClient, clickhouseBed, CompliancePipeline, type BatchPlan } from './compliance-fixture';
import { startTsa, type TsaServer } from './env/tsa';
import { audit as runAudit } from './seal-audit';

const DAY = 86_400_000;
const RUN = `${process.pid}_${Date.now() % 1e6}`;
/** Day-aligned base three days ago: batches 0-1 of each partition on day 0, 2-3 on day 1. */
const BASE = Math.floor((Date.now() - 3 * DAY) / DAY) * DAY;
const DAY0 = new Date(BASE).toISOString().slice(0, 10);
const DAY1 = new Date(BASE + DAY).toISOString().slice(0, 10);
const TODAY = new Date().toISOString().slice(0, 10);
const creds = { username: 'sealer', password: 'Tsa-Pa55-word' };

let client: ClickHouseClient;
let tsa: TsaServer;
let lockedTsa: TsaServer;
let dir: string;
let p: CompliancePipeline;
let keyFile: string;
let pubFile: string;

const plan = (partition: number, i: number): BatchPlan => ({
  partition,
  first: i * 10,
  last: i * 10 + 9,
  tsMs: BASE + Math.floor(i / 2) * DAY + (i % 2) * 3_600_000 + partition * 1000,
});

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const bed = clickhouseBed();
  return {
    CLICKHOUSE_URL: bed.url,
    CLICKHOUSE_USER: bed.username,
    CLICKHOUSE_PASSWORD: bed.password,
    ...extra,
  };
}

async function cli(
  run: (argv: string[], out: Writable, env: NodeJS.ProcessEnv) => Promise<number>,
  argv: string[],
  extraEnv: Record<string, string> = {},
): Promise<{ code: number; text: string }> {
  const chunks: Buffer[] = [];
  const out = new Writable({ write: (c: Buffer, _e, cb) => (chunks.push(c), cb()) });
  const code = await run(argv, out, env(extraEnv));
  return { code, text: Buffer.concat(chunks).toString() };
}

const seal = (argv: string[], extraEnv?: Record<string, string>) => cli(runSeal, argv, extraEnv);
const base = () => ['--database', p.database, '--table', 'fw'];

/** Runs the documented procedure in `sealDir` for table-day `s` (this pipeline's key, the open TSA's CA). */
function audit(sealDir: string, s: string): { code: number; out: string } {
  return runAudit(sealDir, s, pubFile, tsa.caCertFile);
}

function copySeal(from: string, name: string): string {
  const to = path.join(dir, name);
  fs.cpSync(from, to, { recursive: true });
  return to;
}

beforeAll(async () => {
  client = bedClient();
  [tsa, lockedTsa] = await Promise.all([
    startTsa(),
    startTsa({ name: 'locked', mtls: true, basicAuth: creds }),
  ]);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'seal-'));
  p = new CompliancePipeline(client, `seal_${RUN}`);
  await p.create();
  const rec = p.recorder(tsa.url);
  await rec.assign([0, 1]);
  for (let i = 0; i < 4; i++) {
    for (const part of [0, 1]) await p.insertBatch(rec, plan(part, i));
    if (i % 2 === 1) expect(await rec.checkpointNow()).toMatchObject({ heads: 2, timestamped: true });
  }
  await rec.stop();
  keyFile = path.join(dir, 'ed25519.pem');
  pubFile = path.join(dir, 'ed25519.pub.pem');
  fs.writeFileSync(keyFile, p.keys.privateKey.export({ type: 'pkcs8', format: 'pem' }));
  fs.writeFileSync(pubFile, p.publicKeyPem);
}, 120_000);

afterAll(async () => {
  await client?.command({ query: `DROP DATABASE IF EXISTS \`seal_${RUN}\`` });
  await client?.close();
  await Promise.all([tsa?.close(), lockedTsa?.close()]);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a past day is sealed, stored in fw_seals, and verifies with openssl and sha256sum alone', async () => {
  const out = path.join(dir, 'day0');
  const first = await seal([
    ...base(),
    '--date',
    DAY0,
    '--signing-key',
    keyFile,
    '--tsa-url',
    tsa.url,
    '--out',
    out,
  ]);
  expect(first.text).toContain(`sealed: fw ${DAY0}, 80 rows`);
  expect(first.code).toBe(0);
  const s = `fw-${DAY0}`;
  expect(fs.readdirSync(out).sort()).toEqual(
    [`${s}.manifest.json`, `${s}.manifest.sig`, `${s}.manifest.tst`, `${s}.tsv.gz`].sort(),
  );
  const manifest = JSON.parse(fs.readFileSync(path.join(out, `${s}.manifest.json`), 'utf8')) as SealManifest;
  expect(manifest).toMatchObject({ type: 'logpipeline-seal', day: DAY0, pipeline: 'isp/fw', table: 'fw' });
  expect(manifest.export.rows).toBe(80);
  expect(manifest.chain.links).toBe(4);
  expect(manifest.chain.heads.map((h) => [h.partition, h.first_offset, h.last_offset])).toEqual([
    [0, 0, 19],
    [1, 0, 19],
  ]);
  // The checkpoint after batch 1 (written now, after the day) pins the day's last links.
  expect(manifest.checkpoints.length).toBeGreaterThanOrEqual(1);
  expect(manifest.retention.delete_after_ms).toBe(730 * DAY);
  const lines = gunzipSync(fs.readFileSync(path.join(out, `${s}.tsv.gz`)))
    .toString()
    .split('\n');
  expect(lines[0]).toMatch(/^0\t0\t\d+\t/);
  expect(lines.at(-1)).toBe('');

  const audited = audit(out, s);
  expect(audited.out).toContain('Verification: OK');
  expect(audited.out).toContain('Signature Verified Successfully');
  expect(audited.out).toContain(`seal ${s}: OK`);
  expect(audited.code).toBe(0);
  const v = await cli(runVerify, ['--seal', out, '--public-key', pubFile, '--tsa-ca', tsa.caCertFile]);
  expect(v.text).toContain(`OK: seal of ${p.database}.fw ${DAY0}: 80 rows`);
  expect(v.code).toBe(0);

  // Idempotent: sealing again does nothing; one row in fw_seals.
  const again = await seal([...base(), '--date', DAY0, '--signing-key', keyFile, '--tsa-url', tsa.url]);
  expect(again.text).toContain('already sealed (nothing done)');
  expect(again.code).toBe(0);
  const stored = await client.query({
    query: `SELECT count() AS n, any(export_sha256) AS h FROM \`${p.database}\`.fw_seals WHERE day = '${DAY0}'`,
    format: 'JSONEachRow',
  });
  const [row] = await stored.json<{ n: string; h: string }>();
  expect([Number(row.n), row.h]).toEqual([1, manifest.export.sha256]);

  // Exported later: the same bytes (deterministic export), so the same procedure passes.
  const exported = path.join(dir, 'day0-export');
  const ex = await seal(['export', ...base(), '--date', DAY0, '--out', exported]);
  expect(ex.code).toBe(0);
  for (const f of fs.readdirSync(out))
    expect(fs.readFileSync(path.join(exported, f)).equals(fs.readFileSync(path.join(out, f)))).toBe(true);
}, 120_000);

test('a day not yet complete is refused, and a TSA failure fails the seal', async () => {
  const today = await seal([...base(), '--date', TODAY, '--signing-key', keyFile, '--tsa-url', tsa.url]);
  expect(today.text).toContain('is not complete');
  expect(today.code).toBe(3);
  const locked = await seal([
    ...base(),
    '--date',
    DAY1,
    '--signing-key',
    keyFile,
    '--tsa-url',
    lockedTsa.url,
    '--out',
    path.join(dir, 'refused'),
  ]);
  expect(locked.text).toMatch(/TSA https:\/\/127\.0\.0\.1:\d+\/tsa: /);
  expect(locked.code).toBe(3);
  // No half seal on disk: the export was removed with the failed seal.
  expect(fs.readdirSync(path.join(dir, 'refused'))).toEqual([]);
  const none = await client.query({
    query: `SELECT count() AS n FROM \`${p.database}\`.fw_seals WHERE day = '${DAY1}'`,
    format: 'JSONEachRow',
  });
  expect(Number((await none.json<{ n: string }>())[0].n)).toBe(0);
}, 60_000);

test('a TSA requiring basic auth and a client certificate timestamps the seal; the password never shows', async () => {
  const files = {
    cert: path.join(dir, 'client.crt'),
    key: path.join(dir, 'client.key'),
    ca: path.join(dir, 'server-ca.crt'),
  };
  fs.writeFileSync(files.cert, lockedTsa.clientCertPem!);
  fs.writeFileSync(files.key, lockedTsa.clientKeyPem!);
  fs.writeFileSync(files.ca, lockedTsa.caCertPem);
  const tls = ['--tsa-client-cert', files.cert, '--tsa-client-key', files.key, '--tsa-server-ca', files.ca];
  const args = [...base(), '--date', DAY1, '--signing-key', keyFile, '--tsa-url', lockedTsa.url];
  const wrong = await seal([...args, '--tsa-username', creds.username, ...tls], { TSA_PASSWORD: 'not-it' });
  expect(wrong.text).toContain('TSA refused the credentials (HTTP 401)');
  expect(wrong.text).not.toContain('not-it');
  expect(wrong.code).toBe(3);
  const out = path.join(dir, 'day1');
  const ok = await seal([...args, '--tsa-username', creds.username, ...tls, '--out', out], {
    TSA_PASSWORD: creds.password,
  });
  expect(ok.text).not.toContain(creds.password);
  expect(ok.code).toBe(0);
  const v = await cli(runVerify, ['--seal', out, '--public-key', pubFile, '--tsa-ca', lockedTsa.caCertFile]);
  expect(v.code).toBe(0);
}, 60_000);

test('a tampered export or manifest fails the auditor procedure and verify --seal', async () => {
  const s = `fw-${DAY0}`;
  const pristine = path.join(dir, 'day0');
  const gz = (d: string) => path.join(d, `${s}.tsv.gz`);
  const rows = gunzipSync(fs.readFileSync(gz(pristine)));
  const verifySeal = (d: string) =>
    cli(runVerify, ['--seal', d, '--public-key', pubFile, '--tsa-ca', tsa.caCertFile]);

  // One byte of one row changed (an action 'deny' -> 'denz'), recompressed.
  const changed = copySeal(pristine, 'byte');
  const at = rows.indexOf('deny');
  expect(at).toBeGreaterThan(0);
  const flipped = Buffer.from(rows);
  flipped[at + 3] = 'z'.charCodeAt(0);
  fs.writeFileSync(gz(changed), gzipSync(flipped));
  const a1 = audit(changed, s);
  expect(a1.out).toContain('Verification: OK'); // the manifest itself is intact…
  expect(a1.out).not.toContain(`seal ${s}: OK`); // …but the export's hash no longer matches it
  expect(a1.code).not.toBe(0);
  const v1 = await verifySeal(changed);
  expect(v1.text).toMatch(/finding: export SHA-256 [0-9a-f]{64} differs from the manifest's/);
  expect(v1.code).toBe(1);

  // One row removed.
  const removed = copySeal(pristine, 'row');
  const lines = rows.toString().split('\n');
  lines.splice(7, 1);
  fs.writeFileSync(gz(removed), gzipSync(lines.join('\n')));
  const a2 = audit(removed, s);
  expect(a2.code).not.toBe(0);
  expect(a2.out).not.toContain(`seal ${s}: OK`);
  const v2 = await verifySeal(removed);
  expect(v2.text).toContain('finding: export has 79 rows, the manifest records 80');
  expect(v2.code).toBe(1);

  // The manifest edited to match the doctored export: token and signature both fail.
  const forged = copySeal(removed, 'manifest');
  const mf = path.join(forged, `${s}.manifest.json`);
  const doctoredHash = execFileSync('bash', ['-c', `gzip -dc ${s}.tsv.gz | sha256sum | cut -d' ' -f1`], {
    cwd: forged,
    encoding: 'utf8',
  }).trim();
  const m = JSON.parse(fs.readFileSync(mf, 'utf8')) as SealManifest;
  fs.writeFileSync(
    mf,
    fs.readFileSync(mf, 'utf8').replace(m.export.sha256, doctoredHash).replace('"rows":80', '"rows":79'),
  );
  const a3 = audit(forged, s);
  expect(a3.out).toContain('Verification: FAILED');
  expect(a3.code).not.toBe(0);
  const sig = spawnSync(
    'openssl',
    [
      'pkeyutl',
      '-verify',
      '-pubin',
      '-inkey',
      pubFile,
      '-rawin',
      '-in',
      mf,
      '-sigfile',
      mf.replace('.json', '.sig'),
    ],
    { encoding: 'utf8' },
  );
  expect(`${sig.stdout}${sig.stderr}`).toContain('Signature Verification Failure');
  expect(sig.status).not.toBe(0);
  const v3 = await verifySeal(forged);
  expect(v3.text).toContain('finding: Ed25519 signature over the manifest is invalid');
  expect(v3.text).toContain('finding: timestamp token: message imprint does not match');
  expect(v3.code).toBe(1);

  // Without a public key verify --seal fails unless the check is explicitly skipped.
  const noKey = await cli(runVerify, ['--seal', pristine, '--tsa-ca', tsa.caCertFile]);
  expect(noKey.code).toBe(1);
  const skipped = await cli(runVerify, [
    '--seal',
    pristine,
    '--tsa-ca',
    tsa.caCertFile,
    '--no-signature-check',
  ]);
  expect(skipped.code).toBe(0);
}, 120_000);

test('rows changed in ClickHouse after sealing: seal export reports MODIFIED', async () => {
  await client.command({
    query: `ALTER TABLE \`${p.database}\`.fw DELETE WHERE kafka_partition = 1 AND kafka_offset = 3`,
    clickhouse_settings: { mutations_sync: '1' },
  });
  const out = path.join(dir, 'day0-after');
  const ex = await seal(['export', ...base(), '--date', DAY0, '--out', out]);
  expect(ex.text).toContain(`MODIFIED: the rows of ${DAY0} in ClickHouse no longer give the sealed export`);
  expect(ex.code).toBe(1);
  // The exported files carry the stored (signed, timestamped) manifest; the procedure fails on the export.
  const audited = audit(out, `fw-${DAY0}`);
  expect(audited.out).toContain('Verification: OK');
  expect(audited.code).not.toBe(0);
}, 120_000);

test('worker checkpoints are timestamped by a TSA requiring basic auth and mTLS, credentials from LP_TSA_* env', async () => {
  const env = {
    LP_TSA_USERNAME: creds.username,
    LP_TSA_PASSWORD: creds.password,
    LP_TSA_CLIENT_CERT: lockedTsa.clientCertPem!,
    LP_TSA_CLIENT_KEY: lockedTsa.clientKeyPem!,
    LP_TSA_SERVER_CA: lockedTsa.caCertPem,
  };
  const make = (tsaEnv: NodeJS.ProcessEnv, warn?: (m: string) => void) =>
    new IntegrityRecorder({
      warn,
      client,
      target: {
        database: p.database,
        integrityTable: 'fw_integrity',
        checkpointTable: 'fw_checkpoints',
        pipeline: 'isp/fw',
        table: 'fw',
      },
      columns: p.columns,
      signingKeyPem: p.keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      checkpointIntervalMs: 3_600_000,
      tsaUrl: lockedTsa.url,
      tsaAuth: tsaAuthFromEnv(tsaEnv),
    });
  const warnings: string[] = [];
  const refused = make({ ...env, LP_TSA_PASSWORD: 'nope-Pa55' }, (m) => warnings.push(m));
  await refused.assign([0, 1]);
  await p.insertBatch(refused, { partition: 0, first: 100, last: 101, tsMs: Date.now() - 60_000 });
  expect(await refused.checkpointNow()).toMatchObject({ timestamped: false });
  expect(warnings.join('\n')).toContain('TSA refused the credentials (HTTP 401)');
  expect(warnings.join('\n')).not.toContain('nope-Pa55');
  await refused.stop();
  const rec = make(env);
  await rec.assign([0, 1]);
  await p.insertBatch(rec, { partition: 1, first: 100, last: 101, tsMs: Date.now() - 60_000 });
  expect(await rec.checkpointNow()).toMatchObject({ timestamped: true });
  await rec.stop();
}, 60_000);

test('two concurrent seals of the same day store one seal; both report it', async () => {
  const rec = p.recorder(tsa.url);
  await rec.assign([0, 1]);
  await p.insertBatch(rec, { partition: 0, first: 200, last: 204, tsMs: BASE - DAY + 5_000 });
  await rec.checkpointNow();
  await rec.stop();
  const day = new Date(BASE - DAY).toISOString().slice(0, 10);
  const args = [...base(), '--date', day, '--signing-key', keyFile, '--tsa-url', tsa.url];
  const [a, b] = await Promise.all([seal(args), seal(args)]);
  expect([a.code, b.code]).toEqual([0, 0]);
  const said = [a.text, b.text].map((t) =>
    t.startsWith('sealed:') ? 'sealed' : t.startsWith('already') ? 'already' : t,
  );
  expect(said.sort()).toEqual(['already', 'sealed']);
  const rs = await client.query({
    query: `SELECT count() AS n FROM \`${p.database}\`.fw_seals WHERE day = {d:String}`,
    query_params: { d: day },
    format: 'JSONEachRow',
  });
  expect(Number((await rs.json<{ n: string }>())[0].n)).toBe(1);
}, 60_000);
