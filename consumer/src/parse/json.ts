/**
 * One JSON object per line (ECS, vendor JSON exports, app logs). Nested objects are flattened to
 * dotted keys (`source.ip`), which are both `field:<dotted key>` names and the lookup keys for the
 * standard columns (see JSON_ALIASES). Plain lines take a byte scanner (json-scan.ts) when no
 * `field:` column needs every key; everything else JSON.parse, guarded: malformed input yields
 * `bad_json`. Both paths give the same record.
 */
import type { ParseContext } from './context';
import { isDigit } from './bytes';
import { setStandardField, T, targetTable } from './kv-apply';
import { severityOfWord } from './normalize';
import { BAD_JSON, BAD_TIMESTAMP, JSON_NOT_OBJECT } from './reasons';
import { F_JSON, KEY_SCRATCH, ParsedRecord, VAL_SCRATCH } from './record';
import { parseFlexibleTimestamp } from './flex-time';
import { hits, scanJsonLine } from './json-scan';
import { KeywordTable } from './keywords';

const C = { TS: 1, DEVICE: 2, SRC: 3, DST: 4, SPORT: 5, DPORT: 6, PROTO: 7, ACTION: 8 } as const;
const C2 = { BYTES: 9, BYTES_PART: 10, RULE: 11, SEVERITY: 12, MESSAGE: 13 } as const;

/** Key names (exact, case-sensitive, dotted when nested) that feed each standard column. */
export const JSON_ALIASES: Record<string, readonly string[]> = {
  timestamp: [
    'timestamp',
    '@timestamp',
    'time',
    'ts',
    'eventtime',
    'event_time',
    'datetime',
    'event.created',
  ],
  device: [
    'device',
    'host',
    'hostname',
    'host.name',
    'host.hostname',
    'observer.name',
    'observer.hostname',
    'devname',
    'device_name',
    'dvchost',
  ],
  src_ip: [
    'src_ip',
    'srcip',
    'src',
    'source.ip',
    'source_ip',
    'sourceAddress',
    'client_ip',
    'clientip',
    'saddr',
    'src_addr',
  ],
  dst_ip: [
    'dst_ip',
    'dstip',
    'dst',
    'destination.ip',
    'dest_ip',
    'destination_ip',
    'destinationAddress',
    'daddr',
    'dst_addr',
  ],
  src_port: ['src_port', 'srcport', 'sport', 'spt', 'source.port', 'source_port', 'sourcePort'],
  dst_port: [
    'dst_port',
    'dstport',
    'dport',
    'dpt',
    'destination.port',
    'dest_port',
    'destination_port',
    'destinationPort',
  ],
  proto: ['proto', 'protocol', 'network.transport', 'transport', 'ip_protocol', 'network.iana_number'],
  action: ['action', 'event.action', 'act', 'disposition', 'deviceAction'],
  bytes: ['bytes', 'network.bytes', 'total_bytes', 'bytes_total'],
  bytes_part: [
    'bytes_sent',
    'bytes_received',
    'sentbyte',
    'rcvdbyte',
    'bytes_in',
    'bytes_out',
    'source.bytes',
    'destination.bytes',
    'bytesIn',
    'bytesOut',
  ],
  rule: [
    'rule',
    'rule.name',
    'rule_name',
    'ruleName',
    'rule.id',
    'policy',
    'policyid',
    'policy_id',
    'policy_name',
  ],
  severity: [
    'severity',
    'level',
    'log.level',
    'syslog.severity',
    'event.severity',
    'log.syslog.severity.code',
  ],
  message: ['message', 'msg', 'event.original'],
};
const COLUMN_OF: Record<string, number> = {
  timestamp: C.TS,
  device: C.DEVICE,
  src_ip: C.SRC,
  dst_ip: C.DST,
  src_port: C.SPORT,
  dst_port: C.DPORT,
  proto: C.PROTO,
  action: C.ACTION,
  bytes: C2.BYTES,
  bytes_part: C2.BYTES_PART,
  rule: C2.RULE,
  severity: C2.SEVERITY,
  message: C2.MESSAGE,
};
const ALIASES = new Map<string, number>();
for (const [column, keys] of Object.entries(JSON_ALIASES))
  for (const k of keys) ALIASES.set(k, COLUMN_OF[column]);

/** The aliases as a byte-span table for the scanner. */
const ALIAS_TABLE = new KeywordTable([...ALIASES]);

const MAX_DEPTH = 6;
/** Per-line state: first alias wins; byte parts are summed unless a total appears. */
const st = { seen: 0, partBytes: -1 };

/** Parses a JSON object line into `rec`. */
export function parseJson(
  buf: Buffer,
  s: number,
  e: number,
  rec: ParsedRecord,
  ctx: ParseContext,
): string | null {
  rec.format = F_JSON;
  if (!rec.collectFields) {
    const scratchStart = rec.scratchLen;
    if (scanJsonLine(buf, s, e, rec, ALIAS_TABLE, MAX_DEPTH)) return applyHits(rec, ctx);
    rec.scratchLen = scratchStart;
  }
  return parseWithJsonParse(buf, s, e, rec, ctx);
}

/** Applies the scanner's alias values in key order, exactly as walk() applies them. */
function applyHits(rec: ParsedRecord, ctx: ParseContext): string | null {
  st.seen = 0;
  st.partBytes = -1;
  for (let h = 0; h < hits.count; h++) {
    const column = hits.column[h];
    if ((st.seen & (1 << column)) !== 0) continue;
    st.seen |= 1 << column;
    const r = apply(column, rec, hits.start[h], hits.end[h], hits.number[h], ctx);
    if (r !== null) return r;
  }
  if (rec.bytes < 0 && st.partBytes >= 0) rec.bytes = st.partBytes;
  return null;
}

