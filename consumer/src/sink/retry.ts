/**
 * What to do when an INSERT fails. Only errors where ClickHouse says the DATA is wrong are
 * "rejected" (bisect, dead-letter the bad rows); everything else — network, timeouts, 5xx,
 * overload, missing table, bad credentials, unknown errors — is retried with backoff, because a
 * compliance pipeline must wait out an outage or a misconfiguration rather than drop rows.
 */
import { ClickHouseError } from '@clickhouse/client';

/** The verdict on a failed INSERT. */
export type FailureKind = 'retriable' | 'rejected';

/** ClickHouse error names that mean "these rows cannot be stored as they are". */
const DATA_ERROR_TYPES: ReadonlySet<string> = new Set([
  'CANNOT_PARSE_TEXT',
  'CANNOT_PARSE_ESCAPE_SEQUENCE',
  'CANNOT_PARSE_QUOTED_STRING',
  'CANNOT_PARSE_INPUT_ASSERTION_FAILED',
  'ATTEMPT_TO_READ_AFTER_EOF',
  'CANNOT_READ_ALL_DATA',
  'CANNOT_PARSE_DATE',
  'CANNOT_PARSE_DATETIME',
  'TYPE_MISMATCH',
  'CANNOT_CONVERT_TYPE',
  'CANNOT_PARSE_NUMBER',
  'INCORRECT_DATA',
  'TOO_LARGE_STRING_SIZE',
  'VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE',
  'CANNOT_INSERT_NULL_IN_ORDINARY_COLUMN',
  'CANNOT_PARSE_UUID',
  'DECIMAL_OVERFLOW',
  'CANNOT_PARSE_IPV4',
  'CANNOT_PARSE_IPV6',
  'CANNOT_PARSE_BOOL',
  'VIOLATED_CONSTRAINT',
  'UNKNOWN_ELEMENT_OF_ENUM',
]);

/** Numeric codes of the same errors, for responses that carry a code but no name. */
const DATA_ERROR_CODES: ReadonlySet<string> = new Set([
  '6',
  '25',
  '26',
  '27',
  '32',
  '33',
  '38',
  '41',
  '53',
  '70',
  '72',
  '117',
  '131',
  '321',
  '349',
  '376',
  '407',
  '441',
  '442',
  '467',
  '469',
  '691',
]);

/** Classifies an INSERT failure; unknown shapes are retriable (never drop on doubt). */
export function classifyInsertError(err: unknown): FailureKind {
  // Only the server's own verdict counts: ClickHouseError carries its code (string) and name (type).
  if (!(err instanceof ClickHouseError)) return 'retriable';
  if (err.type !== undefined) return DATA_ERROR_TYPES.has(err.type) ? 'rejected' : 'retriable';
  return DATA_ERROR_CODES.has(err.code) ? 'rejected' : 'retriable';
}

/** Capped exponential backoff policy. */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  factor: number;
}

/** Default: 200 ms doubling up to 10 s — quick recovery from blips, gentle on a down server. */
export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 200, maxMs: 10_000, factor: 2 };

/**
 * Delay before retry number `attempt` (0-based): capped exponential with "equal jitter" (half
 * fixed, half random) so many workers do not hammer a recovering server in lockstep.
 * `random` is injectable for tests.
 */
export function backoffMs(
  attempt: number,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): number {
  const exp = Math.min(policy.maxMs, policy.initialMs * Math.pow(policy.factor, Math.max(0, attempt)));
  return Math.round(exp / 2 + (random() * exp) / 2);
}

/** A short, single-line reason for logs, metrics and dead-letter rows (no stack, bounded length). */
export function errorReason(err: unknown, maxLength = 1000): string {
  const msg = err instanceof Error ? err.message : String(err);
  const oneLine = msg.replace(/\s+/g, ' ').trim();
  return oneLine.length > maxLength ? `${oneLine.slice(0, maxLength - 1)}…` : oneLine;
}
