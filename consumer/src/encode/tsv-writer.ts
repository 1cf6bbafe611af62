/**
 * Writes parsed records as TabSeparated rows following a column plan. Every value is checked to be
 * representable in its column type before it is written, so ClickHouse never rejects a batch for
 * one bad value: a row whose value does not fit is rolled back and reported as `bad_value:<column>`
 * (dead-lettered by the caller). Absent values are `\N` in Nullable columns and the type default
 * otherwise; a DateTime column without a value gets the batch's ingest time. Where values come
 * from is decided once per plan in column-sources.ts (shared with the RowBinary writer).
 */
import type { ParseContext } from '../parse/context';
import { parseFlexibleTimestamp } from '../parse/flex-time';
import { addressEnd, ipVersion, isIpv4 } from '../parse/ip';
import type { ParsedRecord } from '../parse/record';
import { isPlausibleTimestamp } from '../parse/time';
import type { TimeZone } from '../parse/timezone';
import { ColumnPlan, PlannedColumn } from './column-plan';
import { ColumnEmitter, ColumnWrite, compileColumnWriters, RowContext } from './column-sources';
import {
  T_DATETIME,
  T_DATETIME64,
  T_ENUM,
  T_INT,
  T_IPV4,
  T_IPV6,
  T_STRING,
} from '../../../common/src/columns/column-type';
import { TsvOutput } from './tsv-output';

const IPV4_ZERO = Buffer.from('0.0.0.0');
const IPV6_ZERO = Buffer.from('::');

/** Builds the TSV value writers of each column (ColumnEmitter for column-sources.ts). */
export class TsvEmitter implements ColumnEmitter {
  constructor(
    readonly out: TsvOutput,
    private readonly row: RowContext,
    private readonly ctx: ParseContext,
  ) {}

  mark(): number {
    return this.out.pos;
  }

  rewind(at: number): void {
    this.out.pos = at;
  }

  time(col: PlannedColumn): (ms: number) => boolean {
    return (ms) => this.writeTime(col, ms);
  }

  number(col: PlannedColumn): (n: number) => boolean {
    return (n) => this.writeNumber(col, n);
  }

  named(col: PlannedColumn, names: readonly Buffer[], numeric: boolean): (index: number) => boolean {
    // Vendor names go through the text path: an Enum column checks them, an integer column refuses them.
    if (!numeric) return (index) => this.writeText(col, names[index], 0, names[index].length, true);
    if (col.type.kind === T_INT) return (index) => this.writeNumber(col, index);
    return (index) => {
      this.out.verbatim(names[index], 0, names[index].length);
      return true;
    };
  }

  proto(col: PlannedColumn): (name: string, number: number) => boolean {
    const kind = col.type.kind;
    if (kind === T_INT) return (_name, n) => (n < 0 ? this.absentValue(col) : this.writeNumber(col, n));
    return (name) => {
      if (kind === T_ENUM && !col.type.enumNames.includes(name)) return false;
      this.out.latin1Text(name);
      return true;
    };
  }

  ip(): (b: Buffer, s: number, e: number, version: number) => boolean {
    return (b, s, e) => {
      this.out.verbatim(b, s, e);
      return true;
    };
  }

  absent(col: PlannedColumn): () => boolean {
    return () => this.absentValue(col);
  }

  constant(col: PlannedColumn): () => boolean {
    const v = col.staticValue as Buffer;
    return () => {
      this.out.verbatim(v, 0, v.length);
      return true;
    };
  }

  text(col: PlannedColumn): (b: Buffer, s: number, e: number, clean: boolean) => boolean {
    return (b, s, e, clean) => this.writeText(col, b, s, e, clean);
  }

  /** Writes the column's value for "no value": `\N`, or the type default (ingest time for clocks). */
  absentValue(col: PlannedColumn): boolean {
    const out = this.out;
    if (col.type.nullable) {
      out.nullValue();
      return true;
    }
    switch (col.type.kind) {
      case T_INT:
        out.uint(0);
        return true;
      case T_IPV4:
        out.verbatim(IPV4_ZERO, 0, IPV4_ZERO.length);
        return true;
      case T_IPV6:
        out.verbatim(IPV6_ZERO, 0, IPV6_ZERO.length);
        return true;
      case T_ENUM:
        out.escaped(col.enumDefault, 0, col.enumDefault.length);
        return true;
      case T_DATETIME:
      case T_DATETIME64:
        return this.writeTime(col, this.row.ingestTimeMs);
      default:
        return true;
    }
  }

  private writeTime(col: PlannedColumn, ms: number): boolean {
    const kind = col.type.kind;
    if (kind === T_DATETIME64) this.out.epochSeconds(ms, col.type.precision);
    else if (kind === T_DATETIME) this.out.seconds(Math.floor(ms / 1000));
    else this.out.uint(ms);
    return true;
  }

