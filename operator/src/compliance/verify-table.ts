/**
 * What verify needs to know about the data table from ClickHouse itself: its stored columns in
 * declared order, whether it has the provenance columns, and the retention its TTL enforces (the
 * delete rule of `engine_full`), so rows removed by TTL are reported as expired, not tampered.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { CanonicalColumn } from '../../../common/src/integrity/canonical-ops';
import { parseTtl } from '../desired/clickhouse/ttl';

/** The data table as verify sees it. */
export interface TableDescription {
  /** Stored columns (no MATERIALIZED / ALIAS / EPHEMERAL), in declared order. */
  columns: CanonicalColumn[];
  hasLine: boolean;
  /** Provenance columns: kafka_partition/kafka_offset/kafka_line, or partition/offset of a DLQ table. */
  partitionColumn: string;
  offsetColumn: string;
  lineColumn: string;
  /** Delete-after of the TTL, in ms; undefined when the table has no delete TTL. */
  retentionMs?: number;
}

/** Extracts the delete delay from an engine_full text (`… TTL <rules> SETTINGS …`). */
export function retentionFromEngineFull(engineFull: string): number | undefined {
  const m = /\sTTL\s+(.*?)(?:\s+SETTINGS\s|$)/s.exec(engineFull);
  if (!m) return undefined;
  const ttl = parseTtl(m[1]);
  const del = ttl?.rules.find((r) => r.action.kind === 'delete');
  return del ? del.seconds * 1000 : undefined;
}

/** Reads columns and TTL of `database.table`; throws when the table or its provenance columns are missing. */
export async function describeTable(
  client: ClickHouseClient,
  database: string,
  table: string,
): Promise<TableDescription> {
  const params = { db: database, t: table };
  const tables = await (
    await client.query({
      query: 'SELECT engine_full FROM system.tables WHERE database = {db:String} AND name = {t:String}',
      query_params: params,
      format: 'JSONEachRow',
    })
  ).json<{ engine_full: string }>();
  if (tables.length === 0) throw new Error(`table ${database}.${table} does not exist`);
  const cols = await (
    await client.query({
      query:
        "SELECT name, type FROM system.columns WHERE database = {db:String} AND table = {t:String} AND default_kind NOT IN ('MATERIALIZED', 'ALIAS', 'EPHEMERAL') ORDER BY position",
      query_params: params,
      format: 'JSONEachRow',
    })
  ).json<CanonicalColumn>();
  const names = new Set(cols.map((c) => c.name));
  // A dead-letter table (<table>_dlq) records its provenance as `partition` and `offset`.
  const dlq = !names.has('kafka_partition') && names.has('partition') && names.has('offset');
  const [partitionColumn, offsetColumn] = dlq ? ['partition', 'offset'] : ['kafka_partition', 'kafka_offset'];
  for (const required of [partitionColumn, offsetColumn]) {
    if (!names.has(required))
      throw new Error(
        `table ${database}.${table} has no ${required} column: rows cannot be matched to integrity links`,
      );
  }
  return {
    columns: cols,
    hasLine: names.has('kafka_line'),
    partitionColumn,
    offsetColumn,
    lineColumn: 'kafka_line',
    retentionMs: retentionFromEngineFull(tables[0].engine_full),
  };
}