/** The general path: JSON.parse, then a walk over the object (also the reference for the scanner). */
export function parseWithJsonParse(
  buf: Buffer,
  s: number,
  e: number,
  rec: ParsedRecord,
  ctx: ParseContext,
): string | null {
  rec.format = F_JSON;
  let value: unknown;
  // A flood of malformed JSON must stay cheap: the SyntaxError's stack trace is most of its cost.
  const stackLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    value = JSON.parse(buf.toString('utf8', s, e));
  } catch {
    return BAD_JSON;
  } finally {
    Error.stackTraceLimit = stackLimit;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return JSON_NOT_OBJECT;
  st.seen = 0;
  st.partBytes = -1;
  const reason = walk(value as Record<string, unknown>, '', 0, rec, ctx);
  if (reason !== null) return reason;
  if (rec.bytes < 0 && st.partBytes >= 0) rec.bytes = st.partBytes;
  return null;
}

function walk(
  obj: Record<string, unknown>,
  prefix: string,
  depth: number,
  rec: ParsedRecord,
  ctx: ParseContext,
): string | null {
  for (const key in obj) {
    const v = obj[key];
    if (v === null || v === undefined) continue;
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if (typeof v === 'object' && !Array.isArray(v)) {
      if (depth >= MAX_DEPTH) continue;
      const r = walk(v as Record<string, unknown>, path, depth + 1, rec, ctx);
      if (r !== null) return r;
      continue;
    }
    const column = ALIASES.get(path);
    if (column === undefined && !rec.collectFields) continue;
    const vs = rec.scratchLen;
    rec.stringToScratch(typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v));
    const ve = rec.scratchLen;
    if (rec.collectFields) {
      const ks = rec.stringToScratch(path);
      rec.addField(ks, rec.scratchLen, vs, ve, KEY_SCRATCH | VAL_SCRATCH);
    }
    if (column !== undefined && (st.seen & (1 << column)) === 0) {
      st.seen |= 1 << column;
      const r = apply(column, rec, vs, ve, typeof v === 'number' ? v : NaN, ctx);
      if (r !== null) return r;
    }
  }
  return null;
}

/** JSON columns that feed a standard field (values are unescaped into the scratch buffer). */
const STANDARD = targetTable([
  [C.SRC, T.src_ip],
  [C.DST, T.dst_ip],
  [C.SPORT, T.src_port],
  [C.DPORT, T.dst_port],
  [C.PROTO, T.proto],
  [C.ACTION, T.action],
]);

/** `num`: the value when it was a JSON number, else NaN (its text is in scratch [vs, ve) either way). */
function apply(
  column: number,
  rec: ParsedRecord,
  vs: number,
  ve: number,
  num: number,
  ctx: ParseContext,
): string | null {
  const b = rec.scratch;
  if (column === C.TS) {
    const ms = num === num ? epochOfNumber(num) : parseFlexibleTimestamp(b, vs, ve, ctx);
    if (ms !== ms) return BAD_TIMESTAMP;
    rec.timestamp = ms;
    return null;
  }
  const target = column < STANDARD.length ? STANDARD[column] : 0;
  return target !== 0 ? setStandardField(target, rec, b, vs, ve, true) : applyText(column, rec, vs, ve, num);
}

function applyText(column: number, rec: ParsedRecord, vs: number, ve: number, num: number): string | null {
  switch (column) {
    case C.DEVICE:
      if (ve > vs) rec.device.setScratch(vs, ve);
      break;
    case C2.RULE:
      if (ve > vs) rec.rule.setScratch(vs, ve);
      break;
    case C2.MESSAGE:
      if (ve > vs) rec.message.setScratch(vs, ve);
      break;
    case C2.BYTES: {
      const n = countOf(rec.scratch, vs, ve, num);
      if (n >= 0) rec.bytes = n;
      break;
    }
    case C2.BYTES_PART: {
      // Each alias is a different key, so several parts may arrive; all of them are summed.
      st.seen &= ~(1 << C2.BYTES_PART);
      const n = countOf(rec.scratch, vs, ve, num);
      if (n >= 0) st.partBytes = (st.partBytes < 0 ? 0 : st.partBytes) + n;
      break;
    }
    case C2.SEVERITY:
      rec.severity = severityOf(rec.scratch, vs, ve);
      break;
  }
  return null;
}

/**
 * A byte count: a JSON number that is a non-negative safe integer, or text of 1..15 digits; -1
 * otherwise. (Booleans, written as `true`/`false`, are no count.)
 */
function countOf(b: Buffer, s: number, e: number, num: number): number {
  if (num === num) return Number.isSafeInteger(num) && num >= 0 ? num : -1;
  if (e - s < 1 || e - s > 15) return -1;
  let n = 0;
  for (let i = s; i < e; i++) {
    if (!isDigit(b[i])) return -1;
    n = n * 10 + (b[i] - 48);
  }
  return n;
}

function severityOf(b: Buffer, s: number, e: number): number {
  if (e - s === 1 && isDigit(b[s])) return b[s] - 48 <= 7 ? b[s] - 48 : -1;
  return severityOfWord(b, s, e);
}

/** Epoch number in s, ms, µs or ns, told apart by magnitude. */
function epochOfNumber(v: number): number {
  if (!Number.isFinite(v) || v <= 0) return NaN;
  if (v < 1e11) return Math.round(v * 1000);
  if (v < 1e14) return Math.floor(v);
  if (v < 1e17) return Math.floor(v / 1e3);
  return Math.floor(v / 1e6);
}
