/**
 * `logpipeline verify` against the real ClickHouse engine: batches written the worker's way (TSV
 * sealed by the integrity library, inserted with the batch token, link inserted after), signed and
 * RFC 3161-timestamped checkpoints from a loopback TSA, then each kind of tampering — UPDATE of a
 * row, DELETE of rows, forged rows, a dropped partition, an altered link, a consistently rewritten
 * chain, a foreign-key checkpoint, forged/mismatched timestamp tokens — must be reported with the
 * exact batch range, while rows removed by TTL are reported as expired, not tampered.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { digestTsv } from '../common/src/integrity/canonical';
import { computeLink, type LinkRecord } from '../common/src/integrity/chain';
import type { IntegrityRecorder } from '../consumer/src/integrity';
import type { Finding } from '../operator/src/compliance/verify-report';
import { bedClient, CompliancePipeline, verifyJson, type BatchPlan } from './compliance-fixture';
import { startTsa, type TsaServer } from './env/tsa';

const DAY = 86_400_000;
const RUN = `${process.pid}_${Date.now() % 1e6}`;
let client: ClickHouseClient;
let tsa: TsaServer;
let otherTsa: TsaServer;
let dir: string;

beforeAll(async () => {
  client = bedClient();
  [tsa, otherTsa] = await Promise.all([startTsa(), startTsa({ keyType: 'ec', name: 'rogue' })]);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'compliance-'));
}, 60_000);

afterAll(async () => {
  const dbs = await client.query({
    query: `SELECT name FROM system.databases WHERE name LIKE 'cv_${RUN}_%'`,
    format: 'JSONEachRow',
  });
  for (const { name } of await dbs.json<{ name: string }>())
    await client.command({ query: `DROP DATABASE IF EXISTS \`${name}\`` });
  await client.close();
  await Promise.all([tsa?.close(), otherTsa?.close()]);
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Day-aligned base three days ago: batches 0-1 of each partition on day 0, 2-3 on day 1. */
const BASE = Math.floor((Date.now() - 3 * DAY) / DAY) * DAY;
const plan = (partition: number, i: number): BatchPlan => ({
  partition,
  first: i * 10,
  last: i * 10 + 9,
  tsMs: BASE + Math.floor(i / 2) * DAY + (i % 2) * 3_600_000 + partition * 1000,
});

/** A pipeline with 2 partitions x 4 batches x 20 rows, a checkpoint after batch 1 and one at the end. */
async function pristine(
  name: string,
): Promise<{ p: CompliancePipeline; rec: IntegrityRecorder; links: Map<string, LinkRecord> }> {
  const p = new CompliancePipeline(client, `cv_${RUN}_${name}`);
  await p.create();
  const rec = p.recorder(tsa.url);
  await rec.assign([0, 1]);
  const links = new Map<string, LinkRecord>();
  for (let i = 0; i < 4; i++) {
    for (const part of [0, 1]) {
      const sealed = await p.insertBatch(rec, plan(part, i));
      links.set(`${part}/${i}`, sealed.record!);
    }
    if (i === 1) expect(await rec.checkpointNow()).toMatchObject({ heads: 2, timestamped: true });
  }
  expect(await rec.checkpointNow()).toMatchObject({ heads: 2, timestamped: true });
  return { p, rec, links };
}

/** verify with the test TSA's CA; `--all` unless a range is asked. */
function verify(p: CompliancePipeline, extra: string[] = []) {
  const range = extra.includes('--from') ? [] : ['--all'];
  return verifyJson(p, dir, ['--tsa-ca', tsa.caCertFile, ...extra, ...range]);
}

const brief = (fs: Finding[]) =>
  fs.map((f) => ({
    kind: f.kind,
    partition: f.partition,
    firstOffset: f.firstOffset,
    lastOffset: f.lastOffset,
  }));

test('intact data verifies clean: every batch, link, signature and timestamp', async () => {
  const { p } = await pristine('intact');
  const { code, report } = await verify(p);
  expect(report.findings).toEqual([]);
  expect(code).toBe(0);
  expect(report.stats).toMatchObject({
    rowsRead: 160,
    links: 8,
    batchesVerified: 8,
    checkpoints: 2,
    checkpointsVerified: 2,
    timestampsVerified: 2,
  });
  expect(report.stats.rowsPerSecond).toBeGreaterThan(0);
  expect(report.retentionMs).toBe(730 * DAY);
  // A window verifies only the batches it touches (widened to whole batches): day 1 = batches 2 and 3.
  const day1 = await verify(p, [
    '--from',
    new Date(BASE + DAY).toISOString(),
    '--to',
    new Date(BASE + 2 * DAY - 1).toISOString(),
  ]);
  expect(day1.code).toBe(0);
  expect(day1.report.stats).toMatchObject({ rowsRead: 80, links: 4, batchesVerified: 4 });
}, 120_000);

