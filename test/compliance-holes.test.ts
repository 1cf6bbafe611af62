/**
 * Holes an admin with DELETE/ALTER rights could use to make history disappear while `verify`
 * still exits 0 (issue 13), each proven against the real ClickHouse engine: a shortened TTL that
 * turns deletions into "expired" notices; rows, links and checkpoints deleted together; a deleted
 * checkpoint; verify run without a key; and a table without kafka_line whose packed messages come
 * back in another order. Batches are written the worker's way (compliance-fixture.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import type { IntegrityRecorder } from '../consumer/src/integrity';
import { runVerify } from '../operator/cli/verify';
import type { VerifyReport } from '../operator/src/compliance/verify-report';
import { bedClient, clickhouseBed, CompliancePipeline, type BatchPlan } from './compliance-fixture';
import { startTsa, type TsaServer } from './env/tsa';

const DAY = 86_400_000;
const RUN = `${process.pid}_${Date.now() % 1e6}`;
let client: ClickHouseClient;
let tsa: TsaServer;
let dir: string;

beforeAll(async () => {
  client = bedClient();
  tsa = await startTsa();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'holes-'));
}, 60_000);

afterAll(async () => {
  const dbs = await client.query({
    query: `SELECT name FROM system.databases WHERE name LIKE 'ch_${RUN}_%'`,
    format: 'JSONEachRow',
  });
  for (const { name } of await dbs.json<{ name: string }>())
    await client.command({ query: `DROP DATABASE IF EXISTS \`${name}\`` });
  await client.close();
  await tsa?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const BASE = Math.floor((Date.now() - 3 * DAY) / DAY) * DAY;
const plan = (partition: number, i: number): BatchPlan => ({
  partition,
  first: i * 10,
  last: i * 10 + 9,
  tsMs: BASE + i * 3_600_000 + partition * 1000,
});

/** Two partitions; a checkpoint after every wave of `perWave` batches per partition. */
async function waves(
  name: string,
  count: number,
  perWave = 2,
): Promise<{ p: CompliancePipeline; rec: IntegrityRecorder }> {
  const p = new CompliancePipeline(client, `ch_${RUN}_${name}`);
  await p.create();
  const rec = p.recorder(tsa.url);
  await rec.assign([0, 1]);
  for (let w = 0; w < count; w++) {
    for (let i = w * perWave; i < (w + 1) * perWave; i++)
      for (const part of [0, 1]) await p.insertBatch(rec, plan(part, i));
    expect(await rec.checkpointNow()).toMatchObject({ heads: 2 });
  }
  return { p, rec };
}

async function verify(
  p: CompliancePipeline,
  extra: string[] = [],
  withKey = true,
): Promise<{ code: number; report?: VerifyReport; text: string }> {
  const keyFile = path.join(dir, `${p.database}.pub`);
  fs.writeFileSync(keyFile, p.publicKeyPem);
  const bed = clickhouseBed();
  const chunks: Buffer[] = [];
  const out = new Writable({ write: (c: Buffer, _e, cb) => (chunks.push(c), cb()) });
  const env = { CLICKHOUSE_URL: bed.url, CLICKHOUSE_USER: bed.username, CLICKHOUSE_PASSWORD: bed.password };
  const key = withKey ? ['--public-key', keyFile] : [];
  const args = ['--database', p.database, '--table', 'fw', ...key, '--output', 'json', '--all', ...extra];
  const code = await runVerify(args, out, env);
  const text = Buffer.concat(chunks).toString();
  return { code, report: code === 2 ? undefined : (JSON.parse(text) as VerifyReport), text };
}

const kinds = (r: VerifyReport | undefined) => [...new Set(r?.findings.map((f) => f.kind))].sort();

test('a shortened TTL does not turn deleted rows younger than the signed retention into "expired"', async () => {
  const p = new CompliancePipeline(client, `ch_${RUN}_ttl`);
  await p.create();
  const rec = p.recorder(tsa.url);
  await rec.assign([0]);
  const now = Date.now();
  // Rows ten days old (inserted recently, e.g. a replayed backlog) and rows an hour old.
  await p.insertBatch(rec, {
    partition: 0,
    first: 0,
    last: 9,
    tsMs: now - 10 * DAY,
    insertedAtMs: now - 60_000,
  });
  await p.insertBatch(rec, {
    partition: 0,
    first: 10,
    last: 19,
    tsMs: now - 3_600_000,
    insertedAtMs: now - 50_000,
  });
  await rec.checkpointNow();
  // What `retention.deleteAfter: 1d` did before the guard: MODIFY TTL, then TTL removes the rows.
  await p.sql(`ALTER TABLE ${p.database}.fw MODIFY TTL ts + INTERVAL 1 DAY`);
  await p.sql(`OPTIMIZE TABLE ${p.database}.fw FINAL`);
  const [{ c }] = await p.rows<{ c: string }>(`SELECT count() AS c FROM ${p.database}.fw`);
  expect(Number(c)).toBe(20);
  const { code, report } = await verify(p);
  expect(report?.retentionMs).toBe(730 * DAY);
  expect(report?.findings.map((f) => [f.kind, f.firstOffset, f.expectedRows, f.foundRows])).toEqual([
    ['deleted', 0, 20, 0],
  ]);
  expect(code).toBe(1);
}, 120_000);

