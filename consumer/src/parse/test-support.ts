/**
 * Helpers for the parser unit tests: parse one line with a given format and get a plain object
 * (or the dead-letter reason). Test-only; allocates freely.
 */
import { LineParser, ParserOptions } from './parser';
import { recordToObject, RowObject } from './to-json';

/** Reference instant used by tests for year inference: 2024-01-20T00:00:00Z. */
export const TEST_REF_MS = Date.UTC(2024, 0, 20);

/** Parses `line` (string or bytes) and returns the row object, or `{ deadLetter }`. */
export function parseLine(
  format: string,
  line: string | Buffer,
  options: Partial<ParserOptions> = {},
): RowObject {
  const parser = new LineParser({ format, timezone: 'UTC', collectFields: true, ...options });
  parser.setReferenceTime(TEST_REF_MS);
  const buf = typeof line === 'string' ? Buffer.from(line, 'utf8') : line;
  const reason = parser.parse(buf, 0, buf.length);
  return reason === null ? recordToObject(parser.record) : { deadLetter: reason };
}

/** Epoch ms of an ISO string (test readability). */
export function ms(iso: string): number {
  return Date.parse(iso);
}