test('a restarted worker continues the chain from ClickHouse, and a replayed batch reuses its link', async () => {
  const { p, links } = await pristine('restart');
  const next = p.recorder(tsa.url);
  await next.assign([0, 1]);
  const replay = await p.insertBatch(next, plan(0, 3));
  expect(replay.status).toBe('replayed');
  expect(replay.record).toEqual(links.get('0/3'));
  const fresh = await p.insertBatch(next, plan(0, 4));
  expect(fresh.status).toBe('new');
  expect(fresh.record?.prevLink).toBe(links.get('0/3')?.link);
  const [{ c }] = await p.rows<{ c: string }>(`SELECT count() AS c FROM ${p.database}.fw_integrity`);
  expect(Number(c)).toBe(9);
  const { code, report } = await verify(p);
  expect(report.findings).toEqual([]);
  expect(code).toBe(0);
  expect(report.stats.batchesVerified).toBe(9);
}, 120_000);

test('ALTER TABLE UPDATE of one row is reported as the modified batch', async () => {
  const { p } = await pristine('update');
  await p.sql(
    `ALTER TABLE ${p.database}.fw UPDATE dst_port = 4444 WHERE kafka_partition = 1 AND kafka_offset = 23 AND kafka_line = 1`,
  );
  const { code, report } = await verify(p);
  expect(code).toBe(1);
  expect(brief(report.findings)).toEqual([
    { kind: 'modified', partition: 1, firstOffset: 20, lastOffset: 29 },
  ]);
  expect(report.stats.batchesVerified).toBe(7);
}, 120_000);

test('deleted rows (lightweight DELETE and ALTER DELETE) are reported per batch', async () => {
  const { p } = await pristine('delete');
  await p.sql(`DELETE FROM ${p.database}.fw WHERE kafka_partition = 0 AND kafka_offset BETWEEN 5 AND 12`);
  await p.sql(`ALTER TABLE ${p.database}.fw DELETE WHERE kafka_partition = 1 AND kafka_offset >= 30`);
  const { report } = await verify(p);
  expect(brief(report.findings)).toEqual([
    { kind: 'deleted', partition: 0, firstOffset: 0, lastOffset: 9 },
    { kind: 'deleted', partition: 0, firstOffset: 10, lastOffset: 19 },
    { kind: 'deleted', partition: 1, firstOffset: 30, lastOffset: 39 },
  ]);
  expect(report.findings.map((f) => [f.expectedRows, f.foundRows])).toEqual([
    [20, 10],
    [20, 14],
    [20, 0],
  ]);
}, 120_000);

test('forged rows: inside a batch range (extra rows) and outside every link (uncovered)', async () => {
  const { p } = await pristine('forged');
  const forged = (offset: number) =>
    p
      .payload({ partition: 0, first: offset, last: offset, linesPerMessage: 1, tsMs: BASE + 5000 })
      .toString();
  await p.insertRows(Buffer.from(forged(15) + forged(500) + forged(501)));
  const { report } = await verify(p);
  expect(brief(report.findings)).toEqual([
    { kind: 'extra-rows', partition: 0, firstOffset: 10, lastOffset: 19 },
    { kind: 'uncovered-rows', partition: 0, firstOffset: 500, lastOffset: 501 },
  ]);
  expect(report.findings[0]).toMatchObject({ expectedRows: 20, foundRows: 21 });
}, 120_000);

test('a dropped day partition is reported as the deleted batches of that day', async () => {
  const { p } = await pristine('drop');
  const day0 = new Date(BASE).toISOString().slice(0, 10).replace(/-/g, '');
  await p.sql(`ALTER TABLE ${p.database}.fw DROP PARTITION ${Number(day0)}`);
  const { report } = await verify(p);
  expect(brief(report.findings)).toEqual([
    { kind: 'deleted', partition: 0, firstOffset: 0, lastOffset: 9 },
    { kind: 'deleted', partition: 0, firstOffset: 10, lastOffset: 19 },
    { kind: 'deleted', partition: 1, firstOffset: 0, lastOffset: 9 },
    { kind: 'deleted', partition: 1, firstOffset: 10, lastOffset: 19 },
  ]);
}, 120_000);

test('an altered integrity link breaks its own hash, the chain after it and the signed head', async () => {
  const { p } = await pristine('link');
  await p.sql(
    `ALTER TABLE ${p.database}.fw_integrity UPDATE link = '${'f'.repeat(64)}' WHERE \`partition\` = 1 AND first_offset = 10`,
  );
  const { report } = await verify(p);
  expect(brief(report.findings)).toEqual([
    { kind: 'link-modified', partition: 1, firstOffset: 10, lastOffset: 19 },
    { kind: 'checkpoint-head-mismatch', partition: 1, firstOffset: 19, lastOffset: 19 },
    { kind: 'chain-break', partition: 1, firstOffset: 20, lastOffset: 29 },
  ]);
}, 120_000);

