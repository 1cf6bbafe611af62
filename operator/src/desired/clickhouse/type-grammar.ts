/**
 * The ClickHouse column types a LogPipeline may declare, as a small recursive-descent parser.
 * Anything outside the grammar is rejected; accepted types are re-rendered in ClickHouse's own
 * canonical spelling (`DateTime64(3, 'UTC')`, `Enum8('a' = 1)`, `Decimal(18, 4)`) so that a desired
 * type compares equal to what `system.columns.type` reports for it.
 */
import { isSafeStringLiteral, type Result } from '../../../../common/src/sql/identifiers';

/** Parameterless types, by exact (case-sensitive) name. */
export const SIMPLE_TYPES = [
  'Int8', 'Int16', 'Int32', 'Int64', 'Int128', 'Int256',
  'UInt8', 'UInt16', 'UInt32', 'UInt64', 'UInt128', 'UInt256',
  'Float32', 'Float64', 'String', 'UUID', 'Bool', 'Date', 'Date32', 'IPv4', 'IPv6',
] as const; // prettier-ignore
/** A parameterless type name. */
export type SimpleTypeName = (typeof SIMPLE_TYPES)[number];

/** A parsed column type. */
export type ChType =
  | { kind: 'simple'; name: SimpleTypeName }
  | { kind: 'decimal'; precision: number; scale: number }
  | { kind: 'fixedString'; length: number }
  | { kind: 'dateTime'; timezone?: string }
  | { kind: 'dateTime64'; precision: number; timezone?: string }
  | { kind: 'enum'; bits: 8 | 16; values: Array<{ label: string; value: number }> }
  | { kind: 'lowCardinality'; inner: ChType }
  | { kind: 'nullable'; inner: ChType }
  | { kind: 'array'; inner: ChType }
  | { kind: 'map'; key: ChType; value: ChType };

const MAX_TYPE_LENGTH = 1024;
const MAX_DEPTH = 6;
const TIMEZONE_RE = /^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/;
// Only spaces separate tokens: a newline or tab in a type is refused rather than normalised away.
const TOKEN_RE = / *(?:([A-Za-z_][A-Za-z0-9_]*)|(-?[0-9]+)|'([^']*)'|([(),=]))/y;

type Token = { t: 'ident' | 'int' | 'str' | 'punct'; v: string };

class ParseFailure extends Error {}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  TOKEN_RE.lastIndex = 0;
  const end = text.replace(/ +$/, '').length;
  while (TOKEN_RE.lastIndex < end) {
    const at = TOKEN_RE.lastIndex;
    const m = TOKEN_RE.exec(text);
    if (!m) throw new ParseFailure(`unexpected character at offset ${at}`);
    if (m[1] !== undefined) tokens.push({ t: 'ident', v: m[1] });
    else if (m[2] !== undefined) tokens.push({ t: 'int', v: m[2] });
    else if (m[3] !== undefined) {
      if (!isSafeStringLiteral(m[3])) throw new ParseFailure('string literal holds a forbidden character');
      tokens.push({ t: 'str', v: m[3] });
    } else tokens.push({ t: 'punct', v: m[4] });
  }
  return tokens;
}

/** Cursor over the token list with the small helpers the grammar needs. */
class Parser {
  private pos = 0;
  constructor(private readonly tokens: Token[]) {}

  done(): boolean {
    return this.pos >= this.tokens.length;
  }
  peek(v: string): boolean {
    const tok = this.tokens[this.pos];
    return tok !== undefined && tok.t === 'punct' && tok.v === v;
  }
  expect(v: string): void {
    if (!this.peek(v)) throw new ParseFailure(`expected '${v}'`);
    this.pos++;
  }
  take(kind: Token['t'], what: string): string {
    const tok = this.tokens[this.pos];
    if (!tok || tok.t !== kind) throw new ParseFailure(`expected ${what}`);
    this.pos++;
    return tok.v;
  }
  int(what: string, min: number, max: number): number {
    const n = Number(this.take('int', what));
    if (!Number.isSafeInteger(n) || n < min || n > max)
      throw new ParseFailure(`${what} must be in ${min}..${max}`);
    return n;
  }
  timezone(): string {
    const tz = this.take('str', 'a quoted timezone');
    if (!TIMEZONE_RE.test(tz)) throw new ParseFailure(`invalid timezone '${tz}'`);
    return tz;
  }
}

