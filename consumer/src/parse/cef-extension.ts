/**
 * Maps CEF extension keys (short and long dictionary names) onto the standard columns, and picks
 * the event clock: `rt` (receipt time), else `end`, else `start` (notations: see flex-time).
 * A `csN` custom string whose `csNLabel` names a rule or policy becomes the `rule` column.
 */
import type { ParseContext } from './context';
import { ascii, spanEqualsIgnoreCase } from './bytes';
import { KeywordTable } from './keywords';
import { setStandardField, T, targetTable } from './kv-apply';
import { setIp } from './normalize';
import { BAD_TIMESTAMP, INVALID_IP } from './reasons';
import type { ParsedRecord } from './record';
import { parseFlexibleTimestamp } from './flex-time';

const X = {
  SRC: 1,
  DST: 2,
  SRC6: 3,
  DST6: 4,
  SPT: 5,
  DPT: 6,
  PROTO: 7,
  ACT: 8,
  BYTES: 9,
  RT: 10,
  END: 11,
  START: 12,
  HOST: 13,
  MSG: 14,
  CS: 20,
  CS_LABEL: 30,
} as const;
const KEYS = new KeywordTable([
  ['src', X.SRC],
  ['sourceAddress', X.SRC],
  ['dst', X.DST],
  ['destinationAddress', X.DST],
  ['c6a2', X.SRC6],
  ['c6a3', X.DST6],
  ['spt', X.SPT],
  ['sourcePort', X.SPT],
  ['dpt', X.DPT],
  ['destinationPort', X.DPT],
  ['proto', X.PROTO],
  ['transportProtocol', X.PROTO],
  ['act', X.ACT],
  ['deviceAction', X.ACT],
  ['in', X.BYTES],
  ['bytesIn', X.BYTES],
  ['out', X.BYTES],
  ['bytesOut', X.BYTES],
  ['rt', X.RT],
  ['receiptTime', X.RT],
  ['end', X.END],
  ['endTime', X.END],
  ['start', X.START],
  ['startTime', X.START],
  ['dvchost', X.HOST],
  ['deviceHostName', X.HOST],
  ['msg', X.MSG],
  ['message', X.MSG],
  ...[1, 2, 3, 4, 5, 6].map((n) => [`cs${n}`, X.CS + n] as [string, number]),
  ...[1, 2, 3, 4, 5, 6].map((n) => [`cs${n}Label`, X.CS_LABEL + n] as [string, number]),
]);
const RULE_LABELS = [
  'rule',
  'rule name',
  'rulename',
  'rule id',
  'ruleid',
  'policy',
  'policy name',
  'policyid',
  'policy id',
].map(ascii);

/** Per-line CEF state: best clock candidate, IPv6 fallbacks and custom-string rule candidates. */
const st = {
  clockRank: 0,
  clockBuf: null as Buffer | null,
  clockS: 0,
  clockE: 0,
  ruleLabel: 0,
  csBuf: [] as (Buffer | undefined)[],
  csScratch: [false, false, false, false, false, false, false],
  csS: new Int32Array(7),
  csE: new Int32Array(7),
};

/** Clears the per-line state. */
export function resetCefState(): void {
  st.clockRank = 0;
  st.clockBuf = null;
  st.ruleLabel = 0;
  st.csBuf.length = 0;
}

/** CEF keys that feed a standard field. */
const STANDARD = targetTable([
  [X.SRC, T.src_ip],
  [X.DST, T.dst_ip],
  [X.SPT, T.src_port],
  [X.DPT, T.dst_port],
  [X.PROTO, T.proto],
  [X.ACT, T.action],
  [X.BYTES, T.bytes],
]);

/** Applies one extension pair (value in `vb`, which is the scratch buffer when `escaped`). */
export function applyCefExtension(
  kb: Buffer,
  ks: number,
  ke: number,
  vb: Buffer,
  vs: number,
  ve: number,
  escaped: boolean,
  rec: ParsedRecord,
): string | null {
  const key = KEYS.lookup(kb, ks, ke);
  if (key < 0) return null;
  // IPv6 custom addresses only fill in when src/dst are absent.
  if (key === X.SRC6) return rec.srcIpVersion !== 0 || setIp(rec, 0, vb, vs, ve, escaped) ? null : INVALID_IP;
  if (key === X.DST6) return rec.dstIpVersion !== 0 || setIp(rec, 1, vb, vs, ve, escaped) ? null : INVALID_IP;
  const target = key < STANDARD.length ? STANDARD[key] : 0;
  if (target !== 0) return setStandardField(target, rec, vb, vs, ve, escaped);
  applyTextKey(key, vb, vs, ve, escaped, rec);
  return null;
}

/** Keys whose values are kept as text: host, message, clocks and custom strings. */
function applyTextKey(
  key: number,
  vb: Buffer,
  vs: number,
  ve: number,
  escaped: boolean,
  rec: ParsedRecord,
): void {
  switch (key) {
    case X.HOST:
      setSpan(rec.device, vs, ve, escaped);
      return;
    case X.MSG:
      setSpan(rec.message, vs, ve, escaped);
      return;
    case X.RT:
    case X.END:
    case X.START:
      candidateClock(key === X.RT ? 3 : key === X.END ? 2 : 1, vb, vs, ve);
      return;
  }
  if (key > X.CS_LABEL) {
    if (RULE_LABELS.some((l) => spanEqualsIgnoreCase(vb, vs, ve, l))) st.ruleLabel = key - X.CS_LABEL;
  } else if (key > X.CS) {
    const n = key - X.CS;
    st.csBuf[n] = vb;
    st.csScratch[n] = escaped;
    st.csS[n] = vs;
    st.csE[n] = ve;
  }
}

function setSpan(span: ParsedRecord['device'], s: number, e: number, escaped: boolean): void {
  if (e <= s) return;
  if (escaped) span.setScratch(s, e);
  else span.set(s, e);
}

function candidateClock(rank: number, vb: Buffer, vs: number, ve: number): void {
  if (rank <= st.clockRank || ve <= vs) return;
  st.clockRank = rank;
  st.clockBuf = vb;
  st.clockS = vs;
  st.clockE = ve;
}

/** Resolves the rule and clock once the whole extension is read. */
export function cefClock(_buf: Buffer, rec: ParsedRecord, ctx: ParseContext): string | null {
  const n = st.ruleLabel;
  if (n > 0 && st.csBuf[n])
    rec.rule[st.csBuf[n] === rec.scratch ? 'setScratch' : 'set'](st.csS[n], st.csE[n]);
  if (st.clockBuf === null) return null;
  const ms = parseFlexibleTimestamp(st.clockBuf, st.clockS, st.clockE, ctx);
  if (ms !== ms) return BAD_TIMESTAMP;
  rec.timestamp = ms;
  return null;
}
