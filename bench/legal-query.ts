/**
 * Legal-query benchmark: `node dist/bench/legal-query.js [--rows 10000000] [--days 7] [--queries 15]
 * [--projection none|offset|full|both] [--keep]`. Builds the operator's default firewall table (ORDER BY (src_ip, ts),
 * day partitions, bloom filter on dst_ip), fills it server-side with INSERT … SELECT FROM numbers()
 * (ISP-like traffic: skewed subscriber sources in CGNAT space plus IPv6, Zipf-like destinations),
 * then times `logpipeline query`'s SQL over HTTP with @clickhouse/client for one-day windows:
 * source lookups, destination lookups of rare/medium/popular addresses, the OR shape, the dst side
 * without skip indexes, the CGNAT question (public address + port, idx_nat_src) with and without
 * the skip index, and optionally (dst_ip, ts) projections: a full copy, or only _part_offset. Prints JSON with median latency
 * and the rows left to read after index analysis (EXPLAIN ESTIMATE). Uses the recorded test bed's ClickHouse, else starts its own.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { buildLegalQuery, buildNatQuery } from '../operator/src/compliance/legal-query';
import { buildTableDDL, ddlStatements } from '../operator/src/desired/clickhouse';
import { resolved } from '../test/fixtures/clickhouse-testing';
import { benchClient, connectBed, option, runBenchMain } from './clickhouse-bench';

const DAY = 86_400_000;
const START = Date.UTC(2026, 10, 1);
const SUBSCRIBERS = 200_000;
const DESTINATIONS = 1_000_000;
const REPEATS = 3;
/** Public addresses of the simulated CGNAT pool (198.51.100.0/26). */
const NAT_POOL = 64;
/** Each legal query asks for a new address: no cached granule verdicts from an earlier run may help. */
const COLD = { use_query_condition_cache: 0 } as const;

