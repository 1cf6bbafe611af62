/**
 * Writes parsed records as RowBinary rows following a column plan: the same values, validations and
 * dead-letter decisions as TsvRowWriter (a row whose value does not fit its column is rolled back
 * and reported as `bad_value:<column>`), but each value in ClickHouse's binary form, so the server
 * parses nothing as text. Absent values are NULL in Nullable columns and the type default
 * otherwise; a clock column without a value gets the batch's ingest time.
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
import { addressEnd, ipVersion, isIpv4 } from '../parse/ip';
import { ACTION_NAMES, VENDOR_NAMES, ParsedRecord, SEVERITY_NAMES, Span } from '../parse/record';
import { isPlausibleTimestamp } from '../parse/time';
import type { TimeZone } from '../parse/timezone';
import { ipv4Value, writeIpv6Bytes } from '../../../common/src/integrity/canonical-ip';
import { BinaryOutput } from './binary-output';
import { ColumnPlan, PlannedColumn, S, S_FIELD, S_STATIC } from './column-plan';
import {
  T_DATETIME,
  T_DATETIME64,
  T_ENUM,
  T_INT,
  T_IPV4,
  T_IPV6,
  T_STRING,
} from '../../../common/src/columns/column-type';

const bytesOf = (names: readonly string[]): Buffer[] => names.map((n) => Buffer.from(n, 'utf8'));
const VENDOR_BYTES = bytesOf(VENDOR_NAMES);
const ACTION_BYTES = bytesOf(ACTION_NAMES);
const SEVERITY_BYTES = bytesOf(SEVERITY_NAMES);
const EMPTY = Buffer.alloc(0);

/** Per column, what the binary writer needs beyond the plan (computed once per plan). */
interface BinaryColumn {
  col: PlannedColumn;
  nullable: boolean;
  /** Enum value of each name index of the column's named source (vendor/action/severity), or []. */
  namedValues: Int32Array;
  /** Enum value written for an absent value. */
  enumDefaultValue: number;
  /** Byte width of the column's fixed-size value (ints, enums, clocks, addresses), 0 for String. */
  width: number;
  /** DateTime64: 10^(p-3) when p >= 3, else the divisor 10^(3-p) as a negative number. */
  scale: number;
}

function enumValueOf(col: PlannedColumn, name: string): number {
  const i = col.type.enumNames.indexOf(name);
  return i < 0 ? NaN : col.type.enumValues[i];
}

function binaryColumn(col: PlannedColumn): BinaryColumn {
  const t = col.type;
  const names =
    col.source === S.vendor
      ? VENDOR_NAMES
      : col.source === S.action
        ? ACTION_NAMES
        : col.source === S.severity
          ? SEVERITY_NAMES
          : [];
  const namedValues = Int32Array.from(names, (n) => (t.kind === T_ENUM ? enumValueOf(col, n) : 0));
  const width =
    t.kind === T_INT
      ? t.bits / 8
      : t.kind === T_ENUM
        ? t.text.includes('Enum16')
          ? 2
          : 1
        : t.kind === T_DATETIME || t.kind === T_IPV4
          ? 4
          : t.kind === T_DATETIME64
            ? 8
            : t.kind === T_IPV6
              ? 16
              : 0;
  return {
    col,
    nullable: t.nullable,
    namedValues,
    enumDefaultValue: t.kind === T_ENUM ? enumValueOf(col, col.enumDefault.toString('utf8')) : 0,
    width,
    scale: t.precision >= 3 ? 10 ** (t.precision - 3) : -(10 ** (3 - t.precision)),
  };
}

/** Appends RowBinary rows for one column plan into a reused BinaryOutput. */
export class RowBinaryRowWriter {
  readonly out: BinaryOutput;
  private readonly cols: BinaryColumn[];
  private readonly ctx: ParseContext;
  /** Where the current column's bytes (its Nullable marker, if any) start. */
  private colStart = 0;
  ingestTimeMs = 0;
  topic: Buffer = EMPTY;
  /** The message's sender address text (SENDER_HEADER), empty when it has none. */
  sender: Buffer = EMPTY;
  /** Kept for interface parity with TsvRowWriter (RowBinary needs no escaping). */
  topicClean = false;
  partition = 0;
  offset = 0;
  line = 0;

  constructor(plan: ColumnPlan, tz: TimeZone, initialBytes = 1 << 20) {
    this.cols = plan.columns.map(binaryColumn);
    this.out = new BinaryOutput(initialBytes);
    this.ctx = { tz, refMs: 0 };
  }

