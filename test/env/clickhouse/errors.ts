/**
 * ClickHouse-style errors for the test-bed HTTP server: the engine's `Code: N. DB::Exception: …
 * (NAME)` messages are normalised, given the HTTP status the real server uses for that error name,
 * and rendered in the exact body shapes @clickhouse/client parses (plain body and the in-stream
 * exception block of ClickHouse ≥ 25.11).
 */

/** An error the HTTP layer reports with a ClickHouse code and name. */
export class ServerError extends Error {
  /** Creates an error with ClickHouse `code` and `type` name (e.g. 516, 'AUTHENTICATION_FAILED'). */
  constructor(
    readonly code: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
    this.name = 'ServerError';
  }
}

/** Codes of the errors the HTTP layer raises itself (the engine supplies its own). */
export const CODES = {
  STD_EXCEPTION: [1001, 'STD_EXCEPTION'],
  BAD_ARGUMENTS: [36, 'BAD_ARGUMENTS'],
  CHECKSUM_DOESNT_MATCH: [40, 'CHECKSUM_DOESNT_MATCH'],
  NOT_IMPLEMENTED: [48, 'NOT_IMPLEMENTED'],
  UNKNOWN_COMPRESSION_METHOD: [89, 'UNKNOWN_COMPRESSION_METHOD'],
  SYNTAX_ERROR: [62, 'SYNTAX_ERROR'],
  UNKNOWN_SETTING: [115, 'UNKNOWN_SETTING'],
  INCORRECT_DATA: [117, 'INCORRECT_DATA'],
  TOO_MANY_BYTES: [307, 'TOO_MANY_BYTES'],
  CANNOT_DECOMPRESS: [354, 'ZLIB_INFLATE_FAILED'],
  SESSION_NOT_FOUND: [372, 'SESSION_NOT_FOUND'],
  SESSION_IS_LOCKED: [373, 'SESSION_IS_LOCKED'],
  QUERY_WAS_CANCELLED: [394, 'QUERY_WAS_CANCELLED'],
  UNSUPPORTED_METHOD: [1, 'UNSUPPORTED_METHOD'],
  AUTHENTICATION_FAILED: [516, 'AUTHENTICATION_FAILED'],
} as const satisfies Record<string, readonly [number, string]>;

/** Builds a ServerError from an entry of CODES. */
export function serverError(which: keyof typeof CODES, message: string): ServerError {
  const [code, type] = CODES[which];
  return new ServerError(code, type, message);
}

const BAD_REQUEST = new Set([
  'BAD_ARGUMENTS',
  'CANNOT_COMPILE_REGEXP',
  'DUPLICATE_COLUMN',
  'ILLEGAL_COLUMN',
  'UNKNOWN_ELEMENT_IN_AST',
  'UNKNOWN_TYPE_OF_AST_NODE',
  'THERE_IS_NO_COLUMN',
  'TOO_DEEP_AST',
  'TOO_BIG_AST',
  'UNEXPECTED_AST_STRUCTURE',
  'SYNTAX_ERROR',
  'INCORRECT_DATA',
  'TYPE_MISMATCH',
  'VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE',
]);

const NOT_FOUND = new Set([
  'UNKNOWN_TABLE',
  'UNKNOWN_FUNCTION',
  'UNKNOWN_IDENTIFIER',
  'UNKNOWN_TYPE',
  'UNKNOWN_STORAGE',
  'UNKNOWN_DATABASE',
  'UNKNOWN_SETTING',
  'UNKNOWN_DIRECTION_OF_SORTING',
  'UNKNOWN_AGGREGATE_FUNCTION',
  'UNKNOWN_FORMAT',
  'UNKNOWN_DATABASE_ENGINE',
  'UNKNOWN_TYPE_OF_QUERY',
  'UNKNOWN_ROLE',
]);

const FIXED_STATUS: Record<string, number> = {
  REQUIRED_PASSWORD: 401,
  UNKNOWN_USER: 403,
  WRONG_PASSWORD: 403,
  AUTHENTICATION_FAILED: 403,
  SET_NON_GRANTED_ROLE: 403,
  ACCESS_DENIED: 403,
  TIMEOUT_EXCEEDED: 408,
  HTTP_LENGTH_REQUIRED: 411,
  QUERY_IS_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  NOT_IMPLEMENTED: 501,
  SOCKET_TIMEOUT: 503,
  CANNOT_OPEN_FILE: 503,
  CANNOT_SCHEDULE_TASK: 503,
};

/** The HTTP status ClickHouse answers with for an error name (500 unless it is a client error). */
export function httpStatusFor(type: string): number {
  if (FIXED_STATUS[type] !== undefined) return FIXED_STATUS[type];
  if (BAD_REQUEST.has(type) || type.startsWith('CANNOT_PARSE_')) return 400;
  if (NOT_FOUND.has(type)) return 404;
  return 500;
}

const CODE_PREFIX = /^Code:\s*(\d+)\.\s*(?:DB::Exception:\s*)?/;
const TYPE_SUFFIX = /\s*\(([A-Z][A-Z0-9_]*)\)\s*$/;

/**
 * Normalises anything thrown by the engine or the HTTP layer into a ServerError: the code comes
 * from the leading `Code: N.` (repeated prefixes, as the engine nests some errors, are dropped),
 * the name from the trailing `(NAME)`.
 */
export function toServerError(err: unknown): ServerError {
  if (err instanceof ServerError) return err;
  let text = err instanceof Error ? err.message : String(err);
  const chCode = (err as { clickhouseCode?: unknown } | null)?.clickhouseCode;
  let code = typeof chCode === 'number' ? chCode : undefined;
  for (let m = CODE_PREFIX.exec(text); m; m = CODE_PREFIX.exec(text)) {
    code ??= Number(m[1]);
    text = text.slice(m[0].length);
  }
  const typeMatch = TYPE_SUFFIX.exec(text);
  if (code === undefined || !typeMatch) {
    const [fallbackCode, fallbackType] = CODES.STD_EXCEPTION;
    return new ServerError(code ?? fallbackCode, typeMatch?.[1] ?? fallbackType, text.trim());
  }
  return new ServerError(code, typeMatch[1], text.slice(0, typeMatch.index).trim());
}

/** The error text ClickHouse sends: `Code: N. DB::Exception: msg. (NAME) (version V (official build))`. */
export function formatErrorText(err: ServerError, version: string): string {
  const message = /[.!?]$/.test(err.message) ? err.message : `${err.message}.`;
  return `Code: ${err.code}. DB::Exception: ${message} (${err.type}) (version ${version} (official build))`;
}

/**
 * The block ClickHouse appends to a response whose headers were already sent when a query failed
 * mid-stream; `tag` is the X-ClickHouse-Exception-Tag header value of that response. The
 * length counts the message and its newline, which is how the client finds the message start.
 */
export function formatStreamException(errorText: string, tag: string): string {
  const message = `${errorText}\n`;
  const length = Buffer.byteLength(message);
  return `\r\n__exception__\r\n${tag}\r\n${message}${length} ${tag}\r\n__exception__\r\n`;
}
