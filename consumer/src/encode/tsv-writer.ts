/**
 * Writes parsed records as TabSeparated rows following a column plan. Every value is checked to be
 * representable in its column type before it is written, so ClickHouse never rejects a batch for
 * one bad value: a row whose value does not fit is rolled back and reported as `bad_value:<column>`
 * (dead-lettered by the caller). Absent values are `\N` in Nullable columns and the type default
 * otherwise; a DateTime column without a value gets the batch's ingest time.
 */
import type { ParseContext } from '../parse/context';
import { parseFlexibleTimestamp } from '../parse/flex-time';
import { addressEnd, ipVersion, isIpv4 } from '../parse/ip';
import { ACTION_NAMES, VENDOR_NAMES, ParsedRecord, SEVERITY_NAMES, Span } from '../parse/record';
import { isPlausibleTimestamp } from '../parse/time';
import type { TimeZone } from '../parse/timezone';
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
import { TsvOutput } from './tsv-output';

const bytesOf = (names: readonly string[]): Buffer[] => names.map((n) => Buffer.from(n, 'utf8'));
const VENDOR_BYTES = bytesOf(VENDOR_NAMES);
const ACTION_BYTES = bytesOf(ACTION_NAMES);
const SEVERITY_BYTES = bytesOf(SEVERITY_NAMES);
const IPV4_ZERO = Buffer.from('0.0.0.0');
const IPV6_ZERO = Buffer.from('::');
const EMPTY = Buffer.alloc(0);

/** Appends rows for one column plan into a reused TsvOutput. */
export class TsvRowWriter {
  readonly out: TsvOutput;
  private readonly cols: PlannedColumn[];
  private readonly ctx: ParseContext;
  /** Enrichment of the rows being written (set per batch / per Kafka message by the caller). */
  ingestTimeMs = 0;
  topic: Buffer = EMPTY;
  /** The topic name holds no TSV specials (true for every legal Kafka topic name). */
  topicClean = false;
  partition = 0;
  offset = 0;
  /** Index of the current line within its (possibly packed) Kafka message: provenance and canonical order. */
  line = 0;
  /** The message's sender address text (SENDER_HEADER), empty when it has none. */
  sender: Buffer = EMPTY;

  /** `tz` reads offset-less clocks in `field:` values written to DateTime columns. */
  constructor(plan: ColumnPlan, tz: TimeZone, initialBytes = 1 << 20) {
    this.cols = plan.columns;
    this.out = new TsvOutput(initialBytes);
    this.ctx = { tz, refMs: 0 };
  }

  /** Appends one row; returns null, or `bad_value:<column>` after rolling the row back. */
  writeRow(rec: ParsedRecord): string | null {
    const out = this.out;
    const start = out.pos;
    const cols = this.cols;
    this.ctx.refMs = this.ingestTimeMs;
    for (let i = 0; i < cols.length; i++) {
      if (i > 0) {
        out.ensure(1);
        out.byte(9);
      }
      if (!this.column(cols[i], rec)) {
        out.pos = start;
        return cols[i].badValue;
      }
    }
    out.ensure(1);
    out.byte(10);
    return null;
  }

  private column(col: PlannedColumn, rec: ParsedRecord): boolean {
    switch (col.source) {
      case S.timestamp:
        return this.time(col, rec.timestamp === rec.timestamp ? rec.timestamp : this.ingestTimeMs);
      case S.ingest_time:
        return this.time(col, this.ingestTimeMs);
      case S.vendor:
        return (
          col.vendorAllowed[rec.format] &&
          this.writeText(col, VENDOR_BYTES[rec.format], 0, VENDOR_BYTES[rec.format].length, true)
        );
      case S.device:
        return this.span(col, rec, rec.device);
      case S.src_ip:
        return this.ip(col, rec, rec.srcIp, rec.srcIpVersion);
      case S.dst_ip:
        return this.ip(col, rec, rec.dstIp, rec.dstIpVersion);
      case S.src_port:
        return this.number(col, rec.srcPort);
      case S.dst_port:
        return this.number(col, rec.dstPort);
      case S.proto:
        return this.proto(col, rec);
      case S.action:
        return this.named(col, rec.action, ACTION_BYTES);
      case S.bytes:
        return this.number(col, rec.bytes);
      case S.rule:
        return this.span(col, rec, rec.rule);
      case S.severity:
        return rec.severity < 0 ? this.absent(col) : this.named(col, rec.severity, SEVERITY_BYTES);
      case S.message:
        return this.span(col, rec, rec.message);
      default:
        return this.otherColumn(col, rec);
    }
  }

