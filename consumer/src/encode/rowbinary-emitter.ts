/**
 * The RowBinary value writers of each column type: RowBinaryEmitter is the ColumnEmitter that
 * column-sources.ts asks, once per column of a plan, for a writer built for exactly that column's
 * type. Separate from rowbinary-writer.ts (which drives rows, rollback and code generation) because
 * this is the per-type byte format and its validations, the same decisions as TsvEmitter makes.
 *
 * RowBinary per type (LowCardinality is transparent in RowBinary):
 *   Nullable(T)   1 byte 0 + T, or 1 byte 1 for NULL
 *   String        LEB128 length + bytes as they are (no escaping)
 *   [U]IntN       N/8 bytes little-endian, two's complement
 *   Enum8/Enum16  the element's value as Int8/Int16
 *   DateTime      UInt32 epoch seconds;  DateTime64(p)  Int64 ticks of 10^-p s
 *   IPv4          UInt32 little-endian;  IPv6  16 bytes in network order
 */
import type { ParseContext } from '../parse/context';
import { parseFlexibleTimestamp } from '../parse/flex-time';
import { addressEnd, ipVersion, ipv4Number } from '../parse/ip';
import { isPlausibleTimestamp } from '../parse/time';
import { ipv4Value, writeIpv6Bytes } from '../../../common/src/integrity/canonical-ip';
import { BinaryOutput } from './binary-output';
import { PlannedColumn } from './column-plan';
import { ColumnEmitter, ColumnWrite, RowContext } from './column-sources';
import { intText } from './rowbinary-int-text';
import {
  T_DATETIME,
  T_DATETIME64,
  T_ENUM,
  T_INT,
  T_IPV4,
  T_IPV6,
  T_STRING,
} from '../../../common/src/columns/column-type';

/** Byte width of a column's fixed-size value (ints, enums, clocks, addresses), 0 for String. */
function widthOf(col: PlannedColumn): number {
  const t = col.type;
  if (t.kind === T_INT) return t.bits / 8;
  if (t.kind === T_ENUM) return t.text.includes('Enum16') ? 2 : 1;
  if (t.kind === T_DATETIME || t.kind === T_IPV4) return 4;
  if (t.kind === T_DATETIME64) return 8;
  return t.kind === T_IPV6 ? 16 : 0;
}

function enumValueOf(col: PlannedColumn, name: string): number {
  const i = col.type.enumNames.indexOf(name);
  return i < 0 ? NaN : col.type.enumValues[i];
}

/** Builds the RowBinary value writers of each column type (ColumnEmitter for column-sources.ts). */
export class RowBinaryEmitter implements ColumnEmitter {
  /** Where the current Nullable column's marker byte is (absent values overwrite it with 1). */
  colStart = 0;

  constructor(
    readonly out: BinaryOutput,
    private readonly row: RowContext,
    private readonly ctx: ParseContext,
  ) {}

  mark(): number {
    return this.out.pos;
  }

  rewind(at: number): void {
    this.out.pos = at;
  }

  /** Writes a fixed-width integer of the column's width (8/16/32/64 bits). */
  private intWriter(bits: number): (v: number) => void {
    const out = this.out;
    if (bits === 64) return (v) => out.i64(v);
    if (bits === 32) return (v) => out.u32(v);
    if (bits === 16) return (v) => out.u16(v);
    return (v) => out.u8(v);
  }

  time(col: PlannedColumn): (ms: number) => boolean {
    const out = this.out;
    const p = col.type.precision;
    switch (col.type.kind) {
      case T_DATETIME64: {
        if (p === 3) return (ms) => (out.i64(ms), true);
        if (p > 3) {
          const scale = 10 ** (p - 3);
          return (ms) => (out.scaledI64(ms, scale), true);
        }
        const divisor = 10 ** (3 - p);
        return (ms) => (out.i64(Math.floor(ms / divisor)), true);
      }
      case T_DATETIME:
        return (ms) => (out.u32(Math.floor(ms / 1000)), true);
      case T_INT:
        return (ms) => (out.i64(ms), true);
      default:
        return (ms) => (out.decimalString(ms), true);
    }
  }

  number(col: PlannedColumn): (n: number) => boolean {
    const out = this.out;
    if (col.type.kind === T_STRING) return (n) => (out.decimalString(n), true);
    const max = col.intMax;
    const min = col.intMin;
    const put = this.intWriter(col.type.bits);
    return (n) => {
      if (n > max || n < min) return false;
      put(n);
      return true;
    };
  }

  named(col: PlannedColumn, names: readonly Buffer[], numeric: boolean): (index: number) => boolean {
    const out = this.out;
    const kind = col.type.kind;
    if (kind === T_ENUM) {
      const values = Int32Array.from(names, (n) => enumValueOf(col, n.toString('utf8')));
      const put = this.intWriter(widthOf(col) * 8);
      return (index) => (put(values[index]), true);
    }
    if (kind === T_INT && numeric) return this.number(col);
    return (index) => {
      const b = names[index];
      out.string(b, 0, b.length);
      return true;
    };
  }

