/**
 * The column plan of the direct RowBinary canonicaliser (canonical-rowbinary.ts): per INSERT column
 * its RowBinary width and the reductions the canonical form applies (DateTime64 fraction to
 * milliseconds, Enum values to their escaped names), plus the TSV escape table and the decimal writer.
 */
import {
  parseColumnType,
  T_DATETIME,
  T_DATETIME64,
  T_ENUM,
  T_INT,
  T_IPV4,
  T_IPV6,
  T_STRING,
} from '../columns/column-type';
import type { CanonicalColumn } from './canonical-ops';

/** TSV escape of each byte (0: copied as is), as the encoder writes Strings. */
export const ESCAPE = new Uint8Array(256);
ESCAPE[9] = 116;
ESCAPE[10] = 110;
ESCAPE[13] = 114;
ESCAPE[92] = 92;
/** One compiled column. */
export interface Col {
  kind: number;
  nullable: boolean;
  /** Byte width of fixed-size values (0 for String). */
  width: number;
  signed: boolean;
  /** 10^precision of a DateTime64, and how to reduce its fraction to milliseconds. */
  scale: number;
  fracDiv: number;
  fracMul: number;
  /** Enum value -> escaped name bytes. */
  enumNames: Map<number, Buffer>;
  isTime: boolean;
}

/** Writes a non-negative safe integer in decimal at `o`; returns the new position. */
export function writeDecimal(n: number, out: Buffer, o: number): number {
  if (n < 10) {
    out[o] = 48 + n;
    return o + 1;
  }
  if (n <= 0x7fffffff) {
    // Small integers (ports, lines, sizes): 32-bit arithmetic.
    let len = 2;
    for (let t = (n / 100) | 0; t > 0; t = (t / 10) | 0) len++;
    let i = o + len;
    while (n > 0) {
      const q = (n / 10) | 0;
      out[--i] = 48 + n - q * 10;
      n = q;
    }
    return o + len;
  }
  let len = 1;
  for (let t = n; t >= 10; t = Math.floor(t / 10)) len++;
  const end = o + len;
  let i = end;
  do {
    const q = Math.floor(n / 10);
    out[--i] = 48 + (n - q * 10);
    n = q;
  } while (n > 0);
  return end;
}

/** The UTF-8 bytes of `text`, TSV-escaped. */
function escaped(text: string): Buffer {
  const raw = Buffer.from(text, 'utf8');
  const out: number[] = [];
  for (const v of raw) {
    const x = ESCAPE[v];
    if (x === 0) out.push(v);
    else out.push(92, x);
  }
  return Buffer.from(out);
}

/** Compiles one INSERT column; throws RangeError for a type without a canonical form. */
export function compileColumn(c: CanonicalColumn, isTime: boolean): Col {
  const t = parseColumnType(c.type);
  const enumNames = new Map<number, Buffer>();
  t.enumNames.forEach((n, i) => enumNames.set(t.enumValues[i], escaped(n)));
  const precision = t.kind === T_DATETIME64 ? t.precision : 0;
  const widths: Record<number, number> = {
    [T_STRING]: 0,
    [T_ENUM]: t.text.includes('Enum16') ? 2 : 1,
    [T_INT]: t.bits / 8,
    [T_DATETIME]: 4,
    [T_DATETIME64]: 8,
    [T_IPV4]: 4,
    [T_IPV6]: 16,
  };
  if (!(t.kind in widths)) throw new RangeError(`column ${c.name}: type ${c.type} has no canonical form`);
  return {
    kind: t.kind,
    nullable: t.nullable,
    width: widths[t.kind],
    signed: t.signed,
    scale: 10 ** precision,
    fracDiv: precision > 3 ? 10 ** (precision - 3) : 1,
    fracMul: precision < 3 ? 10 ** (3 - precision) : 1,
    enumNames,
    isTime,
  };
}
