/**
 * Integrity across the sender_ip upgrade (issue 16): a firewall table created before the column
 * existed gets it by the operator's ADD COLUMN; rows the worker stored before it (hashed over the
 * old column list, signed by the old checkpoints) and after it (hashed with sender_ip) must both
 * verify with `logpipeline verify` — with and without a checkpoint signed after the change.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { bedClient, CompliancePipeline, verifyJson, type BatchPlan } from './compliance-fixture';

const DAY = 86_400_000;
const RUN = `${process.pid}_${Date.now() % 1e6}`;
const BASE = Math.floor((Date.now() - 2 * DAY) / DAY) * DAY;
let client: ClickHouseClient;
let dir: string;

beforeAll(() => {
  client = bedClient();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'compliance-upgrade-'));
});

afterAll(async () => {
  await client.command({ query: `DROP DATABASE IF EXISTS \`cu_${RUN}\`` });
  await client.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const plan = (partition: number, i: number): BatchPlan => ({
  partition,
  first: i * 10,
  last: i * 10 + 9,
  tsMs: BASE + i * 3_600_000 + partition * 1000,
});

/** Drops field `index` of every TSV row (the payload a worker without that column wrote). */
function withoutField(tsv: Buffer, index: number): Buffer {
  const rows = tsv
    .toString('utf8')
    .split('\n')
    .filter((r) => r !== '');
  return Buffer.from(
    rows
      .map(
        (r) =>
          r
            .split('\t')
            .filter((_, i) => i !== index)
            .join('\t') + '\n',
      )
      .join(''),
  );
}

/** verify every batch of the pipeline's table. */
const verify = (p: CompliancePipeline) => verifyJson(p, dir, ['--all']);

test('rows stored before and after ADD COLUMN sender_ip verify, with and without a checkpoint after it', async () => {
  const p = new CompliancePipeline(client, `cu_${RUN}`);
  await p.create();
  const senderIndex = p.columns.findIndex((c) => c.name === 'sender_ip');
  expect(senderIndex).toBe(p.columns.length - 1);
  const oldColumns = p.columns.filter((c) => c.name !== 'sender_ip');
  const fw = `\`${p.database}\`.\`fw\``;
  // The table as an operator before issue 16 created it.
  await p.sql(`ALTER TABLE ${fw} DROP COLUMN sender_ip`);
  const before = p.recorder(undefined, undefined, oldColumns);
  await before.assign([0, 1]);
  for (let i = 0; i < 2; i++)
    for (const part of [0, 1])
      await p.insertPayload(
        before,
        plan(part, i),
        withoutField(p.payload(plan(part, i)), senderIndex),
        oldColumns,
      );
  expect(await before.checkpointNow()).toMatchObject({ heads: 2 });
  await before.stop();
  const old = await verify(p);
  expect(old.report.findings).toEqual([]);
  expect(old.report.stats.batchesVerified).toBe(4);

  // The upgrade: the operator's ADD COLUMN (the statement its table plan emits), then workers with sender_ip.
  await p.sql(`ALTER TABLE ${fw} ADD COLUMN IF NOT EXISTS \`sender_ip\` IPv6`);
  const after = p.recorder();
  await after.assign([0, 1]);
  for (let i = 2; i < 4; i++) for (const part of [0, 1]) await p.insertBatch(after, plan(part, i));

  // No checkpoint since the change yet: the newest signed column list is the old one.
  const between = await verify(p);
  expect(between.report.findings).toEqual([]);
  expect(between.report.stats.batchesVerified).toBe(8);

  expect(await after.checkpointNow()).toMatchObject({ heads: 2 });
  await after.stop();
  const signed = await verify(p);
  expect(signed.report.findings).toEqual([]);
  expect(signed.report.stats).toMatchObject({ batchesVerified: 8, checkpoints: 2, checkpointsVerified: 2 });
  expect(signed.code).toBe(0);
  expect(signed.report.notices.map((n) => n.detail)).toContainEqual(
    expect.stringContaining('4 batches were written before or after a column change'),
  );

  // Trying several column lists hides no tampering: a changed sender_ip of a new row and a changed
  // action of an old row are both found.
  await p.sql(
    `ALTER TABLE ${fw} UPDATE sender_ip = toIPv6('203.0.113.66') WHERE kafka_partition = 0 AND kafka_offset = 25`,
  );
  await p.sql(`ALTER TABLE ${fw} UPDATE action = 'alert' WHERE kafka_partition = 1 AND kafka_offset = 3`);
  const tampered = await verify(p);
  expect(tampered.code).not.toBe(0);
  expect(tampered.report.findings.map((f) => [f.kind, f.partition, f.firstOffset]).sort()).toEqual([
    ['modified', 0, 20],
    ['modified', 1, 0],
  ]);
});
