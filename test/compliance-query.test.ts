/**
 * The legal query and the access users against the real ClickHouse engine: `logpipeline query`
 * returns exactly the rows where the address is source or destination inside the window (checked
 * against an independent count), both query shapes agree, hostile input never reaches SQL; the
 * access statements are accepted by ClickHouse's own parser (EXPLAIN AST), and ensureAccessUsers
 * either creates the users (checked with SHOW GRANTS) or fails with the engine's access-storage
 * error — the test-bed engine (chdb) has no writable user directory.
 */
import { Writable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { runQuery } from '../operator/cli/query';
import { buildAccessStatements, ensureAccessUsers, pipelineRoles } from '../operator/src/compliance/access';
import { buildLegalQuery } from '../operator/src/compliance/legal-query';
import { bedClient, clickhouseBed, CompliancePipeline } from './compliance-fixture';

const DB = `cq_${process.pid}_${Date.now() % 1e6}`;
const BASE = Date.UTC(2026, 0, 10);
let client: ClickHouseClient;
let p: CompliancePipeline;

beforeAll(async () => {
  client = bedClient();
  p = new CompliancePipeline(client, DB);
  await p.create();
  const rec = p.recorder();
  await rec.assign([0, 1]);
  for (let i = 0; i < 6; i++)
    for (const part of [0, 1])
      await p.insertBatch(rec, {
        partition: part,
        first: i * 50,
        last: i * 50 + 49,
        tsMs: BASE + i * 3_600_000,
      });
}, 120_000);

afterAll(async () => {
  await client.command({ query: `DROP DATABASE IF EXISTS ${DB}` });
  await client.close();
});

async function query(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const bed = clickhouseBed();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const sink = (into: Buffer[]) => new Writable({ write: (c: Buffer, _e, cb) => (into.push(c), cb()) });
  const env = { CLICKHOUSE_URL: bed.url, CLICKHOUSE_USER: bed.username, CLICKHOUSE_PASSWORD: bed.password };
  const code = await runQuery(['--database', DB, '--table', 'fw', ...args], sink(out), env, sink(err));
  return { code, out: Buffer.concat(out).toString(), err: Buffer.concat(err).toString() };
}

async function count(where: string): Promise<number> {
  const rs = await client.query({
    query: `SELECT count() AS c FROM ${DB}.fw WHERE ${where}`,
    format: 'JSONEachRow',
  });
  return Number((await rs.json<{ c: string }>())[0].c);
}

const window = (fromH: number, toH: number) => [
  '--from',
  new Date(BASE + fromH * 3_600_000).toISOString(),
  '--to',
  new Date(BASE + toH * 3_600_000).toISOString(),
];

test.each([
  ['a source address (IPv4)', '10.0.1.171'],
  ['a destination address', '8.8.8.8'],
  ['an IPv6 source address', '2001:db8::1a4'],
])(
  'returns every record of %s in the window, and only those',
  async (_what, ip) => {
    const { code, out, err } = await query(['--ip', ip, ...window(1, 3.5), '--format', 'json']);
    expect(code).toBe(0);
    const rows =
      out.trim() === ''
        ? []
        : out
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as Record<string, string>);
    const expected = await count(
      `(src_ip = toIPv6('${ip}') OR dst_ip = toIPv6('${ip}')) AND ts BETWEEN fromUnixTimestamp64Milli(${BASE + 3_600_000}) AND fromUnixTimestamp64Milli(${BASE + 3.5 * 3_600_000})`,
    );
    expect(expected).toBeGreaterThan(0);
    expect(rows).toHaveLength(expected);
    for (const r of rows)
      expect([r.src_ip, r.dst_ip].some((a) => a === ip || a === `::ffff:${ip}`)).toBe(true);
    const times = rows.map((r) => Date.parse(r.ts.replace(' ', 'T') + 'Z'));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(err).toMatch(/ms/);
  },
  60_000,
);

test('union and OR shapes return the same rows; CSV has a header', async () => {
  const params = { ip: '8.8.8.8', from: BASE, to: BASE + 6 * 3_600_000 };
  const run = async (shape: 'union' | 'or') => {
    const rs = await client.query({
      query: buildLegalQuery({ database: DB, table: 'fw' }, shape),
      query_params: params,
      format: 'JSONEachRow',
    });
    return (await rs.json<Record<string, string>>())
      .map((r) => `${r.kafka_partition}/${r.kafka_offset}/${r.kafka_line}`)
      .sort();
  };
  const union = await run('union');
  expect(union.length).toBeGreaterThan(0);
  expect(await run('or')).toEqual(union);
  const csv = await query(['--ip', '8.8.8.8', ...window(0, 6)]);
  const lines = csv.out.trim().split('\n');
  expect(lines[0]).toContain('"src_ip","dst_ip"');
  expect(lines).toHaveLength(union.length + 1);
});

test('hostile input is rejected before it reaches ClickHouse', async () => {
  const r = await query(['--ip', "1.2.3.4') OR 1=1 --", ...window(0, 1)]);
  expect(r.code).toBe(2);
  expect(r.err).toContain('is not an IPv4 or IPv6 address');
  expect((await query(['--ip', '1.2.3.4', '--from', 'yesterday', '--to', 'now'])).code).toBe(2);
});

test('access statements parse in ClickHouse; creating users works or fails only for lack of access storage', async () => {
  const users = {
    writer: { username: `${DB}_writer`, password: 'writer-password-123456' },
    auditor: { username: `${DB}_auditor`, password: 'auditor-password-123456' },
  };
  const statements = buildAccessStatements(p.spec, users);
  for (const sql of statements) {
    const rs = await client.query({ query: `EXPLAIN AST ${sql}`, format: 'TabSeparated' });
    expect(await rs.text()).toMatch(/^(CreateRoleQuery|CreateUserQuery|GrantQuery)/);
  }
  let created = true;
  try {
    await ensureAccessUsers(client, p.spec, users);
  } catch (err) {
    created = false;
    expect((err as Error).message).toMatch(/writeable access storage|Not enough privileges|ACCESS_DENIED/);
  }
  if (created) {
    const grants = await (
      await client.query({ query: `SHOW GRANTS FOR \`${users.writer.username}\``, format: 'TabSeparated' })
    ).text();
    // Privileges sit on the pipeline's own role; the user only holds the role.
    expect(grants).toContain(`TO ${users.writer.username}`);
    expect(grants).toContain(pipelineRoles(p.spec).writer);
    await client.command({
      query: `DROP USER IF EXISTS \`${users.writer.username}\`, \`${users.auditor.username}\``,
    });
  }
});