  private otherColumn(col: PlannedColumn, rec: ParsedRecord): boolean {
    switch (col.source) {
      case S.raw:
        return this.writeText(col, rec.src, rec.lineStart, rec.lineEnd, rec.srcClean);
      case S.kafka_topic:
        return this.writeText(col, this.topic, 0, this.topic.length, this.topicClean);
      case S.kafka_partition:
        return this.number(col, this.partition);
      case S.kafka_offset:
        return this.number(col, this.offset);
      case S.kafka_line:
        return this.number(col, this.line);
      case S.nat_src_ip:
        return this.ip(col, rec, rec.natSrcIp, rec.natSrcIpVersion);
      case S.nat_dst_ip:
        return this.ip(col, rec, rec.natDstIp, rec.natDstIpVersion);
      case S.nat_src_port:
        return this.number(col, rec.natSrcPort);
      case S.nat_dst_port:
        return this.number(col, rec.natDstPort);
      case S.sender_ip:
        return this.senderIp(col);
      case S_STATIC: {
        const v = col.staticValue as Buffer;
        this.out.verbatim(v, 0, v.length);
        return true;
      }
      case S_FIELD: {
        const i = rec.findField(col.fieldKey as Buffer);
        if (i < 0) return this.absent(col);
        const b = rec.fieldValueBuffer(i);
        return this.writeText(
          col,
          b,
          rec.fieldValueStart(i),
          rec.fieldValueEnd(i),
          b === rec.src && rec.srcClean,
        );
      }
      default:
        return false;
    }
  }

  /** Writes the column's value for "no value": `\N`, or the type default (ingest time for clocks). */
  absent(col: PlannedColumn): boolean {
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
        return this.time(col, this.ingestTimeMs);
      default:
        return true;
    }
  }

  private time(col: PlannedColumn, ms: number): boolean {
    const kind = col.type.kind;
    if (kind === T_DATETIME64) this.out.epochSeconds(ms, col.type.precision);
    else if (kind === T_DATETIME) this.out.seconds(Math.floor(ms / 1000));
    else this.out.uint(ms);
    return true;
  }

  private number(col: PlannedColumn, n: number): boolean {
    if (n < 0) return this.absent(col);
    if (col.type.kind === T_INT && (n > col.intMax || n < col.intMin)) return false;
    this.out.uint(n);
    return true;
  }

  private named(col: PlannedColumn, index: number, names: Buffer[]): boolean {
    if (col.type.kind === T_INT) return this.number(col, index);
    this.out.verbatim(names[index], 0, names[index].length);
    return true;
  }

  private proto(col: PlannedColumn, rec: ParsedRecord): boolean {
    if (rec.protoName === '') return this.absent(col);
    const kind = col.type.kind;
    if (kind === T_INT) return rec.protoNumber < 0 ? this.absent(col) : this.number(col, rec.protoNumber);
    if (kind === T_ENUM && !col.type.enumNames.includes(rec.protoName)) return false;
    this.out.latin1Text(rec.protoName);
    return true;
  }

  private ip(col: PlannedColumn, rec: ParsedRecord, span: Span, version: number): boolean {
    if (version === 0) return this.absent(col);
    // An IPv6 address cannot be stored in an IPv4 column: the row is dead-lettered, not truncated.
    if (version === 6 && col.type.kind === T_IPV4) return false;
    this.out.verbatim(rec.spanBuffer(span), span.start, span.end);
    return true;
  }

  /**
   * The header is metadata about the message, not the line: one that is no address of the column's
   * family (a foreign producer's header) is written as absent instead of dead-lettering the line.
   */
  private senderIp(col: PlannedColumn): boolean {
    const b = this.sender;
    const kind = col.type.kind;
    if (b.length === 0) return this.absent(col);
    if (kind === T_STRING) return this.writeText(col, b, 0, b.length, false);
    const v = ipVersion(b, 0, b.length);
    if (v === 0 || (v === 6 && kind === T_IPV4) || (kind !== T_IPV4 && kind !== T_IPV6))
      return this.absent(col);
    this.out.verbatim(b, 0, b.length);
    return true;
  }

  private span(col: PlannedColumn, rec: ParsedRecord, span: Span): boolean {
    if (span.start < 0) return this.absent(col);
    return this.writeText(col, rec.spanBuffer(span), span.start, span.end, !span.scratch && rec.srcClean);
  }

  /** Writes text bytes into any column type, validating them for typed columns; false = does not fit. */
  writeText(col: PlannedColumn, b: Buffer, s: number, e: number, clean: boolean): boolean {
    const kind = col.type.kind;
    if (kind === T_STRING) {
      if (clean) this.out.verbatim(b, s, e);
      else this.out.escaped(b, s, e);
      return true;
    }
    if (e <= s) return this.absent(col);
    switch (kind) {
      case T_INT:
        if (!intTextFits(col, b, s, e)) return false;
        this.out.verbatim(b, s, e);
        return true;
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
        return isPlausibleTimestamp(ms) && this.time(col, ms);
      }
    }
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
