/**
 * The legal query of Law 5651 — "all records for IP X between T1 and T2", X as source or as
 * destination. The address and the bounds are always bound parameters ({ip:IPv6}, {from:Int64},
 * {to:Int64}); identifiers are validated and quoted. Two shapes:
 *  - `union` (default): one branch per column, so the src_ip branch uses the primary key
 *    (src_ip, ts) and the dst_ip branch uses the dst_ip bloom-filter skip index; the second branch
 *    excludes rows the first returned (src = dst = X).
 *  - `or`: a single `src_ip = X OR dst_ip = X` scan, for comparison (no index can serve an OR
 *    across two columns, so it reads the whole window).
 */
import type { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { canonicalIp } from '../../../common/src/integrity/canonical-ip';
import { qualifiedName, quoteIdentifier } from '../../../common/src/sql/identifiers';

/** Where to look and which columns hold the addresses and the time. */
export interface LegalQueryTarget {
  database: string;
  table: string;
  srcColumn?: string;
  dstColumn?: string;
  timeColumn?: string;
}

/** Output formats offered to the requester. */
export const LEGAL_QUERY_FORMATS = {
  csv: 'CSVWithNames',
  tsv: 'TabSeparatedWithNames',
  json: 'JSONEachRow',
} as const;

/** Builds the parameterised SELECT (pure). `limit` caps rows (0 = none). */
export function buildLegalQuery(t: LegalQueryTarget, shape: 'union' | 'or' = 'union', limit = 0): string {
  const table = qualifiedName(t.database, t.table);
  const src = quoteIdentifier(t.srcColumn ?? 'src_ip', 'column');
  const dst = quoteIdentifier(t.dstColumn ?? 'dst_ip', 'column');
  const ts = quoteIdentifier(t.timeColumn ?? 'ts', 'column');
  const window = `${ts} >= fromUnixTimestamp64Milli({from:Int64}) AND ${ts} <= fromUnixTimestamp64Milli({to:Int64})`;
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError('limit must be a non-negative integer');
  const tail = ` ORDER BY ${ts}${limit > 0 ? ` LIMIT ${limit}` : ''}`;
  if (shape === 'or')
    return `SELECT * FROM ${table} WHERE (${src} = {ip:IPv6} OR ${dst} = {ip:IPv6}) AND ${window}${tail}`;
  return (
    `SELECT * FROM (SELECT * FROM ${table} WHERE ${src} = {ip:IPv6} AND ${window} ` +
    `UNION ALL SELECT * FROM ${table} WHERE ${dst} = {ip:IPv6} AND ${src} != {ip:IPv6} AND ${window})${tail}`
  );
}

/** Columns of the NAT (CGNAT) question; defaults are the firewall preset's. */
export interface NatQueryTarget {
  database: string;
  table: string;
  natIpColumn?: string;
  natPortColumn?: string;
  timeColumn?: string;
}

/**
 * "Who used public address P (port Q) between T1 and T2": rows whose translated source is P[:Q].
 * With a port, the WHERE also carries cityHash64(ip, port) = cityHash64(P, Q), the expression of the
 * firewall preset's `idx_nat_src` bloom filter, so only granules that saw the pair are read. Without
 * a port the answer is every subscriber behind P in the window (a CGNAT address is in every granule:
 * only the day partitions prune). Parameters: {nat_ip:IPv6}, {nat_port:UInt16}, {from}, {to}.
 */
export function buildNatQuery(t: NatQueryTarget, withPort: boolean, limit = 0): string {
  const table = qualifiedName(t.database, t.table);
  const ip = quoteIdentifier(t.natIpColumn ?? 'nat_src_ip', 'column');
  const port = quoteIdentifier(t.natPortColumn ?? 'nat_src_port', 'column');
  const ts = quoteIdentifier(t.timeColumn ?? 'ts', 'column');
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError('limit must be a non-negative integer');
  const window = `${ts} >= fromUnixTimestamp64Milli({from:Int64}) AND ${ts} <= fromUnixTimestamp64Milli({to:Int64})`;
  const pair = withPort
    ? ` AND ${port} = {nat_port:UInt16} AND cityHash64(${ip}, ${port}) = cityHash64({nat_ip:IPv6}, {nat_port:UInt16})`
    : '';
  return `SELECT * FROM ${table} WHERE ${ip} = {nat_ip:IPv6}${pair} AND ${window} ORDER BY ${ts}${limit > 0 ? ` LIMIT ${limit}` : ''}`;
}

/** Bound parameters of the NAT question; throws on an invalid address, port or window. */
export function natQueryParams(
  ip: string,
  port: number | undefined,
  fromMs: number,
  toMs: number,
): { nat_ip: string; nat_port?: number; from: number; to: number } {
  const base = legalQueryParams(ip, fromMs, toMs);
  if (port !== undefined && !(Number.isInteger(port) && port >= 1 && port <= 65535))
    throw new RangeError('the NAT port must be 1..65535');
  return { nat_ip: base.ip, ...(port !== undefined ? { nat_port: port } : {}), from: base.from, to: base.to };
}

/** Bound parameters for an address and a closed window in epoch ms; throws on an invalid address or window. */
export function legalQueryParams(
  ip: string,
  fromMs: number,
  toMs: number,
): { ip: string; from: number; to: number } {
  if (canonicalIp(ip) === null) throw new RangeError(`${JSON.stringify(ip)} is not an IPv4 or IPv6 address`);
  if (!Number.isSafeInteger(fromMs) || !Number.isSafeInteger(toMs) || fromMs > toMs)
    throw new RangeError('the window needs from <= to');
  return { ip, from: fromMs, to: toMs };
}

/** What the server reported for a finished legal query. */
export interface LegalQueryResult {
  /** The response body (rows in the chosen format), to be piped out. */
  stream: Readable;
  /** read_rows / read_bytes from X-ClickHouse-Summary when the server sends them. */
  summary?: { readRows: number; readBytes: number };
}

/** Runs the legal query and returns the streamed body (the caller pipes it to the requester). */
export async function runLegalQuery(
  client: ClickHouseClient,
  t: LegalQueryTarget,
  params: { ip: string; from: number; to: number },
  format: keyof typeof LEGAL_QUERY_FORMATS = 'csv',
  shape: 'union' | 'or' = 'union',
  limit = 0,
): Promise<LegalQueryResult> {
  return runSelect(client, buildLegalQuery(t, shape, limit), params, format);
}

/** Runs the NAT question (see buildNatQuery) and returns the streamed body. */
export async function runNatQuery(
  client: ClickHouseClient,
  t: NatQueryTarget,
  params: ReturnType<typeof natQueryParams>,
  format: keyof typeof LEGAL_QUERY_FORMATS = 'csv',
  limit = 0,
): Promise<LegalQueryResult> {
  return runSelect(client, buildNatQuery(t, params.nat_port !== undefined, limit), params, format);
}

async function runSelect(
  client: ClickHouseClient,
  sql: string,
  params: Record<string, unknown>,
  format: keyof typeof LEGAL_QUERY_FORMATS,
): Promise<LegalQueryResult> {
  const query = `${sql} FORMAT ${LEGAL_QUERY_FORMATS[format]}`;
  const res = await client.exec({
    query,
    query_params: params,
    clickhouse_settings: { wait_end_of_query: 1 },
  });
  const header = res.response_headers['x-clickhouse-summary'];
  let summary: LegalQueryResult['summary'];
  if (typeof header === 'string') {
    const s = JSON.parse(header) as { read_rows?: string; read_bytes?: string };
    summary = { readRows: Number(s.read_rows ?? 0), readBytes: Number(s.read_bytes ?? 0) };
  }
  return { stream: res.stream as Readable, summary };
}
