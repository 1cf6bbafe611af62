/**
 * The subset of ClickHouse column types the worker writes, parsed from their type strings:
 * String, DateTime[('tz')], DateTime64(p[, 'tz']), IPv4, IPv6, [U]Int8..64, Enum8/Enum16(…),
 * wrapped in Nullable(…) and/or LowCardinality(…). Anything else is a configuration error.
 */

export const T_STRING = 0;
export const T_DATETIME = 1;
export const T_DATETIME64 = 2;
export const T_IPV4 = 3;
export const T_IPV6 = 4;
export const T_INT = 5;
export const T_ENUM = 6;

/** A parsed column type. */
export interface ColumnType {
  /** The type string as configured. */
  text: string;
  kind: number;
  nullable: boolean;
  /** DateTime64 precision (digits after the second), 0 otherwise. */
  precision: number;
  /** Integer width in bits and signedness (T_INT only). */
  bits: number;
  signed: boolean;
  /** Enum element names in declaration order (T_ENUM only). */
  enumNames: string[];
  /** Enum element values, parallel to enumNames (implicit values count from 1, as ClickHouse assigns them). */
  enumValues: number[];
}

const INT = /^(U?)Int(8|16|32|64)$/;
const DATETIME = /^DateTime(?:\(\s*'[^']*'\s*\))?$/;
const DATETIME64 = /^DateTime64\(\s*(\d)\s*(?:,\s*'[^']*'\s*)?\)$/;
const ENUM = /^Enum(8|16)\((.*)\)$/s;
const ENUM_ENTRY = /^\s*'((?:[^'\\]|\\.)*)'\s*(?:=\s*(-?\d+)\s*)?$/s;

function unwrap(type: string, wrapper: string): string | null {
  const prefix = `${wrapper}(`;
  return type.startsWith(prefix) && type.endsWith(')') ? type.slice(prefix.length, -1).trim() : null;
}

/** Parses a ClickHouse type string; throws RangeError for types the encoder does not support. */
export function parseColumnType(text: string): ColumnType {
  const t: ColumnType = {
    text,
    kind: T_STRING,
    nullable: false,
    precision: 0,
    bits: 0,
    signed: false,
    enumNames: [],
    enumValues: [],
  };
  let inner = text.trim();
  for (;;) {
    const lc = unwrap(inner, 'LowCardinality');
    if (lc !== null) {
      inner = lc;
      continue;
    }
    const nullable = unwrap(inner, 'Nullable');
    if (nullable !== null) {
      t.nullable = true;
      inner = nullable;
      continue;
    }
    break;
  }
  let m: RegExpExecArray | null;
  if (inner === 'String') t.kind = T_STRING;
  else if (inner === 'IPv4') t.kind = T_IPV4;
  else if (inner === 'IPv6') t.kind = T_IPV6;
  else if (DATETIME.test(inner)) t.kind = T_DATETIME;
  else if ((m = DATETIME64.exec(inner))) {
    t.kind = T_DATETIME64;
    t.precision = Number(m[1]);
  } else if ((m = INT.exec(inner))) {
    t.kind = T_INT;
    t.signed = m[1] === '';
    t.bits = Number(m[2]);
  } else if ((m = ENUM.exec(inner))) {
    t.kind = T_ENUM;
    const entries = parseEnumEntries(m[2], text);
    t.enumNames = entries.names;
    t.enumValues = entries.values;
  } else {
    throw new RangeError(`unsupported column type for the encoder: ${text}`);
  }
  return t;
}

function parseEnumEntries(body: string, text: string): { names: string[]; values: number[] } {
  const names: string[] = [];
  const values: (number | null)[] = [];
  // Split on commas outside quotes.
  let depthQuote = false;
  let start = 0;
  for (let i = 0; i <= body.length; i++) {
    const c = body[i];
    if (c === '\\' && depthQuote) {
      i++;
      continue;
    }
    if (c === "'") depthQuote = !depthQuote;
    if ((c === ',' && !depthQuote) || i === body.length) {
      const m = ENUM_ENTRY.exec(body.slice(start, i));
      if (!m) throw new RangeError(`cannot parse enum type: ${text}`);
      names.push(m[1].replace(/\\(.)/g, '$1'));
      values.push(m[2] === undefined ? null : Number(m[2]));
      start = i + 1;
    }
  }
  const explicit = values.filter((v) => v !== null).length;
  if (explicit !== 0 && explicit !== values.length)
    throw new RangeError(`enum mixes implicit and explicit values: ${text}`);
  return { names, values: values.map((v, i) => v ?? i + 1) };
}
