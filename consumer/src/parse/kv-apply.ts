/**
 * Standard column targets of key/value pairs: a vendor key maps to one of these ids and
 * applyTarget stores the value with the shared validation (addresses, ports, protocol, action …).
 * Used by the kv-shaped vendor parsers and by the declarative `kv` / `csv` / structured-data rules.
 */
import { parseUint } from './bytes';
import {
  actionOf,
  addBytes,
  DST,
  NAT_DST,
  NAT_SRC,
  setIp,
  setPort,
  setProto,
  severityOfWord,
  SRC,
} from './normalize';
import { INVALID_IP, INVALID_PORT } from './reasons';
import { ParsedRecord, Span } from './record';
import type { MappableColumn } from '../../../common/src/parser-contract';

/** Column targets a vendor key can map to (src_ip..nat_dst_port stay contiguous: endpoints). */
export const T = {
  src_ip: 1,
  dst_ip: 2,
  src_port: 3,
  dst_port: 4,
  nat_src_ip: 5,
  nat_dst_ip: 6,
  nat_src_port: 7,
  nat_dst_port: 8,
  proto: 9,
  action: 10,
  bytes: 11,
  rule: 12,
  device: 13,
  message: 14,
  severity: 15,
} as const satisfies Record<Exclude<MappableColumn, 'timestamp'>, number>;

function setSpan(span: Span, s: number, e: number, scratch: boolean): void {
  if (e <= s) return;
  if (scratch) span.setScratch(s, e);
  else span.set(s, e);
}

/**
 * Stores [vs, ve) of `vb` into the column `target`; returns `invalid_ip` / `invalid_port` for
 * values that are present but malformed, else null. Span targets keep the first value seen.
 */
export function applyTarget(
  target: number,
  rec: ParsedRecord,
  vb: Buffer,
  vs: number,
  ve: number,
  scratch: boolean,
): string | null {
  if (target >= T.src_ip && target <= T.nat_dst_port)
    return setStandardField(target, rec, vb, vs, ve, scratch);
  switch (target) {
    case T.proto:
      if (rec.protoName === '') setProto(rec, vb, vs, ve);
      return null;
    case T.action: {
      const a = actionOf(vb, vs, ve);
      if (a !== 0) rec.action = a;
      return null;
    }
    case T.bytes:
      addBytes(rec, vb, vs, ve);
      return null;
    case T.severity: {
      const n = parseUint(vb, vs, ve);
      const sev = n >= 0 ? (n <= 7 ? n : -1) : severityOfWord(vb, vs, ve);
      if (sev >= 0) rec.severity = sev;
      return null;
    }
    default:
      return applySpanTarget(target, rec, vs, ve, scratch);
  }
}

/** Address slot (SRC, DST, NAT_SRC, NAT_DST) of each target id, -1 for the rest. */
const IP_SLOT = slotTable([
  [T.src_ip, SRC],
  [T.dst_ip, DST],
  [T.nat_src_ip, NAT_SRC],
  [T.nat_dst_ip, NAT_DST],
]);
/** Port slot of each target id, -1 for the rest. */
const PORT_SLOT = slotTable([
  [T.src_port, SRC],
  [T.dst_port, DST],
  [T.nat_src_port, NAT_SRC],
  [T.nat_dst_port, NAT_DST],
]);

function slotTable(pairs: ReadonlyArray<readonly [number, number]>): Int8Array {
  const table = new Int8Array(T.severity + 1).fill(-1);
  for (const [target, slot] of pairs) table[target] = slot;
  return table;
}

/**
 * The standard-field store of the native vendor parsers (one definition instead of a switch per
 * parser): addresses and ports validated, protocol and action set by the latest value, bytes added,
 * severity read as a keyword. Span targets (rule, device, message) are the caller's: their
 * precedence differs per vendor. Returns `invalid_ip` / `invalid_port` for malformed values.
 * Kept small (slot tables, no switch over the endpoints) so V8 inlines it into every parser loop.
 */
export function setStandardField(
  target: number,
  rec: ParsedRecord,
  vb: Buffer,
  vs: number,
  ve: number,
  scratch: boolean,
): string | null {
  if (target < 0 || target >= IP_SLOT.length) return null;
  const ip = IP_SLOT[target];
  if (ip >= 0) return setIp(rec, ip, vb, vs, ve, scratch) ? null : INVALID_IP;
  const port = PORT_SLOT[target];
  if (port >= 0) return setPort(rec, port, vb, vs, ve) ? null : INVALID_PORT;
  setValueField(target, rec, vb, vs, ve);
  return null;
}

/** Protocol, action, bytes and severity (the targets that never fail). */
function setValueField(target: number, rec: ParsedRecord, vb: Buffer, vs: number, ve: number): void {
  if (target === T.proto) setProto(rec, vb, vs, ve);
  else if (target === T.action) rec.action = actionOf(vb, vs, ve);
  else if (target === T.bytes) addBytes(rec, vb, vs, ve);
  else if (target === T.severity) rec.severity = severityOfWord(vb, vs, ve);
}

/** A lookup from a parser's own key ids to standard targets (0: not a standard field). */
export function targetTable(pairs: ReadonlyArray<readonly [number, number]>): Uint8Array {
  const table = new Uint8Array(Math.max(...pairs.map(([k]) => k)) + 1);
  for (const [key, target] of pairs) table[key] = target;
  return table;
}

function applySpanTarget(target: number, rec: ParsedRecord, vs: number, ve: number, scratch: boolean): null {
  const span =
    target === T.rule
      ? rec.rule
      : target === T.device
        ? rec.device
        : target === T.message
          ? rec.message
          : null;
  if (span !== null && span.start < 0) setSpan(span, vs, ve, scratch);
  return null;
}