function parseType(p: Parser, depth: number): ChType {
  if (depth > MAX_DEPTH) throw new ParseFailure('type nested too deeply');
  const name = p.take('ident', 'a type name');
  if ((SIMPLE_TYPES as readonly string[]).includes(name))
    return { kind: 'simple', name: name as SimpleTypeName };
  switch (name) {
    case 'DateTime':
      return parseDateTime(p);
    case 'DateTime64':
      return parseDateTime64(p);
    case 'Decimal':
      return parseDecimal(p);
    case 'FixedString':
      return parseFixedString(p);
    case 'Enum8':
    case 'Enum16':
      return parseEnum(p, name === 'Enum8' ? 8 : 16);
    case 'LowCardinality':
    case 'Nullable':
    case 'Array':
      return parseWrapper(p, name, depth);
    case 'Map':
      return parseMap(p, depth);
    default:
      throw new ParseFailure(`unsupported type '${name}'`);
  }
}

function parseDateTime(p: Parser): ChType {
  if (!p.peek('(')) return { kind: 'dateTime' };
  p.expect('(');
  const timezone = p.timezone();
  p.expect(')');
  return { kind: 'dateTime', timezone };
}

function parseDateTime64(p: Parser): ChType {
  p.expect('(');
  const precision = p.int('DateTime64 precision', 0, 9);
  let timezone: string | undefined;
  if (p.peek(',')) {
    p.expect(',');
    timezone = p.timezone();
  }
  p.expect(')');
  return { kind: 'dateTime64', precision, timezone };
}

function parseDecimal(p: Parser): ChType {
  p.expect('(');
  const precision = p.int('Decimal precision', 1, 76);
  p.expect(',');
  const scale = p.int('Decimal scale', 0, precision);
  p.expect(')');
  return { kind: 'decimal', precision, scale };
}

function parseFixedString(p: Parser): ChType {
  p.expect('(');
  const length = p.int('FixedString length', 1, 65535);
  p.expect(')');
  return { kind: 'fixedString', length };
}

function parseEnum(p: Parser, bits: 8 | 16): ChType {
  const [min, max] = bits === 8 ? [-128, 127] : [-32768, 32767];
  const values: Array<{ label: string; value: number }> = [];
  p.expect('(');
  do {
    if (values.length > 0) p.expect(',');
    const label = p.take('str', 'a quoted enum label');
    p.expect('=');
    const value = p.int(`Enum${bits} value`, min, max);
    if (values.some((e) => e.label === label || e.value === value))
      throw new ParseFailure(`duplicate enum entry '${label}'`);
    values.push({ label, value });
  } while (!p.peek(')'));
  p.expect(')');
  return { kind: 'enum', bits, values };
}

function parseWrapper(p: Parser, name: 'LowCardinality' | 'Nullable' | 'Array', depth: number): ChType {
  p.expect('(');
  const inner = parseType(p, depth + 1);
  p.expect(')');
  if (name === 'Array') return { kind: 'array', inner };
  if (name === 'Nullable') {
    if (
      inner.kind === 'nullable' ||
      inner.kind === 'lowCardinality' ||
      inner.kind === 'array' ||
      inner.kind === 'map'
    ) {
      throw new ParseFailure(`Nullable cannot wrap ${renderType(inner)}`);
    }
    return { kind: 'nullable', inner };
  }
  // LowCardinality of narrow numbers is "suspicious" to ClickHouse (refused by default) and gains nothing.
  const base = inner.kind === 'nullable' ? inner.inner : inner;
  if (!(base.kind === 'fixedString' || (base.kind === 'simple' && base.name === 'String'))) {
    throw new ParseFailure('LowCardinality only wraps String, FixedString or their Nullable');
  }
  return { kind: 'lowCardinality', inner };
}

