/**
 * Proves the ClickHouse part of the test bed is a real ClickHouse engine that @clickhouse/client
 * uses over HTTP like a production server: DDL with IPv4 and TTL, a 100k-row streamed insert read
 * back exactly, insert_deduplication_token, ClickHouse errors with their codes, rows surviving a
 * SIGKILL + restart, and TTL moves to the `cold` disk of the `hot_cold` storage policy.
 */
import { Readable } from 'node:stream';
import { ClickHouseError, ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import { restartClickHouse } from './env/clickhouse';
import { readTestBed, writeTestBed } from './env/testbed';
import type { ClickHouseBed } from './env/testbed';

const ROWS = 100_000;
const DB = `smoke_${process.pid}_${Date.now()}`;

function chBed(): ClickHouseBed {
  const bed = readTestBed().clickhouse;
  if (!bed) throw new Error('the test bed has no ClickHouse part: integration tests need a real engine');
  return bed;
}

function connect(bed: ClickHouseBed, password = bed.password): ClickHouseClient {
  // Logging off: the error cases below are expected, the assertions report anything else.
  return createClient({
    url: bed.url,
    username: bed.username,
    password,
    log: { level: ClickHouseLogLevel.OFF },
  });
}

/** Row i of the big insert: a timestamp, a source IPv4 derived from i, a byte count and a message. */
function ipOf(i: number): string {
  return `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
}

function tsvRows(count: number): Readable {
  const base = Date.UTC(2026, 0, 1) / 1000;
  return Readable.from(
    (function* () {
      for (let start = 0; start < count; start += 5_000) {
        let block = '';
        for (let i = start; i < Math.min(count, start + 5_000); i++)
          block += `${base + i}\t${ipOf(i)}\t${i}\tline ${i}\n`;
        yield Buffer.from(block);
      }
    })(),
    { objectMode: false },
  );
}

async function rowsOf<T>(
  client: ClickHouseClient,
  query: string,
  params?: Record<string, unknown>,
): Promise<T[]> {
  const rs = await client.query({ query, format: 'JSONEachRow', query_params: params });
  return rs.json<T>();
}

async function countEvents(client: ClickHouseClient): Promise<number> {
  const [row] = await rowsOf<{ c: string }>(client, `SELECT count() AS c FROM ${DB}.events`);
  return Number(row.c);
}

let client: ClickHouseClient;

beforeAll(() => {
  client = connect(chBed());
});

afterAll(async () => {
  await client.command({ query: `DROP DATABASE IF EXISTS ${DB}` });
  await client.close();
});

test('creates a database and a MergeTree table with an IPv4 column and a TTL clause', async () => {
  await client.command({ query: `CREATE DATABASE ${DB}` });
  await client.command({
    query: `CREATE TABLE ${DB}.events (ts DateTime, src IPv4, bytes UInt64, msg String)
            ENGINE = MergeTree ORDER BY (ts, src) TTL ts + INTERVAL 730 DAY`,
  });
  const [table] = await rowsOf<{ engine: string; create_table_query: string }>(
    client,
    'SELECT engine, create_table_query FROM system.tables WHERE database = {db:String} AND name = {t:String}',
    { db: DB, t: 'events' },
  );
  expect(table.engine).toBe('MergeTree');
  expect(table.create_table_query).toContain('TTL ts + toIntervalDay(730)');
  const columns = await rowsOf<{ name: string; type: string }>(
    client,
    `SELECT name, type FROM system.columns WHERE database = '${DB}' AND table = 'events' ORDER BY position`,
  );
  expect(columns).toEqual([
    { name: 'ts', type: 'DateTime' },
    { name: 'src', type: 'IPv4' },
    { name: 'bytes', type: 'UInt64' },
    { name: 'msg', type: 'String' },
  ]);
});

test('streams 100k rows in and reads them back exactly', async () => {
  const result = await client.insert({
    table: `${DB}.events`,
    values: tsvRows(ROWS),
    format: 'TabSeparated',
  });
  expect(result.summary?.written_rows).toBe(String(ROWS));
  const [stats] = await rowsOf<Record<string, string | number>>(
    client,
    `SELECT count() AS c, sum(bytes) AS s, toString(min(src)) AS lo, toString(max(src)) AS hi,
            uniqExact(msg) AS u, toString(max(ts)) AS last FROM ${DB}.events`,
  );
  expect(Number(stats.c)).toBe(ROWS);
  expect(String(stats.s)).toBe(String((BigInt(ROWS) * BigInt(ROWS - 1)) / 2n));
  expect(stats.lo).toBe(ipOf(0));
  expect(stats.hi).toBe(ipOf(ROWS - 1));
  expect(Number(stats.u)).toBe(ROWS);
  expect(stats.last).toBe('2026-01-02 03:46:39');
  const [row] = await rowsOf<{ msg: string; src: string }>(
    client,
    `SELECT msg, src FROM ${DB}.events WHERE bytes = 65793`,
  );
  expect(row).toEqual({ msg: 'line 65793', src: '10.1.1.1' });
});

test('insert_deduplication_token: the same token twice stores the rows once', async () => {
  await client.command({
    query: `CREATE TABLE ${DB}.dedup (id UInt32, v String) ENGINE = MergeTree ORDER BY id
            SETTINGS non_replicated_deduplication_window = 1000`,
  });
  const values = Array.from({ length: 10 }, (_, id) => ({ id, v: `v${id}` }));
  const insert = (token: string) =>
    client.insert({
      table: `${DB}.dedup`,
      values,
      format: 'JSONEachRow',
      clickhouse_settings: { insert_deduplication_token: token },
    });
  await insert('batch-1');
  await insert('batch-1');
  const count = async () =>
    Number((await rowsOf<{ c: string }>(client, `SELECT count() AS c FROM ${DB}.dedup`))[0].c);
  expect(await count()).toBe(10);
  await insert('batch-2');
  expect(await count()).toBe(20);
});

test('settings sent with one query do not leak into the next', async () => {
  const blockSize = async (settings?: Record<string, string>) => {
    const rs = await client.query({
      query: "SELECT getSetting('max_block_size') AS v",
      format: 'JSONEachRow',
      clickhouse_settings: settings,
    });
    return Number((await rs.json<{ v: string }>())[0].v);
  };
  const baseline = await blockSize();
  expect(baseline).not.toBe(1234);
  expect(await blockSize({ max_block_size: '1234' })).toBe(1234);
  expect(await blockSize()).toBe(baseline);
});

test('errors come back as ClickHouse errors with their codes', async () => {
  const missing = client.query({ query: `SELECT * FROM ${DB}.missing` });
  await expect(missing).rejects.toBeInstanceOf(ClickHouseError);
  await expect(client.query({ query: `SELECT * FROM ${DB}.missing` })).rejects.toMatchObject({
    code: '60',
    type: 'UNKNOWN_TABLE',
  });
  await expect(client.command({ query: 'CREATE TABLE broken (' })).rejects.toMatchObject({
    code: '62',
    type: 'SYNTAX_ERROR',
  });
  const badInsert = client.insert({
    table: `${DB}.events`,
    values: Readable.from([Buffer.from('not-a-timestamp\t1.2.3.4\t1\tx\n')], { objectMode: false }),
    format: 'TabSeparated',
  });
  await expect(badInsert).rejects.toBeInstanceOf(ClickHouseError);
  const intruder = connect(chBed(), 'wrong-password');
  try {
    await expect(intruder.query({ query: 'SELECT 1' })).rejects.toMatchObject({
      code: '516',
      type: 'AUTHENTICATION_FAILED',
    });
  } finally {
    await intruder.close();
  }
});

test('rows survive a SIGKILL of the server and a restart on the same data directory', async () => {
  const bed = readTestBed();
  const before = chBed();
  const restarted = await restartClickHouse(before, 'SIGKILL');
  writeTestBed({ ...bed, clickhouse: restarted });
  expect(restarted.process?.pid).not.toBe(before.process?.pid);
  expect(restarted.url).toBe(before.url);
  await client.close(); // its keep-alive sockets died with the old process
  client = connect(restarted);
  expect(await countEvents(client)).toBe(ROWS);
  const [dedup] = await rowsOf<{ c: string }>(client, `SELECT count() AS c FROM ${DB}.dedup`);
  expect(Number(dedup.c)).toBe(20);
}, 120_000);

test("TTL moves old parts to the 'cold' disk of the hot_cold policy", async () => {
  const disks = await rowsOf<{ name: string }>(client, 'SELECT name FROM system.disks ORDER BY name');
  expect(disks.map((d) => d.name)).toEqual(['cold', 'default']);
  await client.command({
    query: `CREATE TABLE ${DB}.tiered (ts DateTime, n UInt32) ENGINE = MergeTree ORDER BY ts
            SETTINGS storage_policy = 'hot_cold'`,
  });
  await client.insert({
    table: `${DB}.tiered`,
    values: [{ ts: '2020-01-01 00:00:00', n: 1 }],
    format: 'JSONEachRow',
  });
  await client.insert({
    table: `${DB}.tiered`,
    values: [{ ts: '2099-01-01 00:00:00', n: 2 }],
    format: 'JSONEachRow',
  });
  // Where each row's part lives, by the MergeTree virtual column.
  const placement = () =>
    rowsOf<{ n: number; disk: string }>(client, `SELECT n, _disk_name AS disk FROM ${DB}.tiered ORDER BY n`);
  expect(await placement()).toEqual([
    { n: 1, disk: 'default' },
    { n: 2, disk: 'default' },
  ]);
  // MODIFY TTL materializes the new TTL: the part whose rows are past it moves to the cold disk.
  await client.command({
    query: `ALTER TABLE ${DB}.tiered MODIFY TTL ts + INTERVAL 1 DAY TO DISK 'cold'`,
    clickhouse_settings: { mutations_sync: '2' },
  });
  let rows = await placement();
  // The move runs in the background; wait for it (up to 60 s on a loaded machine).
  for (const deadline = Date.now() + 60_000; rows[0]?.disk !== 'cold' && Date.now() < deadline;) {
    await new Promise((r) => setTimeout(r, 200));
    rows = await placement();
  }
  expect(rows).toEqual([
    { n: 1, disk: 'cold' },
    { n: 2, disk: 'default' },
  ]);
  const [part] = await rowsOf<{ path: string }>(
    client,
    "SELECT path FROM system.parts WHERE database = {db:String} AND table = 'tiered' AND active AND disk_name = 'cold'",
    { db: DB },
  );
  expect(part.path.startsWith(chBed().dataDir)).toBe(true);
  const [sum] = await rowsOf<{ s: string }>(client, `SELECT sum(n) AS s FROM ${DB}.tiered`);
  expect(Number(sum.s)).toBe(3);
}, 60_000);