  proto(col: PlannedColumn): (name: string, number: number) => boolean {
    const out = this.out;
    const kind = col.type.kind;
    if (kind === T_INT) {
      const number = this.number(col);
      const absent = this.absent(col);
      return (_name, n) => (n < 0 ? absent() : number(n));
    }
    if (kind === T_ENUM) {
      const put = this.intWriter(widthOf(col) * 8);
      return (name) => {
        const v = enumValueOf(col, name);
        if (v !== v) return false;
        put(v);
        return true;
      };
    }
    return (name) => (out.latin1String(name), true);
  }

  ip(col: PlannedColumn): (b: Buffer, s: number, e: number, version: number, ipv4: number) => boolean {
    const out = this.out;
    if (col.type.kind === T_STRING) return (b, s, e) => (out.string(b, s, e), true);
    return this.address(col);
  }

  /**
   * Address text (already known to be an address of a fitting family) -> 4 or 16 bytes; `ipv4`
   * is the value the parser already read from that text (-1: not known, read it here).
   */
  private address(
    col: PlannedColumn,
  ): (b: Uint8Array, s: number, e: number, version: number, ipv4: number) => boolean {
    const out = this.out;
    if (col.type.kind === T_IPV4) {
      return (b, s, e, _version, ipv4) => {
        const v = ipv4 >= 0 ? ipv4 : ipv4Value(b, s, e);
        if (v < 0) return false;
        out.u32(v);
        return true;
      };
    }
    return (b, s, e, version, ipv4) => {
      // Dotted IPv4 (the common case) becomes ::ffff:a.b.c.d without the general IPv6 parser.
      const v4 = version !== 4 ? -1 : ipv4 >= 0 ? ipv4 : ipv4Value(b, s, e);
      if (v4 >= 0) {
        out.ipv4Mapped(v4);
        return true;
      }
      out.ensure(16);
      if (!writeIpv6Bytes(b, s, e, out.buf, out.pos)) return false;
      out.pos += 16;
      return true;
    };
  }

  absent(col: PlannedColumn): () => boolean {
    const out = this.out;
    if (col.type.nullable) {
      return () => {
        out.pos = this.colStart;
        out.u8(1);
        return true;
      };
    }
    switch (col.type.kind) {
      case T_STRING:
        return () => (out.u8(0), true);
      case T_ENUM: {
        const put = this.intWriter(widthOf(col) * 8);
        const value = enumValueOf(col, col.enumDefault.toString('utf8'));
        return () => (put(value), true);
      }
      case T_DATETIME:
      case T_DATETIME64: {
        const time = this.time(col);
        return () => time(this.row.ingestTimeMs);
      }
      default: {
        const width = widthOf(col);
        return () => (out.zeros(width), true);
      }
    }
  }

  constant(col: PlannedColumn): () => boolean {
    const out = this.out;
    const value = col.staticValue as Buffer;
    return () => (out.raw(value), true);
  }

  text(col: PlannedColumn): (b: Buffer, s: number, e: number, clean: boolean) => boolean {
    const out = this.out;
    const kind = col.type.kind;
    if (kind === T_STRING) return (b, s, e) => (out.string(b, s, e), true);
    const absent = this.absent(col);
    const typed = this.typedText(col);
    return (b, s, e) => (e <= s ? absent() : typed(b, s, e));
  }

  /** Validating writers of non-empty text into typed columns; false = does not fit. */
  private typedText(col: PlannedColumn): (b: Buffer, s: number, e: number) => boolean {
    const kind = col.type.kind;
    if (kind === T_INT) return (b, s, e) => intText(this.out, col, b, s, e);
    const address = this.address(col);
    if (kind === T_IPV4) {
      return (b, s, e) => {
        const v4 = ipv4Number(b, s, e);
        return v4 >= 0 && address(b, s, e, 4, v4);
      };
    }
    if (kind === T_IPV6) {
      return (b, s, e) => {
        const end = addressEnd(b, s, e);
        const v = ipVersion(b, s, end);
        return v !== 0 && address(b, s, end, v, -1);
      };
    }
    if (kind === T_ENUM) {
      const put = this.intWriter(widthOf(col) * 8);
      return (b, s, e) => {
        for (let i = 0; i < col.enumNames.length; i++) {
          const n = col.enumNames[i];
          if (n.length === e - s && n.equals(b.subarray(s, e))) {
            put(col.type.enumValues[i]);
            return true;
          }
        }
        return false;
      };
    }
    const time = this.time(col);
    return (b, s, e) => {
      const ms = parseFlexibleTimestamp(b, s, e, this.ctx);
      return isPlausibleTimestamp(ms) && time(ms);
    };
  }

  /** Wraps a Nullable column's writer: the 0 marker first, which an absent value turns into 1. */
  nullable(write: ColumnWrite): ColumnWrite {
    const out = this.out;
    return (rec) => {
      this.colStart = out.pos;
      out.u8(0);
      return write(rec);
    };
  }
}