function parseMap(p: Parser, depth: number): ChType {
  p.expect('(');
  const key = parseType(p, depth + 1);
  p.expect(',');
  const value = parseType(p, depth + 1);
  p.expect(')');
  if (!isMapKey(key)) throw new ParseFailure(`${renderType(key)} cannot be a Map key`);
  return { kind: 'map', key, value };
}

function isMapKey(t: ChType): boolean {
  if (t.kind === 'lowCardinality' || t.kind === 'fixedString' || t.kind === 'enum' || t.kind === 'dateTime')
    return true;
  return (
    t.kind === 'simple' &&
    t.name !== 'Float32' &&
    t.name !== 'Float64' &&
    t.name !== 'Bool' &&
    t.name !== 'IPv6'
  );
}

/** Parses a type declared in a CR; on success the value is the parsed type. */
export function parseTypeGrammar(text: unknown): Result<ChType> {
  if (typeof text !== 'string' || text.length === 0 || text.length > MAX_TYPE_LENGTH) {
    return {
      ok: false,
      reason: 'InvalidColumnType',
      message: `type must be a string of 1..${MAX_TYPE_LENGTH} characters`,
    };
  }
  try {
    const p = new Parser(tokenize(text));
    const type = parseType(p, 0);
    if (!p.done()) throw new ParseFailure('unexpected text after the type');
    return { ok: true, value: type };
  } catch (err) {
    if (!(err instanceof ParseFailure)) throw err;
    return {
      ok: false,
      reason: 'InvalidColumnType',
      message: `type ${JSON.stringify(text)}: ${err.message}`,
    };
  }
}

/** Parses and re-renders a type in ClickHouse's canonical spelling. */
export function normalizeColumnType(text: unknown): Result<string> {
  const parsed = parseTypeGrammar(text);
  return parsed.ok ? { ok: true, value: renderType(parsed.value) } : parsed;
}

/** Renders a parsed type exactly as ClickHouse prints it in system.columns. */
export function renderType(t: ChType): string {
  switch (t.kind) {
    case 'simple':
      return t.name;
    case 'decimal':
      return `Decimal(${t.precision}, ${t.scale})`;
    case 'fixedString':
      return `FixedString(${t.length})`;
    case 'dateTime':
      return t.timezone === undefined ? 'DateTime' : `DateTime('${t.timezone}')`;
    case 'dateTime64':
      return t.timezone === undefined
        ? `DateTime64(${t.precision})`
        : `DateTime64(${t.precision}, '${t.timezone}')`;
    case 'enum':
      return `Enum${t.bits}(${t.values.map((e) => `'${e.label}' = ${e.value}`).join(', ')})`;
    case 'lowCardinality':
      return `LowCardinality(${renderType(t.inner)})`;
    case 'nullable':
      return `Nullable(${renderType(t.inner)})`;
    case 'array':
      return `Array(${renderType(t.inner)})`;
    case 'map':
      return `Map(${renderType(t.key)}, ${renderType(t.value)})`;
  }
}

/** True for Date, Date32, DateTime and DateTime64: the types a TTL or a date key function accepts. */
export function isTimeType(t: ChType): boolean {
  return (
    t.kind === 'dateTime' ||
    t.kind === 'dateTime64' ||
    (t.kind === 'simple' && (t.name === 'Date' || t.name === 'Date32'))
  );
}

/** True for (U)Int8..256. */
export function isIntegerType(t: ChType): boolean {
  return t.kind === 'simple' && /^U?Int\d+$/.test(t.name);
}
