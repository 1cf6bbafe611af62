/**
 * Required column sources: a configured list (e.g. ['src_ip', 'dst_ip']) compiled once into a
 * check that dead-letters a parsed line lacking any of them with `missing_field:<source>`.
 */
import { missingField } from './reasons';
import { ACTION_UNKNOWN, ParsedRecord } from './record';
import type { RequirableSource } from '../../../common/src/parser-contract';

/** Returns a dead-letter reason for the first missing required source, or null. */
export type RequiredCheck = (rec: ParsedRecord) => string | null;

const PRESENT: Record<RequirableSource, (r: ParsedRecord) => boolean> = {
  timestamp: (r) => r.timestamp === r.timestamp,
  device: (r) => r.device.start >= 0,
  src_ip: (r) => r.srcIpVersion !== 0,
  dst_ip: (r) => r.dstIpVersion !== 0,
  src_port: (r) => r.srcPort >= 0,
  nat_src_ip: (r) => r.natSrcIpVersion !== 0,
  nat_dst_ip: (r) => r.natDstIpVersion !== 0,
  nat_src_port: (r) => r.natSrcPort >= 0,
  nat_dst_port: (r) => r.natDstPort >= 0,
  dst_port: (r) => r.dstPort >= 0,
  proto: (r) => r.protoName !== '',
  action: (r) => r.action !== ACTION_UNKNOWN,
  bytes: (r) => r.bytes >= 0,
  rule: (r) => r.rule.start >= 0,
  severity: (r) => r.severity >= 0,
  message: (r) => r.message.start >= 0,
};

/** Column sources that can be required. */
export const REQUIRABLE_SOURCES = Object.keys(PRESENT);

/** Compiles the required list; throws on a source that cannot be required (config error). */
export function requiredCheck(sources: readonly string[]): RequiredCheck {
  const checks = sources.map((source) => {
    const present = (PRESENT as Record<string, (r: ParsedRecord) => boolean>)[source];
    if (!present) throw new RangeError(`cannot require column source "${source}"`);
    return { present, reason: missingField(source) };
  });
  if (checks.length === 0) return () => null;
  return (rec) => {
    for (let i = 0; i < checks.length; i++) if (!checks[i].present(rec)) return checks[i].reason;
    return null;
  };
}
