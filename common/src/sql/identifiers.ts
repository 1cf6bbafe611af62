/**
 * Identifiers and string literals that reach SQL. The rule is reject, never escape: a name that is
 * not a plain identifier, or a string that holds a quote, a backslash or a control character, is an
 * error, so nothing a CR says can change the shape of a statement.
 */

/** The identifier pattern every database, table, column, cluster, disk, volume and policy name must match. */
export const IDENTIFIER_PATTERN = '^[A-Za-z_][A-Za-z0-9_]{0,62}$';
const IDENTIFIER_RE = new RegExp(IDENTIFIER_PATTERN);

/** Longest string literal accepted (enum labels, timezones, defaults). */
export const MAX_STRING_LITERAL = 256;
// Printable ASCII and any non-ASCII character, minus the quote and the backslash: no escaping is
// ever needed inside '…', and no newline can split a statement or start a comment line.
const SAFE_STRING_RE = /^[^'\\\u0000-\u001f\u007f]*$/;

/** A spec error found while building SQL: `reason` is a one-word CamelCase condition reason. */
export class SchemaError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'SchemaError';
  }
}

/** Either a value or a spec error; builders return this instead of throwing. */
export type Result<T> = { ok: true; value: T } | { ok: false; reason: string; message: string };

/** Runs `fn`, turning a thrown SchemaError into a failed Result (other errors are bugs and propagate). */
export function catchSchemaError<T>(fn: () => T): Result<T> {
  try {
    return { ok: true, value: fn() };
  } catch (err) {
    if (err instanceof SchemaError) return { ok: false, reason: err.reason, message: err.message };
    throw err;
  }
}

/** True when `name` is a plain identifier that can be quoted without escaping. */
export function isIdentifier(name: unknown): name is string {
  return typeof name === 'string' && IDENTIFIER_RE.test(name);
}

/** Throws SchemaError(InvalidIdentifier) unless `name` is a plain identifier; `what` names it in the message. */
export function checkIdentifier(name: unknown, what: string): string {
  if (!isIdentifier(name)) {
    throw new SchemaError(
      'InvalidIdentifier',
      `${what} ${JSON.stringify(name)} must match ${IDENTIFIER_PATTERN}`,
    );
  }
  return name;
}

/** Backtick-quotes a validated identifier (throws SchemaError for anything else). */
export function quoteIdentifier(name: string, what = 'identifier'): string {
  return '`' + checkIdentifier(name, what) + '`';
}

/** `db`.`table`, both validated. */
export function qualifiedName(database: string, table: string): string {
  return `${quoteIdentifier(database, 'database')}.${quoteIdentifier(table, 'table')}`;
}

/** True when `text` can sit between single quotes as-is. */
export function isSafeStringLiteral(text: unknown): text is string {
  return typeof text === 'string' && text.length <= MAX_STRING_LITERAL && SAFE_STRING_RE.test(text);
}

/** Single-quotes a string that needs no escaping; throws SchemaError(InvalidLiteral) otherwise. */
export function quoteString(text: string, what = 'string'): string {
  if (!isSafeStringLiteral(text)) {
    throw new SchemaError(
      'InvalidLiteral',
      `${what} ${JSON.stringify(text)} must be at most ${MAX_STRING_LITERAL} characters without quotes, backslashes or control characters`,
    );
  }
  return `'${text}'`;
}
