/**
 * End to end through the worker's real encoder: vendor log lines (every supported format, plus
 * lines with tabs, backslashes, carriage returns and invalid UTF-8), packed several per Kafka message,
 * encoded by BatchEncoder, sealed from the exact INSERT payload, inserted into the operator's firewall table, then verified from
 * what ClickHouse stored. Proves the worker's canonical form and verify's SQL rendering agree on
 * real data (IPv4 in IPv6 columns, compressed IPv6, DateTime64, enums, escaped strings).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { BatchEncoder, type MessageInput } from '../consumer/src/encode/batch';
import { generateSampleLines } from './fixtures/samples';
import { verifyTable } from '../operator/src/compliance/verify';
import { loadVerifyKey } from '../common/src/integrity/checkpoint';
import { bedClient, CompliancePipeline } from './compliance-fixture';

const DB = `ce_${process.pid}_${Date.now() % 1e6}`;
let client: ClickHouseClient;

beforeAll(() => {
  client = bedClient();
});

afterAll(async () => {
  await client.command({ query: `DROP DATABASE IF EXISTS ${DB}` });
  await client.close();
});

/** Packs lines into Kafka messages of 1..4 newline-separated lines, as shippers batch them. */
function pack(lines: Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0, n = 1; i < lines.length; i += n, n = (n % 4) + 1) {
    out.push(Buffer.concat(lines.slice(i, i + n).flatMap((l) => [l, Buffer.from('\n')])));
  }
  return out;
}

const SPECIAL = [
  'Jan 15 12:00:01 fw1 kernel: IN=eth0 OUT= SRC=2001:0db8:0000:0000:0000:0000:0000:0001 DST=::ffff:192.0.2.1 PROTO=TCP SPT=1 DPT=2 note=a\tb\\c\r',
  'Jan 15 12:00:02 fw1 kernel: IN=eth0 OUT= SRC=10.0.0.1 DST=fe80::1%eth0 PROTO=UDP SPT=53 DPT=53 bytes \xff\xfe',
];

test('lines encoded by the worker encoder verify clean after a round trip through ClickHouse', async () => {
  // Ten years: the sample lines carry fixed past timestamps that a two-year TTL may already remove.
  const p = new CompliancePipeline(client, DB, '3650d');
  await p.create();
  // Every column the worker writes, kafka_line included: lines are packed several per message.
  const columns = p.columns;
  const encoder = new BatchEncoder({
    parser: { format: 'auto', timezone: 'Europe/Istanbul' },
    columns: columns.map((c) => ({ ...c, source: c.source ?? '' })),
  });
  const lines = [
    ...generateSampleLines('mix', 3000, { seed: 11, malformedRatio: 0.02 }),
    ...SPECIAL.map((l) => Buffer.from(l, 'latin1')),
  ];
  const rec = p.recorder(undefined, undefined, columns);
  await rec.assign([0, 1]);
  const ingestMs = Date.now() - 3_600_000;
  let rows = 0;
  let batches = 0;
  for (let from = 0, b = 0; from < lines.length; from += 500, b++) {
    const partition = b % 2;
    const first = Math.floor(b / 2) * 500;
    const messages: MessageInput[] = pack(lines.slice(from, from + 500)).map((value, i) => ({
      value,
      topic: 'isp.fw',
      partition,
      offset: first + i,
    }));
    const encoded = encoder.encode(messages, ingestMs);
    const tsv = Buffer.from(encoded.data);
    rows += encoded.rows;
    const sealed = await p.insertPayload(
      rec,
      { partition, first, last: first + messages.length - 1, tsMs: ingestMs, insertedAtMs: ingestMs },
      tsv,
      columns,
    );
    expect(sealed.record?.rowCount).toBe(encoded.rows);
    batches++;
  }
  await rec.checkpointNow();
  expect(rows).toBeGreaterThan(2900);
  const report = await verifyTable(client, {
    database: DB,
    table: 'fw',
    window: {},
    publicKey: loadVerifyKey(p.publicKeyPem),
  });
  expect(report.findings).toEqual([]);
  expect(report.notices).toEqual([]);
  expect(report.stats).toMatchObject({
    rowsRead: rows,
    links: batches,
    batchesVerified: batches,
    checkpointsVerified: 1,
  });
  expect(report.columns).toEqual(columns.map((c) => c.name));
}, 120_000);
