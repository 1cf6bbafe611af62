/**
 * The one place that knows where each column's value comes from. A column plan is compiled once,
 * per body format, into an array of small per-column functions: each reads its source (a record
 * span, number or name index, or the message's enrichment) and hands the value to a writer the
 * body format built for exactly that column's type. Rows then run that array — no switch over the
 * source or the type per row — and the TSV and RowBinary writers share every source decision
 * (absent values, IPv6 into IPv4, the sender header, `field:` lookups) instead of repeating them.
 */
import { ipVersion } from '../parse/ip';
import { ACTION_NAMES, ParsedRecord, SEVERITY_NAMES, Span, VENDOR_NAMES } from '../parse/record';
import { T_IPV4, T_IPV6, T_STRING } from '../../../common/src/columns/column-type';
import { ColumnPlan, PlannedColumn, S, S_FIELD, S_STATIC } from './column-plan';

const bytesOf = (names: readonly string[]): Buffer[] => names.map((n) => Buffer.from(n, 'utf8'));
/** Vendor, action and severity names as bytes, indexed like the record's numbers. */
export const VENDOR_BYTES = bytesOf(VENDOR_NAMES);
export const ACTION_BYTES = bytesOf(ACTION_NAMES);
export const SEVERITY_BYTES = bytesOf(SEVERITY_NAMES);
const EMPTY = Buffer.alloc(0);

/** The message-level values of the rows being written (set per batch / per message by the encoder). */
export class RowContext {
  ingestTimeMs = 0;
  topic: Buffer = EMPTY;
  /** The topic name holds no TSV specials (true for every legal Kafka topic name). */
  topicClean = false;
  partition = 0;
  offset = 0;
  /** Index of the current line within its (possibly packed) Kafka message. */
  line = 0;
  /** The message's sender address text (SENDER_HEADER), empty when it has none. */
  sender: Buffer = EMPTY;
}

/** Writes one column's value of one record; false = the value does not fit the column type. */
export type ColumnWrite = (rec: ParsedRecord) => boolean;

/**
 * What a body format provides: for one column, writers specialised for its type. Each returns
 * false when the value cannot be represented (the row is then rolled back and dead-lettered).
 */
export interface ColumnEmitter {
  /** Epoch milliseconds. */
  time(col: PlannedColumn): (ms: number) => boolean;
  /** A non-negative integer. */
  number(col: PlannedColumn): (n: number) => boolean;
  /** An index into `names` (vendor/action/severity); `numeric`: integer columns take the index itself. */
  named(col: PlannedColumn, names: readonly Buffer[], numeric: boolean): (index: number) => boolean;
  /** Text bytes [s, e) of `b`, validated for typed columns; `clean`: no TSV specials in them. */
  text(col: PlannedColumn): (b: Buffer, s: number, e: number, clean: boolean) => boolean;
  /** A validated address span of IP version 4 or 6; `ipv4`: its IPv4 value when known, else -1. */
  ip(col: PlannedColumn): (b: Buffer, s: number, e: number, version: number, ipv4: number) => boolean;
  /** The record's protocol (name, IANA number or -1). */
  proto(col: PlannedColumn): (name: string, number: number) => boolean;
  /** No value: NULL, or the type default (ingest time for clocks). */
  absent(col: PlannedColumn): () => boolean;
  /** The column's pre-encoded `static:` value. */
  constant(col: PlannedColumn): () => boolean;
  /** Output position, and going back to it (a header that turned out not to fit its column). */
  mark(): number;
  rewind(at: number): void;
}

/** Compiles the plan into one writer per column for `emitter`, reading enrichment from `row`. */
export function compileColumnWriters(
  plan: ColumnPlan,
  emitter: ColumnEmitter,
  row: RowContext,
): ColumnWrite[] {
  return plan.columns.map((col) => columnWriter(col, emitter, row));
}

function columnWriter(col: PlannedColumn, em: ColumnEmitter, row: RowContext): ColumnWrite {
  switch (col.source) {
    case S.timestamp: {
      const time = em.time(col);
      return (rec) => time(rec.timestamp === rec.timestamp ? rec.timestamp : row.ingestTimeMs);
    }
    case S.ingest_time: {
      const time = em.time(col);
      return () => time(row.ingestTimeMs);
    }
    case S.vendor: {
      const named = em.named(col, VENDOR_BYTES, false);
      const allowed = col.vendorAllowed;
      return (rec) => allowed[rec.format] && named(rec.format);
    }
    case S.action: {
      const named = em.named(col, ACTION_BYTES, true);
      return (rec) => named(rec.action);
    }
    case S.severity: {
      const named = em.named(col, SEVERITY_BYTES, true);
      const absent = em.absent(col);
      return (rec) => (rec.severity < 0 ? absent() : named(rec.severity));
    }
    case S.proto: {
      const proto = em.proto(col);
      const absent = em.absent(col);
      return (rec) => (rec.protoName === '' ? absent() : proto(rec.protoName, rec.protoNumber));
    }
    case S.device:
      return spanWriter(col, em, (rec) => rec.device);
    case S.rule:
      return spanWriter(col, em, (rec) => rec.rule);
    case S.message:
      return spanWriter(col, em, (rec) => rec.message);
    default:
      return addressOrNumberWriter(col, em, row);
  }
}

