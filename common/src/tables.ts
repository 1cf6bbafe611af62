/**
 * The fixed-shape companion tables of a pipeline. The operator creates them
 * (operator/src/desired/clickhouse/aux-tables.ts), the worker writes them and the CLI reads them, so
 * their columns are a contract kept in one place (identifiers with backticks in SQL: `partition` and `offset` are keywords):
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

/** One column of a companion table: name, ClickHouse type and (for the DDL) its compression codecs. */
export interface TableColumn {
  readonly name: string;
  readonly type: string;
  readonly codec?: readonly string[];
}

const TS = "DateTime64(3, 'UTC')";
const TIME = ['Delta(8)', 'T64', 'ZSTD(1)'];
const Z = ['ZSTD(1)'];

/** Columns of the `<table>_dlq` table, in insert order. */
export const DLQ_COLUMNS: readonly TableColumn[] = [
  { name: 'ts', type: TS, codec: TIME },
  { name: 'reason', type: 'LowCardinality(String)', codec: Z },
  { name: 'raw', type: 'String', codec: ['ZSTD(3)'] },
  { name: 'topic', type: 'LowCardinality(String)', codec: Z },
  { name: 'partition', type: 'UInt32', codec: Z },
  { name: 'offset', type: 'UInt64', codec: ['Delta(8)', 'ZSTD(1)'] },
];

/** Columns of the `<table>_integrity` table, in insert order. */
export const INTEGRITY_COLUMNS: readonly TableColumn[] = [
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

/** Columns of the `<table>_checkpoints` table, in insert order. */
export const CHECKPOINT_COLUMNS: readonly TableColumn[] = [
  { name: 'created_at', type: TS },
  { name: 'heads', type: 'String' },
  { name: 'signature', type: 'String' },
  { name: 'public_key', type: 'String' },
  { name: 'tsa_token', type: 'String' },
];

/** Columns of the `<table>_seals` table, in insert order. */
export const SEAL_COLUMNS: readonly TableColumn[] = [
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

/** Columns of the `<table>_parser_stats` table, in insert order. */
export const PARSER_STATS_COLUMNS: readonly TableColumn[] = [
  { name: 'window_start', type: TS },
  { name: 'window_end', type: TS },
  { name: 'worker', type: 'LowCardinality(String)' },
  { name: 'rows', type: 'UInt64' },
  { name: 'missing_src_ip', type: 'UInt64' },
  { name: 'missing_dst_ip', type: 'UInt64' },
  { name: 'by_vendor', type: 'Map(LowCardinality(String), UInt64)' },
  { name: 'shapes', type: 'Map(String, UInt64)' },
];

/** The column names of a companion table, in insert order. */
export function columnNames(columns: readonly TableColumn[]): string[] {
  return columns.map((c) => c.name);
}