  /** Appends one row; returns null, or `bad_value:<column>` after rolling the row back. */
  writeRow(rec: ParsedRecord): string | null {
    const out = this.out;
    const start = out.pos;
    const cols = this.cols;
    this.ctx.refMs = this.ingestTimeMs;
    for (let i = 0; i < cols.length; i++) {
      const c = cols[i];
      if (c.col.source === S_STATIC) {
        out.raw(c.col.staticValue as Buffer);
        continue;
      }
      this.colStart = out.pos;
      if (c.nullable) out.u8(0);
      if (!this.column(c, rec)) {
        out.pos = start;
        return c.col.badValue;
      }
    }
    out.commitRow(start);
    return null;
  }

  private column(c: BinaryColumn, rec: ParsedRecord): boolean {
    switch (c.col.source) {
      case S.timestamp:
        return this.time(c, rec.timestamp === rec.timestamp ? rec.timestamp : this.ingestTimeMs);
      case S.ingest_time:
        return this.time(c, this.ingestTimeMs);
      case S.vendor:
        return c.col.vendorAllowed[rec.format] && this.named(c, rec.format, VENDOR_BYTES, false);
      case S.device:
        return this.span(c, rec, rec.device);
      case S.src_ip:
        return this.ip(c, rec, rec.srcIp, rec.srcIpVersion);
      case S.dst_ip:
        return this.ip(c, rec, rec.dstIp, rec.dstIpVersion);
      case S.src_port:
        return this.number(c, rec.srcPort);
      case S.dst_port:
        return this.number(c, rec.dstPort);
      case S.proto:
        return this.proto(c, rec);
      case S.action:
        return this.named(c, rec.action, ACTION_BYTES, true);
      case S.bytes:
        return this.number(c, rec.bytes);
      case S.rule:
        return this.span(c, rec, rec.rule);
      case S.severity:
        return rec.severity < 0 ? this.absent(c) : this.named(c, rec.severity, SEVERITY_BYTES, true);
      case S.message:
        return this.span(c, rec, rec.message);
      default:
        return this.otherColumn(c, rec);
    }
  }

  private otherColumn(c: BinaryColumn, rec: ParsedRecord): boolean {
    switch (c.col.source) {
      case S.raw:
        return this.writeText(c, rec.src, rec.lineStart, rec.lineEnd);
      case S.kafka_topic:
        return this.writeText(c, this.topic, 0, this.topic.length);
      case S.kafka_partition:
        return this.number(c, this.partition);
      case S.kafka_offset:
        return this.number(c, this.offset);
      case S.kafka_line:
        return this.number(c, this.line);
      case S.nat_src_ip:
        return this.ip(c, rec, rec.natSrcIp, rec.natSrcIpVersion);
      case S.nat_dst_ip:
        return this.ip(c, rec, rec.natDstIp, rec.natDstIpVersion);
      case S.nat_src_port:
        return this.number(c, rec.natSrcPort);
      case S.nat_dst_port:
        return this.number(c, rec.natDstPort);
      case S.sender_ip:
        return this.senderIp(c);
      case S_FIELD: {
        const i = rec.findField(c.col.fieldKey as Buffer);
        if (i < 0) return this.absent(c);
        return this.writeText(c, rec.fieldValueBuffer(i), rec.fieldValueStart(i), rec.fieldValueEnd(i));
      }
      default:
        return false;
    }
  }

  /**
   * The header is metadata about the message, not the line: one that is no address of the column's
   * family (a foreign producer's header) is written as absent instead of dead-lettering the line,
   * exactly as the TSV writer does.
   */
  private senderIp(c: BinaryColumn): boolean {
    const b = this.sender;
    const kind = c.col.type.kind;
    if (b.length === 0) return this.absent(c);
    if (kind === T_STRING) {
      this.out.string(b, 0, b.length);
      return true;
    }
    const v = ipVersion(b, 0, b.length);
    if (v === 0 || (v === 6 && kind === T_IPV4) || (kind !== T_IPV4 && kind !== T_IPV6))
      return this.absent(c);
    const at = this.out.pos;
    if (this.address(c, b, 0, b.length)) return true;
    this.out.pos = at;
    return this.absent(c);
  }

  /** NULL, or the type default (ingest time for clocks). Called before any value byte is written. */
  private absent(c: BinaryColumn): boolean {
    const out = this.out;
    if (c.nullable) {
      out.pos = this.colStart;
      out.u8(1);
      return true;
    }
    switch (c.col.type.kind) {
      case T_STRING:
        out.u8(0);
        return true;
      case T_ENUM:
        out.int(c.enumDefaultValue, c.width * 8);
        return true;
      case T_DATETIME:
      case T_DATETIME64:
        return this.time(c, this.ingestTimeMs);
      default:
        out.zeros(c.width);
        return true;
    }
  }

  private time(c: BinaryColumn, ms: number): boolean {
    const out = this.out;
    switch (c.col.type.kind) {
      case T_DATETIME64:
        if (c.scale === 1) out.i64(ms);
        else if (c.scale > 0) out.scaledI64(ms, c.scale);
        else out.i64(Math.floor(ms / -c.scale));
        return true;
      case T_DATETIME:
        out.u32(Math.floor(ms / 1000));
        return true;
      case T_INT:
        out.i64(ms);
        return true;
      default:
        out.decimalString(ms);
        return true;
    }
  }