test('rows, links and checkpoints deleted inside the horizon are findings, not "expired"', async () => {
  const { p } = await waves('wave', 3);
  const times = await p.rows<{ t: string }>(
    `SELECT toString(created_at) AS t FROM ${p.database}.fw_checkpoints ORDER BY created_at`,
  );
  expect(times).toHaveLength(3);
  // The admin: everything of the first wave (offsets 0..19 of both partitions) and its checkpoint.
  await p.sql(`DELETE FROM ${p.database}.fw WHERE kafka_offset < 20`);
  await p.sql(`ALTER TABLE ${p.database}.fw_integrity DELETE WHERE first_offset < 20`);
  await p.sql(`ALTER TABLE ${p.database}.fw_checkpoints DELETE WHERE created_at <= '${times[0].t}'`);
  const { code, report } = await verify(p);
  expect(report?.findings.map((f) => [f.kind, f.partition, f.firstOffset])).toEqual([
    ['checkpoint-missing', undefined, undefined],
    ['history-deleted', 0, 20],
    ['history-deleted', 1, 20],
  ]);
  expect(report?.notices.filter((n) => n.kind === 'expired')).toEqual([]);
  expect(code).toBe(1);
}, 120_000);

test('a deleted checkpoint is detected by its successor', async () => {
  const { p } = await waves('cpdel', 3, 1);
  const times = await p.rows<{ t: string }>(
    `SELECT toString(created_at) AS t FROM ${p.database}.fw_checkpoints ORDER BY created_at`,
  );
  await p.sql(`ALTER TABLE ${p.database}.fw_checkpoints DELETE WHERE created_at = '${times[1].t}'`);
  const { code, report } = await verify(p);
  expect(report?.findings.map((f) => [f.kind, f.checkpointAtMs !== undefined])).toEqual([
    ['checkpoint-missing', true],
  ]);
  expect(code).toBe(1);
}, 120_000);

test('verify without --public-key fails unless --no-signature-check is given', async () => {
  const { p } = await waves('nokey', 1);
  const bare = await verify(p, [], false);
  expect(bare.text).toMatch(/no --public-key/);
  expect(bare.code).toBe(2);
  const unsigned = await verify(p, ['--no-signature-check'], false);
  expect(unsigned.report?.findings).toEqual([]);
  expect(unsigned.code).toBe(0);
}, 120_000);

test('a table without kafka_line: rows of a packed message verify in any stored order', async () => {
  const p = new CompliancePipeline(client, `ch_${RUN}_noline`);
  await p.create();
  await p.sql(`ALTER TABLE ${p.database}.fw DROP COLUMN kafka_line`);
  const at = p.columns.findIndex((c) => c.name === 'kafka_line');
  const columns = p.columns.filter((c) => c.name !== 'kafka_line');
  const rec = p.recorder(tsa.url, undefined, columns);
  await rec.assign([0]);
  for (let i = 0; i < 3; i++) {
    // Eight lines per message; the table's sorting key (src_ip, ts) stores them in another order.
    const b = { ...plan(0, i), linesPerMessage: 8 };
    const tsv = p
      .payload(b)
      .toString()
      .split('\n')
      .filter((l) => l !== '')
      .map(
        (l) =>
          l
            .split('\t')
            .filter((_, k) => k !== at)
            .join('\t') + '\n',
      )
      .join('');
    await p.insertPayload(rec, b, Buffer.from(tsv), columns);
  }
  await rec.checkpointNow();
  const clean = await verify(p);
  expect(clean.report?.findings).toEqual([]);
  expect(clean.report?.stats.batchesVerified).toBe(3);
  expect(clean.code).toBe(0);
  // Still order- and value-sensitive where it matters: one altered row is one modified batch.
  await p.sql(
    `ALTER TABLE ${p.database}.fw UPDATE dst_port = 4444 WHERE kafka_offset = 13 AND src_ip = src_ip`,
  );
  const tampered = await verify(p);
  expect(kinds(tampered.report)).toEqual(['modified']);
}, 120_000);
