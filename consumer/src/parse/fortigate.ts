/**
 * FortiGate (FortiOS) key=value logs: `date=2024-01-15 time=10:23:45 devname="FG100F" … srcip=…`.
 * Values are bare tokens or double-quoted with backslash escapes. The clock is `eventtime` (epoch in
 * s/ms/µs/ns, UTC) when present, else `date` + `time` read in `tz` (e.g. "+0300") or the configured
 * zone. One pass over the bytes; each key is first compared with the key at the same position on
 * the previous line (KeyLayout), else looked up in a KeywordTable. Source NAT is
 * `transip`/`transport`, destination NAT (VIP) `tranip`/`tranport`.
 */
import type { ParseContext } from './context';
import { fixedDigits } from './bytes';
import { KeyLayout } from './key-layout';
import { KeywordTable } from './keywords';
import { setStandardField, T, targetTable } from './kv-apply';
import { BAD_KV, BAD_TIMESTAMP } from './reasons';
import { F_FORTIGATE, ParsedRecord, UNESCAPE_BACKSLASH, VAL_SCRATCH } from './record';
import { civilToMs, parseEpochDigits, parseOffset } from './time';
import { fixedOffsetZone } from './timezone';

const K = {
  date: 1,
  time: 2,
  tz: 3,
  eventtime: 4,
  devname: 5,
  srcip: 6,
  dstip: 7,
  srcport: 8,
  dstport: 9,
  proto: 10,
  action: 11,
  sentbyte: 12,
  rcvdbyte: 13,
  policyid: 14,
  level: 15,
  msg: 16,
  logdesc: 17,
  devid: 18,
  transip: 19,
  transport: 20,
  tranip: 21,
  tranport: 22,
} as const;
const KEYS = new KeywordTable(Object.entries(K));
/** The previous line's keys: the next line's keys are compared with them before any lookup. */
const LAYOUT = new KeyLayout();

/**
 * Clock parts seen on the line, kept as spans until the whole line is read: start at 2 * key, end
 * at 2 * key + 1 for K.date..K.eventtime (a typed array the pair loop writes inline, not a call
 * per clock key); CLOCK[0] = 1 when one of them was escaped.
 */
const CLOCK = new Int32Array(2 * (K.eventtime + 1));
const ESCAPED = 0;

/**
 * The quote closing a value whose bytes start at `p`: its position when the value holds no
 * backslash escape, `-position - 2` when it does, -1 when there is none. Escaped bytes are skipped;
 * lines known to hold no backslash (the TSV path's hint) need one compare per byte.
 */
function closingQuote(buf: Buffer, p: number, e: number, clean: boolean): number {
  if (clean) {
    while (p < e && buf[p] !== 34) p++;
    return p < e ? p : -1;
  }
  let escaped = false;
  for (; p < e; p++) {
    const c = buf[p];
    if (c === 34) break;
    if (c === 92) {
      escaped = true;
      p++;
    }
  }
  if (p >= e) return -1;
  return escaped ? -p - 2 : p;
}

/** Parses a FortiGate key=value payload into `rec`. */
export function parseFortigate(
  buf: Buffer,
  s: number,
  e: number,
  rec: ParsedRecord,
  ctx: ParseContext,
): string | null {
  rec.format = F_FORTIGATE;
  CLOCK[2 * K.date] = CLOCK[2 * K.time] = CLOCK[2 * K.tz] = CLOCK[2 * K.eventtime] = -1;
  CLOCK[ESCAPED] = 0;
  const collect = rec.collectFields;
  const clean = rec.srcClean;
  let p = s;
  let pairs = 0;
  LAYOUT.use(buf);
  while (p < e) {
    while (p < e && buf[p] === 32) p++;
    if (p >= e) break;
    const ks = p;
    let key = LAYOUT.match(pairs, buf, ks, e, 61);
    if (key >= 0) {
      p = key;
      key = LAYOUT.id;
    } else {
      while (p < e && buf[p] !== 61 && buf[p] !== 32) p++;
      if (p >= e || buf[p] !== 61 || p === ks) return BAD_KV;
      key = KEYS.lookup(buf, ks, p);
      LAYOUT.remember(pairs, buf, ks, p, key);
    }
    const ke = p++;
    let vs = p;
    let ve: number;
    let vBuf = buf;
    let inScratch = false;
    if (p < e && buf[p] === 34) {
      vs = ++p;
      const q = closingQuote(buf, p, e, clean);
      if (q === -1) return BAD_KV;
      const escaped = q < -1;
      ve = escaped ? -q - 2 : q;
      p = ve + 1;
      if (escaped) {
        vs = rec.unescapeToScratch(buf, vs, ve, UNESCAPE_BACKSLASH);
        ve = rec.scratchLen;
        vBuf = rec.scratch;
        inScratch = true;
      }
    } else {
      while (p < e && buf[p] !== 32) p++;
      ve = p;
    }
    pairs++;
    if (collect) rec.addField(ks, ke, vs, ve, inScratch ? VAL_SCRATCH : 0);
    if (key < 0) continue;
    const reason = applyKey(key, rec, vBuf, vs, ve, inScratch);
    if (reason !== null) return reason;
  }
  return pairs === 0 ? BAD_KV : applyClock(buf, rec, ctx);
}

