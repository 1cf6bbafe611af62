/**
 * Source templates of the generated RowBinary row writer (rowbinary-codegen.ts): each returns a
 * statement for one value of one column, the output position kept in the local `pos` of `buf`.
 * Their inputs are column positions, expressions spelled in this file and rowbinary-codegen.ts, and
 * numbers checked by num(); never text from a LogPipeline (see rowbinary-codegen.ts).
 */
import {
  T_DATETIME,
  T_DATETIME64,
  T_ENUM,
  T_INT,
  T_IPV4,
  T_IPV6,
  T_STRING,
} from '../../../common/src/columns/column-type';
import { DECIMAL_MAX } from './binary-put';
import type { PlannedColumn } from './column-plan';

/** A run of zero bytes (type defaults). */
function zeros(n: number): string {
  return `for (let z = 0; z < ${num(n)}; z++) buf[pos++] = 0;`;
}

/** A number for the source text: only finite numbers pass, printed as a plain numeric literal. */
export function num(n: number): string {
  const text = String(n);
  if (typeof n !== 'number' || !Number.isFinite(n) || !/^-?[0-9][0-9.e+-]*$/.test(text))
    throw new RangeError(`not a finite number: ${text}`);
  return text;
}

/** Little-endian integer writes by width; the position lives in the local `pos`. */
const INT_WRITE: Record<number, (v: string) => string> = {
  8: (v) => `buf[pos++] = ${v};`,
  16: (v) => `{ const w = ${v}; buf[pos] = w; buf[pos + 1] = w >>> 8; pos += 2; }`,
  32: (v) => `pos = putU32(buf, pos, ${v});`,
  64: (v) => `pos = putI64(buf, pos, ${v});`,
};

function intWrite(bits: number, value: string): string {
  const write = INT_WRITE[bits];
  if (write === undefined) throw new RangeError(`no integer width ${bits}`);
  return write(value);
}

/**
 * Makes room for `n` (an expression) bytes plus ROOM (every fixed-width value of the row) before a
 * variable-length value; fixed-width values then need no check of their own.
 */
export function roomFor(n: string): string {
  return `if (pos + ${n} + ROOM > buf.length) { out.pos = pos; out.ensure(${n} + ROOM); buf = out.buf; }`;
}

/** A String value of bytes [s, e) of `b` (expressions evaluated once). */
export function stringCode(b: string, s: string, e: string): string {
  return `{ const sb = ${b}, ss = ${s}, se = ${e}; ${roomFor('(se - ss)')} pos = putString(buf, pos, sb, ss, se); }`;
}

/** Most bytes a column's value takes outside the variable part of a String (nullable marker included). */
export function fixedBytes(col: PlannedColumn): number {
  const marker = col.type.nullable ? 1 : 0;
  switch (col.type.kind) {
    case T_INT:
      return marker + col.type.bits / 8;
    case T_ENUM:
      return marker + 2;
    case T_DATETIME:
    case T_IPV4:
      return marker + 4;
    case T_DATETIME64:
      return marker + 8;
    case T_IPV6:
      return marker + 16;
    default:
      return marker + DECIMAL_MAX;
  }
}

function enumBits(col: PlannedColumn): number {
  return col.type.text.includes('Enum16') ? 16 : 8;
}

export function enumValueOf(col: PlannedColumn, name: string): number {
  const i = col.type.enumNames.indexOf(name);
  return i < 0 ? NaN : col.type.enumValues[i];
}

/** Epoch milliseconds `ms` (an expression) in the column's time type. */
export function timeCode(col: PlannedColumn, ms: string): string {
  const p = col.type.precision;
  switch (col.type.kind) {
    case T_DATETIME64:
      if (p === 3) return `pos = putI64(buf, pos, ${ms});`;
      if (p > 3) return `pos = putScaledI64(buf, pos, (${ms}), ${num(10 ** (p - 3))});`;
      return `pos = putI64(buf, pos, Math.floor((${ms}) / ${num(10 ** (3 - p))}));`;
    case T_DATETIME:
      return `pos = putU32(buf, pos, Math.floor((${ms}) / 1000));`;
    case T_INT:
      return `pos = putI64(buf, pos, ${ms});`;
    default:
      return `pos = putDecimal(buf, pos, ${ms});`;
  }
}

/** A non-negative number `n` (a local name) range-checked into an integer or String column. */
export function numberCode(col: PlannedColumn, i: number, n: string): string {
  if (col.type.kind === T_STRING) return `pos = putDecimal(buf, pos, ${n});`;
  if (col.type.kind !== T_INT) throw new RangeError('numbers need an integer or String column');
  return `if (${n} > ${num(col.intMax)} || ${n} < ${num(col.intMin)}) return ${i}; ${intWrite(col.type.bits, n)}`;
}

/** The value of a column without one: NULL, else the type's default (ingest time for clocks). */
function absentCode(col: PlannedColumn): string {
  if (col.type.nullable) return 'buf[pos++] = 1;';
  switch (col.type.kind) {
    case T_STRING:
      return 'buf[pos++] = 0;';
    case T_ENUM:
      return intWrite(enumBits(col), num(enumValueOf(col, col.enumDefault.toString('utf8'))));
    case T_DATETIME:
    case T_DATETIME64:
      return timeCode(col, 'row.ingestTimeMs');
    case T_INT:
      return zeros(col.type.bits / 8);
    case T_IPV4:
      return zeros(4);
    default:
      return zeros(16);
  }
}

/** `present` when `absentIf` is false (nullable columns get their 0 marker first), else the absent value. */
export function optional(col: PlannedColumn, absentIf: string | null, present: string): string {
  const marked = col.type.nullable ? `buf[pos++] = 0; ${present}` : present;
  return absentIf === null ? marked : `if (${absentIf}) { ${absentCode(col)} } else { ${marked} }`;
}

/** A validated address span `sp` of version `v` into an IPv4, IPv6 or String column. */
export function addressCode(col: PlannedColumn, i: number): string {
  const b = 'const b = sp.scratch ? rec.scratch : rec.src;';
  if (col.type.kind === T_STRING) return `${b} ${stringCode('b', 'sp.start', 'sp.end')}`;
  if (col.type.kind === T_IPV4)
    return (
      `if (v === 6) return ${i}; ${b} ` +
      `const x = sp.ipv4 >= 0 ? sp.ipv4 : ipv4Value(b, sp.start, sp.end); if (x < 0) return ${i}; pos = putU32(buf, pos, x);`
    );
  if (col.type.kind !== T_IPV6) throw new RangeError('addresses need IPv4, IPv6 or String');
  return (
    `${b} const x = v !== 4 ? -1 : sp.ipv4 >= 0 ? sp.ipv4 : ipv4Value(b, sp.start, sp.end); ` +
    `if (x >= 0) pos = putIpv4Mapped(buf, pos, x); ` +
    `else { if (!writeIpv6Bytes(b, sp.start, sp.end, buf, pos)) return ${i}; pos += 16; }`
  );
}

/** Index `idx` into a name table (vendor/action/severity) as Enum value, number or name. */
export function namedCode(col: PlannedColumn, i: number, idx: string, numeric: boolean): string {
  if (col.type.kind === T_ENUM) return intWrite(enumBits(col), `T${i}[${idx}]`);
  if (col.type.kind === T_INT && numeric) return numberCode(col, i, idx);
  if (col.type.kind !== T_STRING) throw new RangeError('names need an Enum, integer or String column');
  return `{ const nb = T${i}[${idx}]; ${stringCode('nb', '0', 'nb.length')} }`;
}
