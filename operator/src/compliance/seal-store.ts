/**
 * Reads and writes of the daily seal: the facts a manifest records (chain heads and checkpoints
 * covering the day, the signed column list) and the `<table>_seals` rows that keep manifests,
 * signatures and timestamp tokens beside the data. Identifiers are validated and quoted; values are
 * bound as query parameters or rendered from JS integers by this code.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { CanonicalColumn } from '../../../common/src/integrity/canonical-ops';
import { msText } from '../../../common/src/integrity/chain';
import { qualifiedName } from '../../../common/src/sql/identifiers';
import type { SealChainHead, SealCheckpointRef } from './seal-manifest';

/** The tables a seal reads and writes. */
export interface SealTables {
  database: string;
  table: string;
  integrityTable: string;
  checkpointTable: string;
  sealTable: string;
}

/** Default companion names of a data table. */
export function sealTables(database: string, table: string): SealTables {
  return {
    database,
    table,
    integrityTable: `${table}_integrity`,
    checkpointTable: `${table}_checkpoints`,
    sealTable: `${table}_seals`,
  };
}

/** A stored seal: the manifest text, base64 signature and token, as kept in `<table>_seals`. */
export interface SealRecord {
  day: string;
  pipeline: string;
  table_name: string;
  created_at_ms: number;
  export_sha256: string;
  row_count: number;
  manifest: string;
  signature: string;
  tsa_token: string;
}

async function rows<T>(
  client: ClickHouseClient,
  query: string,
  params: Record<string, unknown>,
): Promise<T[]> {
  return (await client.query({ query, query_params: params, format: 'JSONEachRow' })).json<T>();
}

function pipelineFilter(pipeline: string | undefined): string {
  return pipeline ? ' AND pipeline = {pipeline:String}' : '';
}

/** Distinct pipelines whose links have rows on the day (at most 2 are read: more than one is ambiguous). */
export async function pipelinesOfDay(
  client: ClickHouseClient,
  t: SealTables,
  fromMs: number,
  toMs: number,
): Promise<string[]> {
  const out = await rows<{ pipeline: string }>(
    client,
    `SELECT DISTINCT pipeline FROM ${qualifiedName(t.database, t.integrityTable)} WHERE table_name = {table:String} ` +
      'AND max_ts >= fromUnixTimestamp64Milli({from:Int64}) AND min_ts < fromUnixTimestamp64Milli({to:Int64}) LIMIT 2',
    { table: t.table, from: fromMs, to: toMs },
  );
  return out.map((r) => r.pipeline);
}

/** Per partition: the links whose batch has rows on the day, first and last (the day's chain heads). */
export async function chainHeadsOfDay(
  client: ClickHouseClient,
  t: SealTables,
  pipeline: string | undefined,
  fromMs: number,
  toMs: number,
): Promise<SealChainHead[]> {
  const out = await rows<Record<string, string | number>>(
    client,
    'SELECT `partition` AS p, count() AS n, min(first_offset) AS f, max(last_offset) AS l, ' +
      'argMin(prev_link, first_offset) AS prev, argMax(link, first_offset) AS head ' +
      `FROM ${qualifiedName(t.database, t.integrityTable)} WHERE table_name = {table:String}${pipelineFilter(pipeline)} ` +
      'AND max_ts >= fromUnixTimestamp64Milli({from:Int64}) AND min_ts < fromUnixTimestamp64Milli({to:Int64}) ' +
      'GROUP BY p ORDER BY p SETTINGS output_format_json_quote_64bit_integers = 0',
    { table: t.table, pipeline, from: fromMs, to: toMs },
  );
  return out.map((r) => ({
    partition: Number(r.p),
    links: Number(r.n),
    first_offset: Number(r.f),
    last_offset: Number(r.l),
    prev_link: String(r.prev),
    link: String(r.head),
  }));
}

/**
 * Checkpoints covering the day: those created during it and the first one created after it (which
 * pins the day's last links). Id = SHA-256 (hex) of the signed heads text.
 */
export async function checkpointsOfDay(
  client: ClickHouseClient,
  t: SealTables,
  fromMs: number,
  toMs: number,
): Promise<SealCheckpointRef[]> {
  const cp = qualifiedName(t.database, t.checkpointTable);
  const select = `SELECT lower(hex(SHA256(heads))) AS id, toUnixTimestamp64Milli(created_at) AS at FROM ${cp} WHERE JSONExtractString(heads, 'table') = {table:String}`;
  const out = await rows<{ id: string; at: string | number }>(
    client,
    `SELECT id, at FROM (${select} AND created_at >= fromUnixTimestamp64Milli({from:Int64}) AND created_at < fromUnixTimestamp64Milli({to:Int64}) ` +
      `UNION ALL (${select} AND created_at >= fromUnixTimestamp64Milli({to:Int64}) ORDER BY created_at LIMIT 1)) ORDER BY at, id`,
    { table: t.table, from: fromMs, to: toMs },
  );
  return out.map((r) => ({ id: r.id, created_at: Number(r.at) }));
}