/** Fortigate keys that feed a standard field. */
const STANDARD = targetTable([
  [K.srcip, T.src_ip],
  [K.dstip, T.dst_ip],
  [K.srcport, T.src_port],
  [K.dstport, T.dst_port],
  [K.transip, T.nat_src_ip],
  [K.transport, T.nat_src_port],
  [K.tranip, T.nat_dst_ip],
  [K.tranport, T.nat_dst_port],
  [K.proto, T.proto],
  [K.action, T.action],
  [K.sentbyte, T.bytes],
  [K.rcvdbyte, T.bytes],
  [K.level, T.severity],
]);

function applyKey(
  key: number,
  rec: ParsedRecord,
  b: Buffer,
  vs: number,
  ve: number,
  inScratch: boolean,
): string | null {
  const target = key > 0 && key < STANDARD.length ? STANDARD[key] : 0;
  if (target !== 0) return setStandardField(target, rec, b, vs, ve, inScratch);
  if (key >= K.date && key <= K.eventtime) {
    CLOCK[2 * key] = vs;
    CLOCK[2 * key + 1] = ve;
    // Clock values are read from the source line later; an escaped one cannot be a valid clock.
    if (inScratch) CLOCK[ESCAPED] = 1;
    return null;
  }
  applySpanKey(key, rec, vs, ve, inScratch);
  return null;
}

function applySpanKey(key: number, rec: ParsedRecord, vs: number, ve: number, inScratch: boolean): void {
  switch (key) {
    case K.devname:
      setSpan(rec.device, vs, ve, inScratch);
      break;
    case K.devid:
      if (rec.device.start < 0) setSpan(rec.device, vs, ve, inScratch);
      break;
    case K.policyid:
      setSpan(rec.rule, vs, ve, inScratch);
      break;
    case K.msg:
      setSpan(rec.message, vs, ve, inScratch);
      break;
    case K.logdesc:
      if (rec.message.start < 0) setSpan(rec.message, vs, ve, inScratch);
      break;
  }
}

function setSpan(span: ParsedRecord['device'], s: number, e: number, inScratch: boolean): void {
  if (inScratch) span.setScratch(s, e);
  else span.set(s, e);
}

/** eventtime wins (UTC epoch); else date+time in the line's tz or the configured zone. */
function applyClock(buf: Buffer, rec: ParsedRecord, ctx: ParseContext): string | null {
  if (CLOCK[ESCAPED] !== 0) return BAD_TIMESTAMP;
  const evS = CLOCK[2 * K.eventtime];
  if (evS >= 0) {
    const ms = parseEpochDigits(buf, evS, CLOCK[2 * K.eventtime + 1]);
    if (ms !== ms) return BAD_TIMESTAMP;
    rec.timestamp = ms;
    return null;
  }
  const ds = CLOCK[2 * K.date];
  const dateE = CLOCK[2 * K.date + 1];
  const ts = CLOCK[2 * K.time];
  const timeE = CLOCK[2 * K.time + 1];
  if (ds < 0 && ts < 0) return null;
  if (ds < 0 || ts < 0 || dateE - ds !== 10 || timeE - ts !== 8) return BAD_TIMESTAMP;
  const local = civilToMs(
    fixedDigits(buf, ds, 4, dateE),
    fixedDigits(buf, ds + 5, 2, dateE),
    fixedDigits(buf, ds + 8, 2, dateE),
    fixedDigits(buf, ts, 2, timeE),
    fixedDigits(buf, ts + 3, 2, timeE),
    fixedDigits(buf, ts + 6, 2, timeE),
    0,
  );
  if (local !== local || buf[ds + 4] !== 45 || buf[ts + 2] !== 58) return BAD_TIMESTAMP;
  let zone = ctx.tz;
  const tzS = CLOCK[2 * K.tz];
  if (tzS >= 0) {
    const minutes = parseOffset(buf, tzS, CLOCK[2 * K.tz + 1]);
    if (minutes === minutes) zone = fixedOffsetZone(minutes);
  }
  rec.timestamp = zone.localToUtc(local);
  return null;
}