  private writeNumber(col: PlannedColumn, n: number): boolean {
    if (col.type.kind === T_INT && (n > col.intMax || n < col.intMin)) return false;
    this.out.uint(n);
    return true;
  }

  /** Writes text bytes into any column type, validating them for typed columns; false = does not fit. */
  writeText(col: PlannedColumn, b: Buffer, s: number, e: number, clean: boolean): boolean {
    const kind = col.type.kind;
    if (kind === T_STRING) {
      if (clean) this.out.verbatim(b, s, e);
      else this.out.escaped(b, s, e);
      return true;
    }
    if (e <= s) return this.absentValue(col);
    switch (kind) {
      case T_INT: {
        if (!intTextFits(col, b, s, e)) return false;
        // Canonical digits: ClickHouse's TSV reader stops a number at a leading zero ("007").
        const negative = b[s] === 45;
        let i = negative ? s + 1 : s;
        while (i < e - 1 && b[i] === 48) i++;
        if (negative && !(i === e - 1 && b[i] === 48)) this.out.verbatim(b, s, s + 1);
        this.out.verbatim(b, i, e);
        return true;
      }
      case T_IPV4:
        if (!isIpv4(b, s, e)) return false;
        this.out.verbatim(b, s, e);
        return true;
      case T_IPV6: {
        const end = addressEnd(b, s, e);
        if (ipVersion(b, s, end) === 0) return false;
        this.out.verbatim(b, s, end);
        return true;
      }
      case T_ENUM:
        if (!col.enumNames.some((n) => n.length === e - s && n.equals(b.subarray(s, e)))) return false;
        this.out.escaped(b, s, e);
        return true;
      default: {
        const ms = parseFlexibleTimestamp(b, s, e, this.ctx);
        return isPlausibleTimestamp(ms) && this.writeTime(col, ms);
      }
    }
  }
}

/** Appends rows for one column plan into a reused TsvOutput. */
export class TsvRowWriter {
  readonly out: TsvOutput;
  /** Message-level values of the rows being written (set by the encoder). */
  readonly row = new RowContext();
  private readonly ctx: ParseContext;
  private readonly emitter: TsvEmitter;
  private readonly writers: ColumnWrite[];
  private readonly badValues: string[];

  /** `tz` reads offset-less clocks in `field:` values written to DateTime columns. */
  constructor(plan: ColumnPlan, tz: TimeZone, initialBytes = 1 << 20) {
    this.out = new TsvOutput(initialBytes);
    this.ctx = { tz, refMs: 0 };
    this.emitter = new TsvEmitter(this.out, this.row, this.ctx);
    this.writers = compileColumnWriters(plan, this.emitter, this.row);
    this.badValues = plan.columns.map((c) => c.badValue);
  }

  /** Appends one row; returns null, or `bad_value:<column>` after rolling the row back. */
  writeRow(rec: ParsedRecord): string | null {
    const out = this.out;
    const start = out.pos;
    const writers = this.writers;
    this.ctx.refMs = this.row.ingestTimeMs;
    for (let i = 0; i < writers.length; i++) {
      if (i > 0) {
        out.ensure(1);
        out.byte(9);
      }
      if (!writers[i](rec)) {
        out.pos = start;
        return this.badValues[i];
      }
    }
    out.ensure(1);
    out.byte(10);
    return null;
  }

  /** Validates and encodes one static value for its column (config time); null when it does not fit. */
  encodeStatic(col: PlannedColumn, value: string): Buffer | null {
    this.out.pos = 0;
    const bytes = Buffer.from(value, 'utf8');
    if (!this.emitter.writeText(col, bytes, 0, bytes.length, false)) return null;
    return Buffer.from(this.out.buf.subarray(0, this.out.pos));
  }
}

/** True when [s, e) is a decimal integer within the column's range (exact for 64-bit). */
function intTextFits(col: PlannedColumn, b: Uint8Array, s: number, e: number): boolean {
  let i = s;
  const negative = b[i] === 45;
  if (negative) {
    if (!col.type.signed) return false;
    i++;
  }
  while (i < e - 1 && b[i] === 48) i++;
  if (i >= e) return false;
  for (let j = i; j < e; j++) if (b[j] < 48 || b[j] > 57) return false;
  const limit = negative ? col.intMinText.slice(1) : col.intMaxText;
  const n = e - i;
  if (n !== limit.length) return n < limit.length;
  for (let j = 0; j < n; j++) {
    const d = b[i + j] - limit.charCodeAt(j);
    if (d !== 0) return d < 0;
  }
  return true;
}
