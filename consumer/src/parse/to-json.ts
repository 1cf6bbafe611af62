/**
 * Converts a parsed record into a plain object keyed by column-source names (`src_ip`, …,
 * `field:<key>`). Allocates strings: for the CLI, tests and debugging, never the hot path.
 */
import { ACTION_NAMES, VENDOR_NAMES, ParsedRecord, Span } from './record';

/** A parsed row as JSON-ready values (null for absent standard columns). */
export type RowObject = Record<string, string | number | null>;

function text(rec: ParsedRecord, span: Span): string | null {
  return span.start < 0 ? null : rec.spanBuffer(span).toString('utf8', span.start, span.end);
}

/** The record's standard columns plus every collected field as `field:<key>` (first wins). */
export function recordToObject(rec: ParsedRecord): RowObject {
  const row: RowObject = {
    timestamp: rec.timestamp === rec.timestamp ? rec.timestamp : null,
    vendor: rec.format >= 0 ? VENDOR_NAMES[rec.format] : null,
    device: text(rec, rec.device),
    src_ip: text(rec, rec.srcIp),
    dst_ip: text(rec, rec.dstIp),
    src_port: rec.srcPort >= 0 ? rec.srcPort : null,
    dst_port: rec.dstPort >= 0 ? rec.dstPort : null,
    nat_src_ip: text(rec, rec.natSrcIp),
    nat_dst_ip: text(rec, rec.natDstIp),
    nat_src_port: rec.natSrcPort >= 0 ? rec.natSrcPort : null,
    nat_dst_port: rec.natDstPort >= 0 ? rec.natDstPort : null,
    proto: rec.protoName === '' ? null : rec.protoName,
    action: ACTION_NAMES[rec.action],
    bytes: rec.bytes >= 0 ? rec.bytes : null,
    rule: text(rec, rec.rule),
    severity: rec.severity >= 0 ? rec.severity : null,
    message: text(rec, rec.message),
    raw: rec.src.toString('utf8', rec.lineStart, rec.lineEnd),
  };
  for (let i = 0; i < rec.fieldCount; i++) {
    const key = `field:${rec.fieldKeyString(i)}`;
    if (key in row) continue;
    row[key] = rec.fieldValueBuffer(i).toString('utf8', rec.fieldValueStart(i), rec.fieldValueEnd(i));
  }
  return row;
}
