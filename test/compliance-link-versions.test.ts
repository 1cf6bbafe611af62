/**
 * Link versions against the real ClickHouse engine and `logpipeline verify`: a chain stored by a
 * build before link v2 (links hashed with the `logpipeline-link-v1` prefix, firewall preset, whose
 * DateTime64 range is the same in both versions) verifies byte for byte; a worker of this build
 * restores its head from ClickHouse, continues it in v2, signs checkpoints, and the mixed chain
 * verifies clean. A v1 link written after the v2 ones (an older worker during a rolling upgrade)
 * verifies too, with a notice.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import {
  computeLink,
  GENESIS_LINK,
  LINK_COLUMNS,
  linkTsvRow,
  linkVersionOf,
  type LinkRecord,
} from '../common/src/integrity/chain';
import { quoteIdentifier } from '../common/src/sql/identifiers';
import type { IntegrityRecorder } from '../consumer/src/integrity';
import { bedClient, CompliancePipeline, verifyJson, type BatchPlan } from './compliance-fixture';

const DAY = 86_400_000;
const RUN = `${process.pid}_${Date.now() % 1e6}`;
const BASE = Math.floor((Date.now() - 2 * DAY) / DAY) * DAY;
let client: ClickHouseClient;
let dir: string;

beforeAll(() => {
  client = bedClient();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'link-versions-'));
});

afterAll(async () => {
  for (const name of ['up', 'down'])
    await client.command({ query: `DROP DATABASE IF EXISTS \`clv_${RUN}_${name}\`` });
  await client.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const plan = (i: number): BatchPlan => ({
  partition: 0,
  first: i * 10,
  last: i * 10 + 9,
  tsMs: BASE + i * 3_600_000,
});

/** Stores batch i's rows and a link hashed in v1 after `prevLink` (its fields sealed by `rec`), as a v1 build did. */
async function storeV1Batch(
  p: CompliancePipeline,
  rec: IntegrityRecorder,
  i: number,
  prevLink: string,
): Promise<LinkRecord> {
  const b = plan(i);
  const tsv = p.payload(b);
  const sealed = rec.seal({
    partition: 0,
    firstOffset: b.first,
    lastOffset: b.last,
    insertedAtMs: b.tsMs + 60_000,
    batchToken: `v1-${i}`,
    tsv,
  });
  if (typeof sealed === 'string' || !sealed.record) throw new Error(`seal: ${String(sealed)}`);
  const fields = { ...sealed.record, prevLink };
  const record = { ...fields, link: computeLink(fields, 1) };
  await p.insertRows(tsv);
  await insertLinkRow(p, record);
  return record;
}

/** Stores batches 0..n-1 the way a v1 build did, chained from genesis. */
async function storeV1Batches(p: CompliancePipeline, n: number): Promise<LinkRecord[]> {
  const sealer = p.recorder();
  await sealer.assign([0]);
  const out: LinkRecord[] = [];
  for (let i = 0; i < n; i++) out.push(await storeV1Batch(p, sealer, i, out[i - 1]?.link ?? GENESIS_LINK));
  return out;
}

async function insertLinkRow(p: CompliancePipeline, record: LinkRecord): Promise<void> {
  await client.insert({
    table: `${quoteIdentifier(p.database)}.\`fw_integrity\``,
    columns: LINK_COLUMNS.map((c) => quoteIdentifier(c)) as [string, ...string[]],
    values: Readable.from([Buffer.from(linkTsvRow(record))], { objectMode: false }),
    format: 'TabSeparated',
  });
}

test('a v1 chain verifies, and a worker of this build continues it in v2: clean', async () => {
  const p = new CompliancePipeline(client, `clv_${RUN}_up`);
  await p.create();
  const v1 = await storeV1Batches(p, 2);
  expect(v1.map((l) => linkVersionOf(l))).toEqual([1, 1]);

  // The upgraded worker: head restored from ClickHouse (the v1 link), next links in v2.
  const rec = p.recorder();
  await rec.assign([0]);
  expect(await rec.checkpointNow()).toMatchObject({ heads: 1 });
  const v2 = [await p.insertBatch(rec, plan(2)), await p.insertBatch(rec, plan(3))].map((s) => s.record!);
  expect(v2[0].prevLink).toBe(v1[1].link);
  expect(v2.map((l) => linkVersionOf(l))).toEqual([2, 2]);
  expect(await rec.checkpointNow()).toMatchObject({ heads: 1 });

  const { code, report } = await verifyJson(p, dir, ['--all']);
  expect(report.findings).toEqual([]);
  expect(code).toBe(0);
  expect(report.stats.links).toBe(4);
}, 120_000);

test('a v1 link after v2 links (an older worker in a rolling upgrade) verifies, with a notice', async () => {
  const p = new CompliancePipeline(client, `clv_${RUN}_down`);
  await p.create();
  const rec = p.recorder();
  await rec.assign([0]);
  const v2 = (await p.insertBatch(rec, plan(0))).record!;
  // A worker of the older build takes the partition over and appends a v1 link.
  await storeV1Batch(p, rec, 1, v2.link);

  const { code, report } = await verifyJson(p, dir, ['--all']);
  expect(report.findings).toEqual([]);
  expect(code).toBe(0);
  const noted = report.notices.filter((n) => /version 1 link follows a version 2 link/.test(n.detail));
  expect(noted.map((n) => [n.kind, n.partition, n.firstOffset])).toEqual([['info', 0, 10]]);
}, 120_000);
