/**
 * Fixed-shape companion tables of a pipeline. Other components read and write them, so their
 * columns are a contract (identifiers with backticks in SQL: `partition` and `offset` are keywords):
 *
 * `<table>_dlq` — one row per line the worker could not parse or the table rejected:
 *   ts DateTime64(3,'UTC') (when the worker rejected it), reason LowCardinality(String),
 *   raw String (the line as received), topic LowCardinality(String), partition UInt32, offset UInt64.
 *   Same retention (moves and delete) as the data table: unparsed lines are still logs to keep.
 *
 * `<table>_integrity` — one row per batch inserted into the data table (a hash-chain link):
 *   pipeline, table_name LowCardinality(String); partition UInt32 (Kafka partition);
 *   first_offset, last_offset, row_count UInt64; min_ts, max_ts DateTime64(3,'UTC') of the batch rows;
 *   batch_digest FixedString(64) (hex SHA-256 of the batch's canonical encoding);
 *   prev_link String, link String (hex; link = H(prev_link || batch_digest || …) per partition);
 *   inserted_at DateTime64(3,'UTC'). Deleted with the same delay as the data, on inserted_at.
 *
 * `<table>_checkpoints` — one row per signed checkpoint, never deleted by TTL (one row per interval):
 *   created_at DateTime64(3,'UTC'), heads String (JSON: partition -> link), signature String
 *   (base64 Ed25519 over heads), public_key String (the signing key's fingerprint `sha256:<hex>`, also inside the signed JSON), tsa_token String (base64 RFC 3161, or '').
 *
 * `<table>_seals` — one row per sealed day (`logpipeline seal`, docs/compliance.md), never deleted by TTL:
 *   day Date (UTC), pipeline, table_name LowCardinality(String), created_at DateTime64(3,'UTC'),
 *   export_sha256 FixedString(64) (hex SHA-256 of the day's canonical export), row_count UInt64,
 *   manifest String (canonical JSON), signature String (base64 Ed25519 over manifest),
 *   tsa_token String (base64 RFC 3161 token over SHA-256 of manifest, or '').
 *
 * `<table>_parser_stats` — one row per worker and coverage window (consumer/src/observability/parser-coverage.ts):
 *   window_start, window_end DateTime64(3,'UTC'); worker LowCardinality(String); rows, missing_src_ip,
 *   missing_dst_ip UInt64; by_vendor Map(LowCardinality(String), UInt64); shapes Map(String, UInt64)
 *   (`<vendor>#<hash>` of lines without src_ip, never line content). Kept 7 days: it feeds the
 *   ParserCoverage condition, not the archive.
 */
import type { ColumnSpec } from '../../api/types';
import type { ResolvedSpec } from '../../api/defaults';
import { parseDuration } from '../../api/duration';
import { quoteIdentifier } from '../../../../common/src/sql/identifiers';
import { resolveColumn, type TableSchema } from './schema';
import { buildTtlRules, renderTtl, type TtlRule } from './ttl';

const TS = "DateTime64(3, 'UTC')";
const TIME = ['Delta(8)', 'T64', 'ZSTD(1)'];
const Z = ['ZSTD(1)'];

const DLQ_COLUMNS: ColumnSpec[] = [
  { name: 'ts', type: TS, codec: TIME },
  { name: 'reason', type: 'LowCardinality(String)', codec: Z },
  { name: 'raw', type: 'String', codec: ['ZSTD(3)'] },
  { name: 'topic', type: 'LowCardinality(String)', codec: Z },
  { name: 'partition', type: 'UInt32', codec: Z },
  { name: 'offset', type: 'UInt64', codec: ['Delta(8)', 'ZSTD(1)'] },
];

const INTEGRITY_COLUMNS: ColumnSpec[] = [
  { name: 'pipeline', type: 'LowCardinality(String)' },
  { name: 'table_name', type: 'LowCardinality(String)' },
  { name: 'partition', type: 'UInt32' },
  { name: 'first_offset', type: 'UInt64' },
  { name: 'last_offset', type: 'UInt64' },
  { name: 'row_count', type: 'UInt64' },
  { name: 'min_ts', type: TS },
  { name: 'max_ts', type: TS },
  { name: 'batch_digest', type: 'FixedString(64)' },
  { name: 'prev_link', type: 'String' },
  { name: 'link', type: 'String' },
  { name: 'inserted_at', type: TS },
];

