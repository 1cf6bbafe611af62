/**
 * Writes parsed records as RowBinary rows following a column plan: the same values, validations and
 * dead-letter decisions as TsvRowWriter (a row whose value does not fit its column is rolled back
 * and reported as `bad_value:<column>`), but each value in ClickHouse's binary form, so the server
 * parses nothing as text. Absent values are NULL in Nullable columns and the type default
 * otherwise; a clock column without a value gets the batch's ingest time.
 *
 * The plan is compiled once (column-sources.ts) into one writer per column, built here for exactly
 * that column's type; rowbinary-codegen.ts then generates one straight-line row writer for the plan
 * that inlines the common columns and calls those writers for the rest.
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
import type { ParsedRecord } from '../parse/record';
import { isPlausibleTimestamp } from '../parse/time';
import type { TimeZone } from '../parse/timezone';
import { ipv4Value, writeIpv6Bytes } from '../../../common/src/integrity/canonical-ip';
import { BinaryOutput } from './binary-output';
import { ColumnPlan, PlannedColumn, S_STATIC } from './column-plan';
import { ColumnEmitter, ColumnWrite, compileColumnWriters, RowContext } from './column-sources';
import { compileRowWriter, GeneratedRowWrite } from './rowbinary-codegen';
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

/** Decimal integer text, range-checked exactly (as TsvRowWriter's intTextFits), written binary. */
function intText(out: BinaryOutput, col: PlannedColumn, b: Buffer, s: number, e: number): boolean {
  let i = s;
  const negative = b[i] === 45;
  if (negative) {
    if (!col.type.signed) return false;
    i++;
  }
  while (i < e - 1 && b[i] === 48) i++;
  if (i >= e) return false;
  const n = e - i;
  const limit = negative ? col.intMinText.slice(1) : col.intMaxText;
  if (n > limit.length) return false;
  for (let j = i; j < e; j++) {
    const d = b[j] - 48;
    if (d < 0 || d > 9) return false;
    if (n === limit.length) {
      const l = limit.charCodeAt(j - i) - 48;
      if (d !== l) {
        if (d > l) return false;
        // Smaller at the first difference: in range.
        for (let k = j; k < e; k++) if (b[k] < 48 || b[k] > 57) return false;
        break;
      }
    }
  }
  if (n <= 15) {
    let v = 0;
    for (let j = i; j < e; j++) v = v * 10 + (b[j] - 48);
    out.int(negative ? -v : v, col.type.bits);
  } else {
    const big = BigInt(b.toString('latin1', i, e));
    out.big64(negative ? -big : big);
  }
  return true;
}

/** The generated writer, or null where the host forbids code generation (the loop is used then). */
function generatedWriter(
  plan: ColumnPlan,
  out: BinaryOutput,
  row: RowContext,
  writers: readonly ColumnWrite[],
): GeneratedRowWrite | null {
  if (plan.columns.length === 0) return null;
  try {
    return compileRowWriter(plan, out, row, writers);
  } catch (err) {
    if (err instanceof EvalError) return null;
    throw err;
  }
}

/** Appends RowBinary rows for one column plan into a reused BinaryOutput. */
export class RowBinaryRowWriter {
  readonly out: BinaryOutput;
  /** Message-level values of the rows being written (set by the encoder). */
  readonly row = new RowContext();
  private readonly ctx: ParseContext;
  private readonly emitter: RowBinaryEmitter;
  private readonly writers: ColumnWrite[];
  private readonly badValues: string[];
  /** The plan's generated row writer (rowbinary-codegen.ts); null: the closure loop writes rows. */
  private readonly generated: GeneratedRowWrite | null;

  /** `generate`: false keeps the closure loop (tests compare both; hosts that forbid code generation). */
  constructor(plan: ColumnPlan, tz: TimeZone, initialBytes = 1 << 20, generate = true) {
    this.out = new BinaryOutput(initialBytes);
    this.ctx = { tz, refMs: 0 };
    this.emitter = new RowBinaryEmitter(this.out, this.row, this.ctx);
    const em = this.emitter;
    this.writers = compileColumnWriters(plan, em, this.row).map((w, i) => {
      const col = plan.columns[i];
      return col.type.nullable && col.source !== S_STATIC ? em.nullable(w) : w;
    });
    this.badValues = plan.columns.map((c) => c.badValue);
    this.generated = generate ? generatedWriter(plan, this.out, this.row, this.writers) : null;
  }

  /** Appends one row; returns null, or `bad_value:<column>` after rolling the row back. */
  writeRow(rec: ParsedRecord): string | null {
    const out = this.out;
    const start = out.pos;
    this.ctx.refMs = this.row.ingestTimeMs;
    if (this.generated !== null) {
      const bad = this.generated(rec);
      if (bad >= 0) {
        out.pos = start;
        return this.badValues[bad];
      }
      out.commitRow(start);
      return null;
    }
    const writers = this.writers;
    for (let i = 0; i < writers.length; i++) {
      if (!writers[i](rec)) {
        out.pos = start;
        return this.badValues[i];
      }
    }
    out.commitRow(start);
    return null;
  }

  /** Encodes one static value (nullable marker included) for the plan; null when it does not fit. */
  encodeStatic(col: PlannedColumn, value: string): Buffer | null {
    const out = this.out;
    out.reset();
    this.emitter.colStart = 0;
    if (col.type.nullable) out.u8(0);
    const bytes = Buffer.from(value, 'utf8');
    if (!this.emitter.text(col)(bytes, 0, bytes.length, false)) return null;
    return Buffer.from(out.buf.subarray(0, out.pos));
  }
}