function median(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

/**
 * Row `number` of the generated traffic. u(k) is a deterministic uniform [0,1) per row and salt;
 * pow(u, 3) skews subscribers (a few heavy users), pow(u, 5) skews destinations (CDNs, DNS).
 */
function insertSql(db: string, rows: number, days: number): string {
  const u = (k: number) => `(cityHash64(number, ${k}) % 1000000) / 1000000.0`;
  const sub = `toUInt32(floor(pow(${u(1)}, 3) * ${SUBSCRIBERS}))`;
  const dst = `toUInt32(floor(pow(${u(2)}, 5) * ${DESTINATIONS}))`;
  const src = `if(${sub} % 10 = 0, toIPv6(concat('2a02:ff0:', lower(hex(toUInt16(${sub} % 65536))), '::', lower(hex(toUInt16(intDiv(${sub}, 7) % 65536))))), toIPv6(toIPv4(1681915904 + ${sub})))`;
  const dstIp = `if(${dst} % 20 = 0, toIPv6(concat('2606:4700::', lower(hex(toUInt16(${dst} % 65536))))), toIPv6(toIPv4(134217728 + ${dst} * 37)))`;
  const ts = `fromUnixTimestamp64Milli(toInt64(${START} + intDiv(number * ${days * DAY}, ${rows})))`;
  // CGNAT: every IPv4 subscriber leaves through one of NAT_POOL public addresses and a random port.
  const natIp = `if(${sub} % 10 = 0, toIPv6('::'), toIPv6(toIPv4(3325256704 + cityHash64(number, 9) % ${NAT_POOL})))`;
  const natPort = `if(${sub} % 10 = 0, 0, toUInt16(1024 + cityHash64(number, 10) % 64000))`;
  return `INSERT INTO \`${db}\`.fw (ts, ingest_ts, vendor, device, src_ip, dst_ip, src_port, dst_port, nat_src_ip, nat_src_port, proto, action, bytes, rule, severity, raw, kafka_partition, kafka_offset)
SELECT ${ts}, ${ts} + toIntervalSecond(1), 'fortigate', concat('fw-', toString(number % 8)), ${src}, ${dstIp},
  toUInt16(1024 + cityHash64(number, 3) % 64000), [443, 80, 53, 123, 8080, 22][1 + cityHash64(number, 4) % 6], ${natIp}, ${natPort},
  ['tcp', 'udp', 'icmp'][1 + cityHash64(number, 5) % 3], ['allow', 'allow', 'allow', 'deny', 'drop'][1 + cityHash64(number, 6) % 5],
  cityHash64(number, 7) % 100000, concat('rule-', toString(cityHash64(number, 8) % 50)), 'notice',
  concat('date=2026-11-01 devname=fw-', toString(number % 8), ' type=traffic subtype=forward srcip=', toString(${src}), ' dstip=', toString(${dstIp}), ' action=accept policyid=', toString(number % 50), ' sentbyte=', toString(cityHash64(number, 7) % 100000)),
  toUInt16(number % 12), intDiv(number, 12)
FROM numbers(${rows}) SETTINGS max_insert_threads = 2, max_block_size = 65536`;
}

interface Timing {
  /** Median over the addresses of each address's best-of-3 latency (wall clock, HTTP round trip included). */
  medianMs: number;
  p90Ms: number;
  /** Median rows left to read after partition, primary-key and skip-index pruning (EXPLAIN ESTIMATE). */
  medianRowsToRead: number;
  medianRowsReturned: number;
  queries: number;
}

async function timeQueries(
  client: ClickHouseClient,
  sql: string,
  ips: Array<string | Record<string, string | number>>,
  window: { from: number; to: number },
  settings: Record<string, string> = {},
): Promise<Timing> {
  const ms: number[] = [];
  const read: number[] = [];
  const returned: number[] = [];
  for (const ip of ips) {
    // Best of REPEATS per address: the machine is shared, the minimum is the query's own cost.
    let best = Number.POSITIVE_INFINITY;
    let lines = 0;
    for (let r = 0; r < REPEATS; r++) {
      const started = process.hrtime.bigint();
      const res = await client.exec({
        query: `${sql} FORMAT JSONEachRow`,
        query_params: { ...(typeof ip === 'string' ? { ip } : ip), ...window },
        clickhouse_settings: { wait_end_of_query: 1, ...COLD, ...settings },
      });
      lines = 0;
      for await (const chunk of res.stream) for (const b of chunk as Buffer) if (b === 10) lines++;
      best = Math.min(best, Number(process.hrtime.bigint() - started) / 1e6);
    }
    ms.push(best);
    returned.push(lines);
    // Rows the index analysis leaves to read (granules x rows), the same for any server build.
    const est = await client.query({
      query: `EXPLAIN ESTIMATE ${sql}`,
      query_params: { ...(typeof ip === 'string' ? { ip } : ip), ...window },
      clickhouse_settings: settings,
      format: 'JSONEachRow',
    });
    read.push((await est.json<{ rows: string }>()).reduce((n, r) => n + Number(r.rows), 0));
  }
  const sorted = [...ms].sort((a, b) => a - b);
  return {
    medianMs: Math.round(median(ms) * 10) / 10,
    p90Ms: Math.round(sorted[Math.floor(sorted.length * 0.9)] * 10) / 10,
    medianRowsToRead: median(read),
    medianRowsReturned: median(returned),
    queries: ips.length,
  };
}

async function sampleIps(
  client: ClickHouseClient,
  db: string,
  column: string,
  window: { from: number; to: number },
  n: number,
): Promise<Record<string, string[]>> {
  // Destinations by popularity bands within the window: the legal query is asked for any address.
  const rs = await client.query({
    query: `SELECT toString(${column}) AS ip, count() AS c FROM \`${db}\`.fw WHERE ts >= fromUnixTimestamp64Milli(${window.from}) AND ts <= fromUnixTimestamp64Milli(${window.to}) GROUP BY ip ORDER BY c DESC`,
    format: 'JSONEachRow',
  });
  const all = (await rs.json<{ ip: string; c: string }>()).map((r) => r.ip);
  const pick = (from: number, to: number) =>
    Array.from({ length: n }, (_, i) => all[Math.floor(from + ((to - from) * i) / n)]);
  return {
    popular: pick(0, Math.min(50, all.length)),
    medium: pick(all.length * 0.1, all.length * 0.2),
    rare: pick(all.length * 0.9, all.length - 1),
    spread: pick(0, all.length - 1),
  };
}

/** (public address, port) pairs that occur in the window: the CGNAT question is asked for real sessions. */
async function samplePairs(
  client: ClickHouseClient,
  db: string,
  window: { from: number; to: number },
  n: number,
): Promise<Array<Record<string, string | number>>> {
  const rs = await client.query({
    query: `SELECT toString(nat_src_ip) AS nat_ip, nat_src_port AS nat_port FROM \`${db}\`.fw WHERE nat_src_port != 0 AND ts >= fromUnixTimestamp64Milli(${window.from}) AND ts <= fromUnixTimestamp64Milli(${window.to}) ORDER BY cityHash64(kafka_offset, kafka_partition) LIMIT ${n}`,
    format: 'JSONEachRow',
  });
  return (await rs.json<{ nat_ip: string; nat_port: number }>()).map((r) => ({
    nat_ip: r.nat_ip,
    nat_port: Number(r.nat_port),
  }));
}

async function storage(client: ClickHouseClient, db: string): Promise<Record<string, number>> {
  const q = async (sql: string) =>
    Number(
      (
        (await (await client.query({ query: sql, format: 'JSONEachRow' })).json<{ b: string }>())[0] ?? {
          b: 0,
        }
      ).b,
    );
  return {
    // A part's bytes_on_disk includes its projection parts.
    totalMB: Math.round(
      (await q(
        `SELECT sum(bytes_on_disk) AS b FROM system.parts WHERE database = '${db}' AND table = 'fw' AND active`,
      )) / 1e6,
    ),
    projectionMB: Math.round(
      (await q(
        `SELECT sum(bytes_on_disk) AS b FROM system.projection_parts WHERE database = '${db}' AND table = 'fw' AND active`,
      )) / 1e6,
    ),
  };
}

function optionText(argv: string[], name: string, fallback: string): string {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
}

const PROJECTIONS = {
  // Every column again, sorted by destination: dst lookups become primary-key lookups.
  full: 'by_dst (SELECT * ORDER BY dst_ip, ts)',
  // Only the sort key and the row's position in its part: a secondary index, rows read from the table.
  offset: 'by_dst_offset (SELECT _part_offset ORDER BY dst_ip, ts)',
} as const;

async function dropProjections(client: ClickHouseClient, db: string): Promise<void> {
  for (const name of ['by_dst', 'by_dst_offset', 'by_dst_idx']) {
    await client.command({
      query: `ALTER TABLE \`${db}\`.fw DROP PROJECTION IF EXISTS ${name}`,
      clickhouse_settings: { mutations_sync: '2' },
    });
  }
}

/** Adds one projection variant, times dst (and src) lookups with it, then drops it again. */
async function withProjection(
  client: ClickHouseClient,
  db: string,
  kind: keyof typeof PROJECTIONS,
  sql: string,
  src: string[],
  dst: Record<string, string[]>,
  window: { from: number; to: number },
): Promise<Record<string, unknown>> {
  const t0 = Date.now();
  const name = PROJECTIONS[kind].split(' ')[0];
  await client.command({
    query: `ALTER TABLE \`${db}\`.fw ADD PROJECTION IF NOT EXISTS ${PROJECTIONS[kind]}`,
  });
  await client.command({
    query: `ALTER TABLE \`${db}\`.fw MATERIALIZE PROJECTION ${name}`,
    clickhouse_settings: { mutations_sync: '2' },
  });
  const out: Record<string, unknown> = {
    [`${kind}Projection`]: {
      definition: PROJECTIONS[kind],
      buildSeconds: (Date.now() - t0) / 1000,
      storage: await storage(client, db),
    },
    [`dstLookupRare_${kind}Projection`]: await timeQueries(client, sql, dst.rare, window),
    [`dstLookupMedium_${kind}Projection`]: await timeQueries(client, sql, dst.medium, window),
    [`dstLookupPopular_${kind}Projection`]: await timeQueries(client, sql, dst.popular, window),
    [`srcLookup_${kind}Projection`]: await timeQueries(client, sql, src, window),
  };
  await dropProjections(client, db);
  return out;
}

/** Runs the benchmark; returns the JSON result. */
export async function runLegalQueryBench(argv: string[]): Promise<Record<string, unknown>> {
  const rows = option(argv, 'rows', 10_000_000);
  const days = option(argv, 'days', 7);
  const n = option(argv, 'queries', 15);
  const { bed, stop } = await connectBed('legal-query-bench-');
  const client = benchClient(bed);
  const db = `legal_bench_${rows}`;
  try {
    const spec = resolved({ database: db, table: 'fw', retention: { deleteAfter: '3650d' } });
    const ddl = buildTableDDL(spec);
    if (!ddl.ok) throw new Error(ddl.message);
    const existing = Number(
      (
        await (
          await client.query({
            query: `SELECT count() AS c FROM system.tables WHERE database = '${db}' AND name = 'fw'`,
            format: 'JSONEachRow',
          })
        ).json<{ c: string }>()
      )[0].c,
    );
    let generateSeconds = 0;
    // A kept table from an earlier run is measured from its default state.
    if (existing) await dropProjections(client, db);
    if (!existing) {
      for (const sql of ddlStatements(ddl.value).slice(0, 2)) await client.command({ query: sql });
      const t0 = Date.now();
      await client.command({ query: insertSql(db, rows, days) });
      await client.command({ query: `OPTIMIZE TABLE \`${db}\`.fw FINAL` });
      generateSeconds = (Date.now() - t0) / 1000;
    }
    const window = { from: START + 3 * DAY, to: START + 4 * DAY - 1 };
    const src = await sampleIps(client, db, 'src_ip', window, n);
    const dst = await sampleIps(client, db, 'dst_ip', window, n);
    const union = buildLegalQuery({ database: db, table: 'fw' }, 'union');
    const or = buildLegalQuery({ database: db, table: 'fw' }, 'or');
    const result: Record<string, unknown> = {
      rows,
      days,
      windowDays: 1,
      generateSeconds,
      orderBy: ddl.value.tables[0].schema.orderBy,
      skipIndexes: ddl.value.tables[0].schema.skipIndexes,
      storage: await storage(client, db),
      srcLookup: await timeQueries(client, union, src.spread, window),
      srcLookupPopular: await timeQueries(client, union, src.popular, window),
      dstLookupRare: await timeQueries(client, union, dst.rare, window),
      dstLookupMedium: await timeQueries(client, union, dst.medium, window),
      dstLookupPopular: await timeQueries(client, union, dst.popular, window),
      dstLookupRareWithoutSkipIndex: await timeQueries(client, union, dst.rare, window, {
        use_skip_indexes: '0',
      }),
      orShapeSrc: await timeQueries(client, or, src.spread, window),
    };
    const pairs = await samplePairs(client, db, window, n);
    const natSql = buildNatQuery({ database: db, table: 'fw' }, true);
    result.natLookup = await timeQueries(client, natSql, pairs, window);
    result.natLookupWithoutSkipIndex = await timeQueries(client, natSql, pairs, window, {
      use_skip_indexes: '0',
    });
    const projection = optionText(argv, 'projection', 'none');
    if (projection === 'offset' || projection === 'both')
      Object.assign(result, await withProjection(client, db, 'offset', union, src.spread, dst, window));
    if (projection === 'full' || projection === 'both')
      Object.assign(result, await withProjection(client, db, 'full', union, src.spread, dst, window));
    if (!argv.includes('--keep')) await client.command({ query: `DROP DATABASE IF EXISTS \`${db}\`` });
    return result;
  } finally {
    await client.close();
    await stop?.();
  }
}

if (require.main === module) runBenchMain(runLegalQueryBench);