test('a consistently rewritten chain (row, digest and links recomputed) is caught by the signed checkpoint', async () => {
  const { p, links } = await pristine('rewrite');
  await p.sql(
    `ALTER TABLE ${p.database}.fw UPDATE raw = 'forged' WHERE kafka_partition = 0 AND kafka_offset = 35 AND kafka_line = 0`,
  );
  // The attacker recomputes batch 3's digest and link exactly as the worker would.
  const tsv = p
    .payload(plan(0, 3))
    .toString()
    .replace(/<134>fw-01 line 35\/0 [^\t\n]*/, 'forged');
  const old = links.get('0/3')!;
  const digest = digestTsv(p.columns, Buffer.from(tsv)).digest;
  const link = computeLink({ ...old, batchDigest: digest });
  await p.sql(
    `ALTER TABLE ${p.database}.fw_integrity UPDATE batch_digest = '${digest}', link = '${link}' WHERE \`partition\` = 0 AND first_offset = 30`,
  );
  const { report } = await verify(p);
  expect(brief(report.findings)).toEqual([
    { kind: 'checkpoint-head-mismatch', partition: 0, firstOffset: 39, lastOffset: 39 },
  ]);
}, 120_000);

test('a checkpoint signed with another key fails', async () => {
  const { p } = await pristine('key');
  const rogue = new CompliancePipeline(client, p.database);
  const intruder = p.recorder(
    undefined,
    rogue.keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  );
  await intruder.assign([0, 1]);
  await intruder.checkpointNow();
  const { code, report } = await verify(p);
  expect(code).toBe(1);
  expect(report.findings.map((f) => [f.kind, f.detail])).toEqual([
    ['checkpoint-invalid', 'signed by another key than --public-key'],
  ]);
}, 120_000);

test('forged and mismatched timestamp tokens fail; tokenless checkpoints are findings only when required', async () => {
  const { p } = await pristine('tsa');
  const [first, second] = await p.rows<{ t: string; h: string }>(
    `SELECT toString(created_at) AS t, heads AS h FROM ${p.database}.fw_checkpoints ORDER BY created_at`,
  );
  // Mismatched: the second checkpoint's (valid) token moved onto the first one.
  const [{ tok }] = await p.rows<{ tok: string }>(
    `SELECT tsa_token AS tok FROM ${p.database}.fw_checkpoints WHERE created_at = '${second.t}'`,
  );
  await p.sql(
    `ALTER TABLE ${p.database}.fw_checkpoints UPDATE tsa_token = '${tok}' WHERE created_at = '${first.t}'`,
  );
  // Forged: a genuine token for the right digest, but from a TSA the auditor does not trust.
  const { requestTimeStamp } = await import('../common/src/integrity/tsa-request');
  const { checkpointDigest } = await import('../common/src/integrity/checkpoint');
  const rogue = await requestTimeStamp(otherTsa.url, checkpointDigest(second.h));
  await p.sql(
    `ALTER TABLE ${p.database}.fw_checkpoints UPDATE tsa_token = '${rogue.token.toString('base64')}' WHERE created_at = '${second.t}'`,
  );
  const { report } = await verify(p);
  expect(report.findings.map((f) => [f.kind, f.detail])).toEqual([
    ['timestamp-invalid', 'message imprint does not match the checkpoint'],
    ['timestamp-invalid', 'TSA certificate does not chain to a trusted CA'],
  ]);
  await p.sql(`ALTER TABLE ${p.database}.fw_checkpoints UPDATE tsa_token = '' WHERE 1`);
  expect((await verify(p)).code).toBe(0);
  expect((await verify(p, ['--require-timestamps'])).report.findings.map((f) => f.kind)).toEqual([
    'timestamp-invalid',
    'timestamp-invalid',
  ]);
}, 120_000);

test('rows removed by TTL are reported as expired, not tampered', async () => {
  const p = new CompliancePipeline(client, `cv_${RUN}_ttl`, '30d');
  await p.create();
  const rec = p.recorder(tsa.url);
  await rec.assign([0]);
  const old = Date.now() - 40 * DAY;
  await p.insertBatch(rec, { partition: 0, first: 0, last: 9, tsMs: old, insertedAtMs: Date.now() - 60_000 });
  // This batch straddles the horizon: half its rows are older than 30 days.
  await p.insertBatch(rec, {
    partition: 0,
    first: 10,
    last: 19,
    tsMs: Date.now() - 30 * DAY - 5000,
    insertedAtMs: Date.now() - 50_000,
  });
  await p.insertBatch(rec, {
    partition: 0,
    first: 20,
    last: 29,
    tsMs: Date.now() - DAY,
    insertedAtMs: Date.now() - 40_000,
  });
  await rec.checkpointNow();
  await p.sql(`OPTIMIZE TABLE ${p.database}.fw FINAL`);
  const [{ c }] = await p.rows<{ c: string }>(`SELECT count() AS c FROM ${p.database}.fw`);
  expect(Number(c)).toBeLessThan(60);
  const { code, report } = await verify(p);
  expect(report.findings).toEqual([]);
  expect(code).toBe(0);
  expect(report.notices.map((n) => [n.kind, n.firstOffset, n.lastOffset])).toEqual([
    ['expired', 0, 9],
    ['expired', 10, 19],
  ]);
  // The same missing rows without a retention that explains them are deletions.
  const strict = await verify(p, ['--retention', '3650d']);
  expect(strict.report.findings.map((f) => [f.kind, f.firstOffset])).toEqual([
    ['deleted', 0],
    ['deleted', 10],
  ]);
}, 120_000);
