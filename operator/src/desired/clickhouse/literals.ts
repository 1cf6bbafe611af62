/**
 * Column DEFAULTs: a literal of the column's type, re-rendered by us, never an expression. The one
 * exception is the token `now()` on DateTime/DateTime64 columns (rendered `now()`/`now64(p)`): it is a
 * fixed token, not user SQL, and "time the row reached the table" is the only non-constant default a
 * log table needs. Strings may be given bare or single-quoted; either way they are re-quoted here and
 * must not contain quotes, backslashes or control characters.
 */
import net from 'node:net';
import { SchemaError, isSafeStringLiteral } from '../../../../common/src/sql/identifiers';
import { isIntegerType, type ChType } from './type-grammar';

const INT_RE = /^-?\d{1,78}$/;
const FLOAT_RE = /^-?\d{1,30}(\.\d{1,30})?([eE][-+]?\d{1,3})?$/;
const DECIMAL_RE = /^-?(\d{1,76})(?:\.(\d{1,76}))?$/;
const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const DATE_RE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
const TIME_RE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01]) ([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.(\d{1,9}))?$/;

function fail(column: string, text: string, why: string): never {
  throw new SchemaError('InvalidDefault', `column ${column}: default ${JSON.stringify(text)} ${why}`);
}

/** The string value of a bare or single-quoted literal (quotes stripped), checked to need no escaping. */
function stringValue(text: string, column: string): string {
  const inner = text.length >= 2 && text.startsWith("'") && text.endsWith("'") ? text.slice(1, -1) : text;
  if (!isSafeStringLiteral(inner))
    fail(column, text, 'must not contain quotes, backslashes or control characters');
  return inner;
}

function integerLiteral(t: { name: string }, text: string, column: string): string {
  if (!INT_RE.test(text)) fail(column, text, `is not an integer`);
  const bits = BigInt(t.name.replace(/^U?Int/, ''));
  const unsigned = t.name.startsWith('U');
  const value = BigInt(text);
  const min = unsigned ? 0n : -(1n << (bits - 1n));
  const max = unsigned ? (1n << bits) - 1n : (1n << (bits - 1n)) - 1n;
  if (value < min || value > max) fail(column, text, `is out of range for ${t.name}`);
  return value.toString();
}

function decimalLiteral(precision: number, scale: number, text: string, column: string): string {
  const m = DECIMAL_RE.exec(text);
  if (!m) fail(column, text, 'is not a decimal number');
  const fraction = m[2] ?? '';
  if (fraction.length > scale || m[1].replace(/^0+(?=\d)/, '').length > precision - scale) {
    fail(column, text, `does not fit Decimal(${precision}, ${scale})`);
  }
  return text;
}

function timeLiteral(t: ChType, text: string, column: string): string {
  if (text === 'now()') {
    if (t.kind === 'dateTime') return 'now()';
    if (t.kind === 'dateTime64') return `now64(${t.precision})`;
    fail(column, text, 'now() is only allowed on DateTime and DateTime64');
  }
  const value = stringValue(text, column);
  if (t.kind === 'simple') {
    if (!DATE_RE.test(value)) fail(column, text, 'is not a YYYY-MM-DD date');
    return `'${value}'`;
  }
  const m = TIME_RE.exec(value);
  const digits = m?.[5]?.length ?? 0;
  if (!m || (t.kind === 'dateTime' && digits > 0) || (t.kind === 'dateTime64' && digits > t.precision)) {
    fail(column, text, "is not a 'YYYY-MM-DD hh:mm:ss[.fff]' time of the column's precision");
  }
  return `'${value}'`;
}

function simpleLiteral(t: Extract<ChType, { kind: 'simple' }>, text: string, column: string): string {
  if (isIntegerType(t)) return integerLiteral(t, text, column);
  switch (t.name) {
    case 'Float32':
    case 'Float64':
      if (!FLOAT_RE.test(text)) fail(column, text, 'is not a number');
      return text;
    case 'Bool':
      if (text !== 'true' && text !== 'false') fail(column, text, 'must be true or false');
      return text;
    case 'String':
      return `'${stringValue(text, column)}'`;
    case 'UUID':
      if (!UUID_RE.test(stringValue(text, column))) fail(column, text, 'is not a UUID');
      return `'${stringValue(text, column).toLowerCase()}'`;
    case 'IPv4':
    case 'IPv6': {
      const ip = stringValue(text, column);
      if (t.name === 'IPv4' ? !net.isIPv4(ip) : !net.isIP(ip))
        fail(column, text, `is not an ${t.name} address`);
      return `'${ip}'`;
    }
    default:
      return timeLiteral(t, text, column);
  }
}

/** Validates a DEFAULT against the column type and returns the SQL literal to write after DEFAULT. */
export function renderDefault(text: unknown, type: ChType, column: string): string {
  if (typeof text !== 'string' || text.length === 0 || text.length > 258) {
    throw new SchemaError('InvalidDefault', `column ${column}: default must be a non-empty string literal`);
  }
  switch (type.kind) {
    case 'nullable':
      return text === 'NULL' ? 'NULL' : renderDefault(text, type.inner, column);
    case 'lowCardinality':
      return renderDefault(text, type.inner, column);
    case 'simple':
      return simpleLiteral(type, text, column);
    case 'decimal':
      return decimalLiteral(type.precision, type.scale, text, column);
    case 'fixedString': {
      const value = stringValue(text, column);
      if (Buffer.byteLength(value) > type.length)
        fail(column, text, `is longer than FixedString(${type.length})`);
      return `'${value}'`;
    }
    case 'dateTime':
    case 'dateTime64':
      return timeLiteral(type, text, column);
    case 'enum': {
      const label = stringValue(text, column);
      if (!type.values.some((e) => e.label === label)) fail(column, text, 'is not one of the enum labels');
      return `'${label}'`;
    }
    default:
      return fail(column, text, 'is not supported: Array and Map columns take no DEFAULT');
  }
}