/** The column list and time column signed into the newest checkpoint of the table, if any. */
export async function signedColumns(
  client: ClickHouseClient,
  t: SealTables,
): Promise<{ columns: CanonicalColumn[]; timeColumn: string } | undefined> {
  const out = await rows<{ heads: string }>(
    client,
    `SELECT heads FROM ${qualifiedName(t.database, t.checkpointTable)} WHERE JSONExtractString(heads, 'table') = {table:String} ORDER BY created_at DESC LIMIT 1`,
    { table: t.table },
  );
  if (out.length === 0) return undefined;
  const payload = JSON.parse(out[0].heads) as { columns?: CanonicalColumn[]; time_column?: string };
  if (!Array.isArray(payload.columns) || typeof payload.time_column !== 'string') return undefined;
  return { columns: payload.columns, timeColumn: payload.time_column };
}

const RECORD_SELECT =
  'SELECT toString(day) AS day_text, pipeline, table_name, toUnixTimestamp64Milli(created_at) AS created_at_ms, export_sha256, row_count, manifest, signature, tsa_token';

function toRecord(r: Record<string, unknown>): SealRecord {
  const { day_text: day, ...rest } = r;
  return {
    ...(rest as unknown as SealRecord),
    day: String(day),
    created_at_ms: Number(r.created_at_ms),
    row_count: Number(r.row_count),
  };
}

/** The stored seal of a day (the earliest, should a concurrent run have written a second), or undefined. */
export async function readSeal(
  client: ClickHouseClient,
  t: SealTables,
  day: string,
): Promise<SealRecord | undefined> {
  const out = await rows<Record<string, unknown>>(
    client,
    `${RECORD_SELECT} FROM ${qualifiedName(t.database, t.sealTable)} WHERE table_name = {table:String} AND day = toDate({day:String}) ` +
      'ORDER BY created_at, manifest LIMIT 1',
    { table: t.table, day },
  );
  return out.length > 0 ? toRecord(out[0]) : undefined;
}

/** Days sealed in [fromDay, toDay] (YYYY-MM-DD), ascending. */
export async function sealedDays(
  client: ClickHouseClient,
  t: SealTables,
  fromDay: string,
  toDay: string,
): Promise<string[]> {
  const out = await rows<{ d: string }>(
    client,
    `SELECT DISTINCT toString(day) AS d FROM ${qualifiedName(t.database, t.sealTable)} WHERE table_name = {table:String} ` +
      'AND day >= toDate({from:String}) AND day <= toDate({to:String}) ORDER BY d',
    { table: t.table, from: fromDay, to: toDay },
  );
  return out.map((r) => r.d);
}

/** Local days (in `timeZone`) in [fromDay, toDay] on which the chain has rows (from the links' time ranges), ascending. */
export async function daysWithRows(
  client: ClickHouseClient,
  t: SealTables,
  pipeline: string | undefined,
  window: { fromDay: string; toDay: string; fromMs: number; toMs: number; timeZone: string },
): Promise<string[]> {
  const out = await rows<{ day: string }>(
    client,
    'SELECT DISTINCT toString(d) AS day FROM (SELECT arrayJoin(arrayMap(i -> toDate(min_ts, {tz:String}) + i, ' +
      'range(toUInt32(toDate(max_ts, {tz:String}) - toDate(min_ts, {tz:String})) + 1))) AS d ' +
      `FROM ${qualifiedName(t.database, t.integrityTable)} WHERE table_name = {table:String}${pipelineFilter(pipeline)} ` +
      'AND max_ts >= fromUnixTimestamp64Milli({from_ms:Int64}) AND min_ts < fromUnixTimestamp64Milli({to_ms:Int64})) ' +
      'WHERE d >= toDate({from:String}) AND d <= toDate({to:String}) ORDER BY day',
    {
      table: t.table,
      pipeline,
      tz: window.timeZone,
      from: window.fromDay,
      to: window.toDay,
      from_ms: window.fromMs,
      to_ms: window.toMs,
    },
  );
  return out.map((r) => r.day);
}

/**
 * Inserts a seal row. The deduplication token is the (pipeline, table, day): a concurrent second
 * run's insert is dropped by the server, so a day keeps one seal; the caller reads it back.
 */
export async function insertSeal(client: ClickHouseClient, t: SealTables, record: SealRecord): Promise<void> {
  await client.insert({
    table: qualifiedName(t.database, t.sealTable),
    values: [
      {
        day: record.day,
        pipeline: record.pipeline,
        table_name: record.table_name,
        created_at: msText(record.created_at_ms),
        export_sha256: record.export_sha256,
        row_count: record.row_count,
        manifest: record.manifest,
        signature: record.signature,
        tsa_token: record.tsa_token,
      },
    ],
    format: 'JSONEachRow',
    clickhouse_settings: {
      insert_deduplication_token: `seal:${record.pipeline}:${record.table_name}:${record.day}`,
    },
  });
}

/** True when the seal table exists (it is created by the operator with integrity enabled). */
export async function sealTableExists(client: ClickHouseClient, t: SealTables): Promise<boolean> {
  const out = await rows<{ n: string | number }>(
    client,
    'SELECT count() AS n FROM system.tables WHERE database = {db:String} AND name = {t:String}',
    { db: t.database, t: t.sealTable },
  );
  return Number(out[0]?.n ?? 0) > 0;
}