function addressOrNumberWriter(col: PlannedColumn, em: ColumnEmitter, row: RowContext): ColumnWrite {
  switch (col.source) {
    case S.src_ip:
      return ipWriter(
        col,
        em,
        (rec) => rec.srcIp,
        (rec) => rec.srcIpVersion,
      );
    case S.dst_ip:
      return ipWriter(
        col,
        em,
        (rec) => rec.dstIp,
        (rec) => rec.dstIpVersion,
      );
    case S.nat_src_ip:
      return ipWriter(
        col,
        em,
        (rec) => rec.natSrcIp,
        (rec) => rec.natSrcIpVersion,
      );
    case S.nat_dst_ip:
      return ipWriter(
        col,
        em,
        (rec) => rec.natDstIp,
        (rec) => rec.natDstIpVersion,
      );
    case S.src_port:
      return numberWriter(col, em, (rec) => rec.srcPort);
    case S.dst_port:
      return numberWriter(col, em, (rec) => rec.dstPort);
    case S.nat_src_port:
      return numberWriter(col, em, (rec) => rec.natSrcPort);
    case S.nat_dst_port:
      return numberWriter(col, em, (rec) => rec.natDstPort);
    case S.bytes:
      return numberWriter(col, em, (rec) => rec.bytes);
    default:
      return enrichmentWriter(col, em, row);
  }
}

function enrichmentWriter(col: PlannedColumn, em: ColumnEmitter, row: RowContext): ColumnWrite {
  const text = em.text(col);
  switch (col.source) {
    case S.raw:
      return (rec) => text(rec.src, rec.lineStart, rec.lineEnd, rec.srcClean);
    case S.kafka_topic:
      return () => text(row.topic, 0, row.topic.length, row.topicClean);
    case S.kafka_partition:
      return numberWriter(col, em, () => row.partition);
    case S.kafka_offset:
      return numberWriter(col, em, () => row.offset);
    case S.kafka_line:
      return numberWriter(col, em, () => row.line);
    case S.sender_ip:
      return senderWriter(col, em, row);
    case S_STATIC:
      return em.constant(col);
    case S_FIELD:
      return fieldWriter(col, em);
    default:
      throw new RangeError(`column ${col.name}: unknown source ${col.sourceText}`);
  }
}

function spanWriter(col: PlannedColumn, em: ColumnEmitter, span: (rec: ParsedRecord) => Span): ColumnWrite {
  const text = em.text(col);
  const absent = em.absent(col);
  return (rec) => {
    const sp = span(rec);
    if (sp.start < 0) return absent();
    return sp.scratch
      ? text(rec.scratch, sp.start, sp.end, false)
      : text(rec.src, sp.start, sp.end, rec.srcClean);
  };
}

function numberWriter(
  col: PlannedColumn,
  em: ColumnEmitter,
  value: (rec: ParsedRecord) => number,
): ColumnWrite {
  const number = em.number(col);
  const absent = em.absent(col);
  return (rec) => {
    const n = value(rec);
    return n < 0 ? absent() : number(n);
  };
}

function ipWriter(
  col: PlannedColumn,
  em: ColumnEmitter,
  span: (rec: ParsedRecord) => Span,
  version: (rec: ParsedRecord) => number,
): ColumnWrite {
  const ip = em.ip(col);
  const absent = em.absent(col);
  // An IPv6 address cannot be stored in an IPv4 column: the row is dead-lettered, not truncated.
  const v4Only = col.type.kind === T_IPV4;
  return (rec) => {
    const v = version(rec);
    if (v === 0) return absent();
    if (v === 6 && v4Only) return false;
    const sp = span(rec);
    return ip(sp.scratch ? rec.scratch : rec.src, sp.start, sp.end, v, sp.ipv4);
  };
}

/**
 * The header is metadata about the message, not the line: one that is no address of the column's
 * family (a foreign producer's header) is written as absent instead of dead-lettering the line.
 */
function senderWriter(col: PlannedColumn, em: ColumnEmitter, row: RowContext): ColumnWrite {
  const kind = col.type.kind;
  const absent = em.absent(col);
  if (kind === T_STRING) {
    const text = em.text(col);
    return () => (row.sender.length === 0 ? absent() : text(row.sender, 0, row.sender.length, false));
  }
  if (kind !== T_IPV4 && kind !== T_IPV6) return absent;
  const ip = em.ip(col);
  return () => {
    const b = row.sender;
    if (b.length === 0) return absent();
    const v = ipVersion(b, 0, b.length);
    if (v === 0 || (v === 6 && kind === T_IPV4)) return absent();
    const at = em.mark();
    if (ip(b, 0, b.length, v, -1)) return true;
    em.rewind(at);
    return absent();
  };
}

function fieldWriter(col: PlannedColumn, em: ColumnEmitter): ColumnWrite {
  const text = em.text(col);
  const absent = em.absent(col);
  const key = col.fieldKey as Buffer;
  return (rec) => {
    const i = rec.findField(key);
    if (i < 0) return absent();
    const b = rec.fieldValueBuffer(i);
    return text(b, rec.fieldValueStart(i), rec.fieldValueEnd(i), b === rec.src && rec.srcClean);
  };
}