const CHECKPOINT_COLUMNS: ColumnSpec[] = [
  { name: 'created_at', type: TS },
  { name: 'heads', type: 'String' },
  { name: 'signature', type: 'String' },
  { name: 'public_key', type: 'String' },
  { name: 'tsa_token', type: 'String' },
];

const SEAL_COLUMNS: ColumnSpec[] = [
  { name: 'day', type: 'Date' },
  { name: 'pipeline', type: 'LowCardinality(String)' },
  { name: 'table_name', type: 'LowCardinality(String)' },
  { name: 'created_at', type: TS },
  { name: 'export_sha256', type: 'FixedString(64)' },
  { name: 'row_count', type: 'UInt64' },
  { name: 'manifest', type: 'String', codec: Z },
  { name: 'signature', type: 'String' },
  { name: 'tsa_token', type: 'String' },
];

function auxSchema(
  columns: ColumnSpec[],
  timeColumn: string,
  partitionFn: string,
  orderBy: string[],
  ttlRules: TtlRule[],
): TableSchema {
  const resolved = columns.map((c) => resolveColumn(c, {}));
  return {
    columns: resolved,
    partitionBy: `${partitionFn}(${quoteIdentifier(timeColumn)})`,
    orderBy: orderBy.map((c) => quoteIdentifier(c)),
    skipIndexes: [],
    timeColumn,
    ttlRules,
    ttl: ttlRules.length > 0 ? renderTtl(ttlRules, timeColumn, true) : '',
  };
}

const PARSER_STATS_COLUMNS: ColumnSpec[] = [
  { name: 'window_start', type: TS },
  { name: 'window_end', type: TS },
  { name: 'worker', type: 'LowCardinality(String)' },
  { name: 'rows', type: 'UInt64' },
  { name: 'missing_src_ip', type: 'UInt64' },
  { name: 'missing_dst_ip', type: 'UInt64' },
  { name: 'by_vendor', type: 'Map(LowCardinality(String), UInt64)' },
  { name: 'shapes', type: 'Map(String, UInt64)' },
];

/** Schema of the parser-coverage stats table: ordered by time, deleted after 7 days. */
export function parserStatsSchema(): TableSchema {
  const rules = buildTtlRules({ deleteAfterMs: 7 * 86_400_000, moves: [] }, parseDuration);
  return auxSchema(PARSER_STATS_COLUMNS, 'window_end', 'toYYYYMMDD', ['window_end', 'worker'], rules);
}

/** Schema of the dead-letter table: ordered by time, same tiered retention as the data. */
export function deadLetterSchema(spec: ResolvedSpec): TableSchema {
  const rules = buildTtlRules(spec.clickhouse.retention, parseDuration);
  return auxSchema(DLQ_COLUMNS, 'ts', 'toYYYYMMDD', ['ts', 'partition', 'offset'], rules);
}

/** Schema of the integrity-link table: ordered by chain position, delete-only retention. */
export function integritySchema(spec: ResolvedSpec): TableSchema {
  const rules = buildTtlRules(
    { deleteAfterMs: spec.clickhouse.retention.deleteAfterMs, moves: [] },
    parseDuration,
  );
  return auxSchema(INTEGRITY_COLUMNS, 'inserted_at', 'toYYYYMM', ['partition', 'first_offset'], rules);
}

/** Schema of the signed-checkpoint table: ordered by time, no TTL. */
export function checkpointSchema(): TableSchema {
  return auxSchema(CHECKPOINT_COLUMNS, 'created_at', 'toYYYYMM', ['created_at'], []);
}

/** Schema of the daily-seal table: one row per sealed day, ordered by (table, day), no TTL. */
export function sealSchema(): TableSchema {
  return auxSchema(SEAL_COLUMNS, 'day', 'toYear', ['table_name', 'day'], []);
}
