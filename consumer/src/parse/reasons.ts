/**
 * Dead-letter reasons: short snake_case codes that travel with a rejected line to the dead-letter
 * queue and into metrics labels. Parsers return one of these (never throw); `null` means parsed.
 * Each code is a constant string so returning it allocates nothing.
 */

/** The line is empty or only whitespace (also an empty Kafka message value). */
export const EMPTY_LINE = 'empty_line';
/** The line exceeds the configured maximum length (default 64 KiB). */
export const LINE_TOO_LONG = 'line_too_long';
/** The line is not valid UTF-8; it is dead-lettered rather than stored with replaced bytes. */
export const INVALID_UTF8 = 'invalid_utf8';
/** `auto` recognised no format, or an explicit vendor format found no payload of its kind. */
export const UNKNOWN_FORMAT = 'unknown_format';
/** A syslog header (PRI, RFC 5424 fields, structured data) is malformed. */
export const BAD_HEADER = 'bad_header';
/** A clock is present but unparsable, or outside 2000-01-01 .. 2106-02-07 (ClickHouse DateTime). */
export const BAD_TIMESTAMP = 'bad_timestamp';
/**
 * The line's clock is older than the table keeps rows (its delete TTL): ClickHouse would drop the
 * row silently at insert, so it is dead-lettered instead of lost.
 */
export const EXPIRED_TIMESTAMP = 'expired_timestamp';
/** An address field holds something that is not IPv4 or IPv6 syntax. */
export const INVALID_IP = 'invalid_ip';
/** A port field is not an integer in 0..65535. */
export const INVALID_PORT = 'invalid_port';
/** key=value payload is broken: a token without `=`, or an unterminated quote. */
export const BAD_KV = 'bad_kv';
/** CSV payload is broken: an unterminated quote or too few columns for its log type. */
export const BAD_CSV = 'bad_csv';
/** CEF header has fewer than 7 pipe-separated fields or an unknown version. */
export const BAD_CEF = 'bad_cef';
/** The JSON line does not parse. */
export const BAD_JSON = 'bad_json';
/** The JSON line parses but is not an object. */
export const JSON_NOT_OBJECT = 'json_not_object';
/**
 * The message holds more lines than `workers.batch.maxLinesPerMessage`: the excess (everything
 * after the last accepted line) is dead-lettered as ONE record, so a flood message cannot turn
 * into a flood of dead letters.
 */
export const TOO_MANY_LINES = 'too_many_lines';
/**
 * Encoding the line threw (e.g. a value too deeply nested to serialise): a bug or a pathological
 * input; the line is dead-lettered alone and the rest of its batch is stored.
 */
export const ENCODE_ERROR = 'encode_error';
/** A recognised vendor message lacks the parts its documented layout requires. */
export const BAD_MESSAGE = 'bad_message';

const missingCache = new Map<string, string>();

/** `missing_field:<source>` for a required column source; cached so the hot path reuses one string. */
export function missingField(source: string): string {
  let reason = missingCache.get(source);
  if (reason === undefined) {
    reason = `missing_field:${source}`;
    missingCache.set(source, reason);
  }
  return reason;
}
