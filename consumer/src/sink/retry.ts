/**
 * The retry doctrine, enforced here and only here (see docs/architecture.md, "Retry doctrine"):
 * - `unavailable`: the sink cannot take ANY batch now (network, timeouts, overload, missing table
 *   or column, credentials, read-only, disk full). Retried without limit, with backoff, and shown
 *   as a condition — waiting is the only way not to lose rows.
 * - `data`: ClickHouse refuses these rows. Resolved in bounded attempts: bisect, store the rest,
 *   dead-letter the culprits with ClickHouse's message.
 * - `split`: the rows are fine but too many for one INSERT (e.g. more partitions than
 *   max_partitions_per_insert_block): split into smaller inserts with derived tokens, never retried whole.
 * - `unknown`: a server error this table does not know. A few retries (it may be transient), then
 *   treated as `data` (bisection), so an unknown code can never stall a partition.
 */
import { ClickHouseError } from '@clickhouse/client';

/** The verdict on a failed INSERT (coarse, for callers that only bisect or retry). */
export type FailureKind = 'retriable' | 'rejected';

/** The doctrine's class of a failed INSERT. */
export type ErrorClass = 'unavailable' | 'data' | 'split' | 'unknown';

/** Attempts (whole batch, same bytes) an `unknown` error gets before the batch is bisected. */
export const UNKNOWN_ERROR_ATTEMPTS = 5;

/** ClickHouse error names with their numeric codes and doctrine class. */
export const CLICKHOUSE_ERROR_CLASSES: Readonly<Record<string, { code: string; cls: ErrorClass }>> = {
  // The rows themselves are wrong.
  CANNOT_PARSE_TEXT: { code: '6', cls: 'data' },
  CANNOT_PARSE_ESCAPE_SEQUENCE: { code: '25', cls: 'data' },
  CANNOT_PARSE_QUOTED_STRING: { code: '26', cls: 'data' },
  CANNOT_PARSE_INPUT_ASSERTION_FAILED: { code: '27', cls: 'data' },
  ATTEMPT_TO_READ_AFTER_EOF: { code: '32', cls: 'data' },
  CANNOT_READ_ALL_DATA: { code: '33', cls: 'data' },
  CANNOT_PARSE_DATE: { code: '38', cls: 'data' },
  CANNOT_PARSE_DATETIME: { code: '41', cls: 'data' },
  TYPE_MISMATCH: { code: '53', cls: 'data' },
  CANNOT_CONVERT_TYPE: { code: '70', cls: 'data' },
  CANNOT_PARSE_NUMBER: { code: '72', cls: 'data' },
  INCORRECT_DATA: { code: '117', cls: 'data' },
  TOO_LARGE_STRING_SIZE: { code: '131', cls: 'data' },
  VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE: { code: '321', cls: 'data' },
  CANNOT_INSERT_NULL_IN_ORDINARY_COLUMN: { code: '349', cls: 'data' },
  CANNOT_PARSE_UUID: { code: '376', cls: 'data' },
  DECIMAL_OVERFLOW: { code: '407', cls: 'data' },
  CANNOT_PARSE_IPV4: { code: '441', cls: 'data' },
  CANNOT_PARSE_IPV6: { code: '442', cls: 'data' },
  CANNOT_PARSE_BOOL: { code: '467', cls: 'data' },
  VIOLATED_CONSTRAINT: { code: '469', cls: 'data' },
  UNKNOWN_ELEMENT_OF_ENUM: { code: '691', cls: 'data' },
  // The sink cannot take anything now: wait (a condition says why).
  NO_SUCH_COLUMN_IN_TABLE: { code: '16', cls: 'unavailable' },
  UNKNOWN_TABLE: { code: '60', cls: 'unavailable' },
  UNKNOWN_DATABASE: { code: '81', cls: 'unavailable' },
  TIMEOUT_EXCEEDED: { code: '159', cls: 'unavailable' },
  READONLY: { code: '164', cls: 'unavailable' },
  TOO_MANY_SIMULTANEOUS_QUERIES: { code: '202', cls: 'unavailable' },
  SOCKET_TIMEOUT: { code: '209', cls: 'unavailable' },
  NETWORK_ERROR: { code: '210', cls: 'unavailable' },
  TABLE_IS_DROPPED: { code: '218', cls: 'unavailable' },
  NO_ZOOKEEPER: { code: '225', cls: 'unavailable' },
  ABORTED: { code: '236', cls: 'unavailable' },
  MEMORY_LIMIT_EXCEEDED: { code: '241', cls: 'unavailable' },
  TABLE_IS_READ_ONLY: { code: '242', cls: 'unavailable' },
  NOT_ENOUGH_SPACE: { code: '243', cls: 'unavailable' },
  // "Too many parts" (merges behind) is backpressure; "too many partitions" is a split (see below).
  TOO_MANY_PARTS: { code: '252', cls: 'unavailable' },
  ALL_CONNECTION_TRIES_FAILED: { code: '279', cls: 'unavailable' },
  QUERY_WAS_CANCELLED: { code: '394', cls: 'unavailable' },
  ACCESS_DENIED: { code: '497', cls: 'unavailable' },
  AUTHENTICATION_FAILED: { code: '516', cls: 'unavailable' },
  KEEPER_EXCEPTION: { code: '999', cls: 'unavailable' },
};

const CLASS_BY_CODE: ReadonlyMap<string, ErrorClass> = new Map(
  Object.values(CLICKHOUSE_ERROR_CLASSES).map((e) => [e.code, e.cls]),
);

/** ClickHouse's message when one INSERT block spans more partitions than max_partitions_per_insert_block. */
const TOO_MANY_PARTITIONS = /too many partitions for (?:a )?single insert block/i;

/** Classifies an INSERT failure under the doctrine; anything that is not a server verdict is `unavailable`. */
export function errorClass(err: unknown): ErrorClass {
  // Only the server's own verdict counts: ClickHouseError carries its code (string) and name (type).
  if (!(err instanceof ClickHouseError)) return 'unavailable';
  if (TOO_MANY_PARTITIONS.test(err.message)) return 'split';
  const known = err.type !== undefined ? CLICKHOUSE_ERROR_CLASSES[err.type]?.cls : undefined;
  return known ?? CLASS_BY_CODE.get(err.code) ?? 'unknown';
}

/** Coarse verdict: `rejected` (bisect now) for data and split errors; everything else is retried first. */
export function classifyInsertError(err: unknown): FailureKind {
  const cls = errorClass(err);
  return cls === 'data' || cls === 'split' ? 'rejected' : 'retriable';
}

/** A short, single-line reason for logs, metrics and dead-letter rows (no stack, bounded length). */
export function errorReason(err: unknown, maxLength = 1000): string {
  const msg = err instanceof Error ? err.message : String(err);
  const oneLine = msg.replace(/\s+/g, ' ').trim();
  return oneLine.length > maxLength ? `${oneLine.slice(0, maxLength - 1)}…` : oneLine;
}
