/**
 * NAT / CGNAT identity end to end against the real ClickHouse engine: a firewall table created
 * before the NAT columns existed is evolved by the operator's own applier (ADD COLUMN, ADD INDEX),
 * FortiGate and PAN-OS lines with source NAT go through the worker's parser and encoder into it,
 * and `logpipeline query --nat-ip P --nat-port Q` returns exactly the sessions translated to P:Q,
 * with the idx_nat_src skip index applied to the query's own expression.
 */
import { Readable, Writable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { BatchEncoder } from '../consumer/src/encode/batch';
import { ensureTable } from '../operator/src/apply/clickhouse';
import { runQuery } from '../operator/cli/query';
import { buildNatQuery } from '../operator/src/compliance/legal-query';
import { buildTableDDL, buildWorkerColumns, resolveTableSchema } from '../operator/src/desired/clickhouse';
import { resolved } from './fixtures/clickhouse-testing';
import { bedClient, clickhouseBed } from './compliance-fixture';

const DB = `natq_${process.pid}_${Date.now() % 1e6}`;
const spec = resolved({ database: DB, table: 'fw', retention: { deleteAfter: '3650d' } });
let client: ClickHouseClient;

const forti = (i: number, natIp: string, natPort: number) =>
  `<189>date=2026-01-10 time=10:0${i}:00 devname="FG-EDGE" eventtime=${Date.UTC(2026, 0, 10, 10, i)}000000 ` +
  `srcip=100.64.${i}.10 srcport=${50000 + i} dstip=198.51.100.${i} dstport=443 proto=6 action="close" ` +
  `policyid=1 trandisp="snat" transip=${natIp} transport=${natPort} sentbyte=100 rcvdbyte=200`;
const pan = (i: number, natIp: string, natPort: number) =>
  `1,2026/01/10 10:0${i}:30,012801096514,TRAFFIC,end,2561,2026/01/10 10:0${i}:30,100.64.${i}.20,8.8.8.8,` +
  `${natIp},8.8.8.8,Allow-DNS,,,dns,vsys1,trust,untrust,ethernet1/2,ethernet1/1,Forward,` +
  `2026/01/10 10:0${i}:30,1234${i},1,${40000 + i},53,${natPort},53,0x400064,udp,allow,180,90,90,2,2026/01/10 10:0${i}:29,0,any,0,` +
  `7193817,0x0,100.64.0.0-100.127.255.255,United States,0,1,1,aged-out,0,0,0,0,,PA-5220,from-policy,,,0,,0,,N/A`;

beforeAll(async () => {
  client = bedClient();
  // The table as a previous operator version created it: no NAT columns, no NAT index.
  const ddl = buildTableDDL(spec);
  if (!ddl.ok) throw new Error(ddl.message);
  const old = ddl.value.tables[0].create[0]
    .split('\n')
    .filter((l) => !/`nat_(src|dst)_(ip|port)`|idx_nat_src/.test(l))
    .join('\n')
    .replace(/,\n\)/, '\n)');
  await client.command({ query: ddl.value.createDatabase });
  await client.command({ query: old });
}, 60_000);

afterAll(async () => {
  await client.command({ query: `DROP DATABASE IF EXISTS ${DB}` });
  await client.close();
});

test('the operator evolves the old table: ADD COLUMN for the NAT columns and ADD INDEX idx_nat_src', async () => {
  const first = await ensureTable(client, spec);
  expect(first.reason).toBe('TableReady');
  expect(first.applied.filter((s) => /nat_/.test(s))).toEqual([
    expect.stringMatching(/ADD COLUMN IF NOT EXISTS `nat_src_ip` IPv6/),
    expect.stringMatching(/ADD COLUMN IF NOT EXISTS `nat_src_port` UInt16/),
    expect.stringMatching(/ADD COLUMN IF NOT EXISTS `nat_dst_ip` IPv6/),
    expect.stringMatching(/ADD COLUMN IF NOT EXISTS `nat_dst_port` UInt16/),
    expect.stringMatching(/ADD INDEX IF NOT EXISTS `idx_nat_src` cityHash64\(`nat_src_ip`, `nat_src_port`\)/),
  ]);
  // Level-triggered: the next reconcile finds nothing to do.
  expect((await ensureTable(client, spec)).applied).toEqual([]);
}, 60_000);

test('a query by public address and port finds the NAT-translated FortiGate and PAN-OS sessions', async () => {
  const lines = [
    forti(1, '203.0.113.5', 40001), // wanted
    forti(2, '203.0.113.5', 40002), // same address, other port
    forti(3, '203.0.113.6', 40001), // same port, other address
    pan(4, '203.0.113.5', 40001), // wanted
    pan(5, '203.0.113.7', 40001),
    forti(6, '203.0.113.5', 40001), // wanted, outside the window below
  ];
  const encoder = new BatchEncoder({
    parser: { format: 'auto', timezone: 'UTC' },
    columns: buildWorkerColumns(resolveTableSchema(spec)),
  });
  const batch = encoder.encode(
    [{ value: Buffer.from(lines.join('\n')), topic: 't', partition: 0, offset: 0 }],
    Date.UTC(2026, 0, 10, 12),
  );
  expect(batch.deadLetters).toEqual([]);
  await client.insert({
    table: `${DB}.fw`,
    columns: encoder.plan.names as [string, ...string[]],
    values: Readable.from([Buffer.from(batch.data)], { objectMode: false }),
    format: 'TabSeparated',
  });

  const bed = clickhouseBed();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const sink = (into: Buffer[]) => new Writable({ write: (c: Buffer, _e, cb) => (into.push(c), cb()) });
  const code = await runQuery(
    [
      ...['--database', DB, '--table', 'fw', '--nat-ip', '203.0.113.5', '--nat-port', '40001'],
      ...['--from', '2026-01-10T10:00:00Z', '--to', '2026-01-10T10:05:59Z', '--format', 'json'],
    ],
    sink(out),
    { CLICKHOUSE_URL: bed.url, CLICKHOUSE_USER: bed.username, CLICKHOUSE_PASSWORD: bed.password },
    sink(err),
  );
  expect([code, Buffer.concat(err).toString()]).toEqual([
    0,
    expect.stringMatching(/NAT 203\.0\.113\.5:40001/),
  ]);
  const rows = Buffer.concat(out)
    .toString()
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, string | number>);
  expect(rows.map((r) => [r.vendor, r.src_ip, r.nat_src_ip, r.nat_src_port])).toEqual([
    ['fortigate', '::ffff:100.64.1.10', '::ffff:203.0.113.5', 40001],
    ['paloalto', '::ffff:100.64.4.20', '::ffff:203.0.113.5', 40001],
  ]);

  // The skip index serves the query's own expression (index analysis names it).
  const explain = await client.query({
    query: `EXPLAIN indexes = 1 ${buildNatQuery({ database: DB, table: 'fw' }, true)}`,
    query_params: { nat_ip: '203.0.113.5', nat_port: 40001, from: 0, to: Date.UTC(2027, 0, 1) },
    format: 'TabSeparatedRaw',
  });
  expect(await explain.text()).toContain('idx_nat_src');
}, 60_000);