  private number(c: BinaryColumn, n: number): boolean {
    if (n < 0) return this.absent(c);
    const col = c.col;
    if (col.type.kind === T_STRING) {
      this.out.decimalString(n);
      return true;
    }
    if (n > col.intMax || n < col.intMin) return false;
    this.out.int(n, col.type.bits);
    return true;
  }

  /** A vendor/action/severity index: enum value, integer, or the name as a String. */
  private named(c: BinaryColumn, index: number, names: Buffer[], numeric: boolean): boolean {
    const kind = c.col.type.kind;
    if (kind === T_ENUM) {
      this.out.int(c.namedValues[index], c.width * 8);
      return true;
    }
    if (kind === T_INT && numeric) return this.number(c, index);
    const b = names[index];
    this.out.string(b, 0, b.length);
    return true;
  }

  private proto(c: BinaryColumn, rec: ParsedRecord): boolean {
    if (rec.protoName === '') return this.absent(c);
    const kind = c.col.type.kind;
    if (kind === T_INT) return rec.protoNumber < 0 ? this.absent(c) : this.number(c, rec.protoNumber);
    if (kind === T_ENUM) {
      const v = enumValueOf(c.col, rec.protoName);
      if (v !== v) return false;
      this.out.int(v, c.width * 8);
      return true;
    }
    this.out.latin1String(rec.protoName);
    return true;
  }

  private ip(c: BinaryColumn, rec: ParsedRecord, span: Span, version: number): boolean {
    if (version === 0) return this.absent(c);
    const kind = c.col.type.kind;
    if (version === 6 && kind === T_IPV4) return false;
    const b = rec.spanBuffer(span);
    if (kind === T_STRING) {
      this.out.string(b, span.start, span.end);
      return true;
    }
    return this.address(c, b, span.start, span.end);
  }

  private address(c: BinaryColumn, b: Uint8Array, s: number, e: number): boolean {
    const out = this.out;
    if (c.col.type.kind === T_IPV4) {
      const v = ipv4Value(b, s, e);
      if (v < 0) return false;
      out.u32(v);
      return true;
    }
    out.ensure(16);
    if (!writeIpv6Bytes(b, s, e, out.buf, out.pos)) return false;
    out.pos += 16;
    return true;
  }

  private span(c: BinaryColumn, rec: ParsedRecord, span: Span): boolean {
    if (span.start < 0) return this.absent(c);
    return this.writeText(c, rec.spanBuffer(span), span.start, span.end);
  }

  /** Writes text bytes into any column type, validating them for typed columns; false = does not fit. */
  writeText(c: BinaryColumn, b: Buffer, s: number, e: number): boolean {
    const col = c.col;
    const kind = col.type.kind;
    if (kind === T_STRING) {
      this.out.string(b, s, e);
      return true;
    }
    if (e <= s) return this.absent(c);
    switch (kind) {
      case T_INT:
        return this.intText(c, b, s, e);
      case T_IPV4:
        return isIpv4(b, s, e) && this.address(c, b, s, e);
      case T_IPV6: {
        const end = addressEnd(b, s, e);
        return ipVersion(b, s, end) !== 0 && this.address(c, b, s, end);
      }
      case T_ENUM: {
        for (let i = 0; i < col.enumNames.length; i++) {
          const n = col.enumNames[i];
          if (n.length === e - s && n.equals(b.subarray(s, e))) {
            this.out.int(col.type.enumValues[i], c.width * 8);
            return true;
          }
        }
        return false;
      }
      default: {
        const ms = parseFlexibleTimestamp(b, s, e, this.ctx);
        return isPlausibleTimestamp(ms) && this.time(c, ms);
      }
    }
  }

  /** Decimal integer text, range-checked exactly (as TsvRowWriter's intTextFits), written binary. */
  private intText(c: BinaryColumn, b: Buffer, s: number, e: number): boolean {
    const col = c.col;
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
    let v = 0;
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
      for (let j = i; j < e; j++) v = v * 10 + (b[j] - 48);
      this.out.int(negative ? -v : v, col.type.bits);
    } else {
      const big = BigInt(b.toString('latin1', i, e));
      this.out.big64(negative ? -big : big);
    }
    return true;
  }

  /** Encodes one static value (nullable marker included) for the plan; null when it does not fit. */
  encodeStatic(col: PlannedColumn, value: string): Buffer | null {
    const c = binaryColumn(col);
    const out = this.out;
    out.reset();
    this.colStart = 0;
    if (c.nullable) out.u8(0);
    const bytes = Buffer.from(value, 'utf8');
    if (!this.writeText(c, bytes, 0, bytes.length)) return null;
    return Buffer.from(out.buf.subarray(0, out.pos));
  }
}
