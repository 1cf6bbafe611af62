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

export { JSON_ALIASES } from './json-aliases';
import { ALIAS_TABLE, ALIASES, C, C2 } from './json-aliases';

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
