/**
 * Palo Alto Networks PAN-OS syslog CSV (TRAFFIC and THREAT by column position, as in the PAN-OS
 * "Syslog Field Descriptions"); other log types keep only the common leading columns. Fields may be
 * double-quoted with `""` escapes. Times (`2024/01/15 10:23:45`) are firewall-local and read in the
 * configured zone. Columns become `field:<pan field name>` (e.g. field:natsrc, field:app).
 */
import type { ParseContext } from './context';
import { fixedDigits, spanEquals, ascii } from './bytes';
import { setStandardField, T, targetTable } from './kv-apply';
import { BAD_CSV, BAD_TIMESTAMP } from './reasons';
import { F_PALOALTO, KEY_STATIC, ParsedRecord, Span, UNESCAPE_DOUBLED_QUOTE, VAL_SCRATCH } from './record';
import { civilToMs } from './time';
import { PAN_COMMON, PAN_THREAT, PAN_TRAFFIC, PanLayout, R } from './paloalto-fields';

const TRAFFIC = ascii('TRAFFIC');
const THREAT = ascii('THREAT');
/** Fewest columns a TRAFFIC/THREAT line must have: up to and including `action`. */
const MIN_FIELDS = 31;

/** Per-line state: where the clock is. */
const st = { timeS: -1, timeE: -1, timeEscaped: false };

/** Result flag of closingCsvQuote: the field contains `""` escapes. */
const csvQuote = { doubled: false };

/** Position of the quote that closes a quoted CSV field starting at `p` (after `""` pairs), or -1. */
function closingCsvQuote(buf: Buffer, p: number, e: number): number {
  csvQuote.doubled = false;
  for (;;) {
    while (p < e && buf[p] !== 34) p++;
    if (p >= e) return -1;
    if (p + 1 < e && buf[p + 1] === 34) {
      csvQuote.doubled = true;
      p += 2;
      continue;
    }
    return p;
  }
}

/** Parses a PAN-OS CSV payload into `rec`. */
export function parsePaloAlto(
  buf: Buffer,
  s: number,
  e: number,
  rec: ParsedRecord,
  ctx: ParseContext,
): string | null {
  rec.format = F_PALOALTO;
  st.timeS = -1;
  st.timeEscaped = false;
  const collect = rec.collectFields;
  let layout = PAN_COMMON;
  let roles = layout.roles;
  let p = s;
  let i = 0;
  for (;;) {
    let vs = p;
    let ve: number;
    let vBuf = buf;
    let inScratch = false;
    if (p < e && buf[p] === 34) {
      vs = p + 1;
      ve = closingCsvQuote(buf, vs, e);
      p = ve + 1;
      if (ve < 0 || (p < e && buf[p] !== 44)) return BAD_CSV;
      if (csvQuote.doubled) {
        vs = rec.unescapeToScratch(buf, vs, ve, UNESCAPE_DOUBLED_QUOTE);
        ve = rec.scratchLen;
        vBuf = rec.scratch;
        inScratch = true;
      }
    } else {
      while (p < e && buf[p] !== 44) p++;
      ve = p;
    }
    if (i === 3) {
      layout = layoutOf(vBuf, vs, ve);
      roles = layout.roles;
    }
    // Most columns have no role: only the role table is read for them (and the field table
    // when vendor fields are collected); the scan goes on to check the CSV and count columns.
    if (collect) addField(layout, i, rec, vs, ve, inScratch);
    const role = i < roles.length ? roles[i] : R.NONE;
    if (role !== R.NONE) {
      const reason = applyRole(role, rec, vBuf, vs, ve, inScratch);
      if (reason !== null) return reason;
    }
    i++;
    if (p >= e) break;
    p++; // the comma
  }
  if (layout !== PAN_COMMON && i < MIN_FIELDS) return BAD_CSV;
  return applyClock(buf, rec, ctx);
}

/** The layout named by the type column (position 3). */
function layoutOf(b: Buffer, vs: number, ve: number): PanLayout {
  return spanEquals(b, vs, ve, TRAFFIC)
    ? PAN_TRAFFIC
    : spanEquals(b, vs, ve, THREAT)
      ? PAN_THREAT
      : PAN_COMMON;
}

/** Records column `i` in the vendor field table when it has a name and a value. */
function addField(
  layout: PanLayout,
  i: number,
  rec: ParsedRecord,
  vs: number,
  ve: number,
  inScratch: boolean,
): void {
  if (i >= layout.keys.length || ve <= vs) return;
  const key = layout.keys[i];
  if (key >= 0) rec.addField(key, 0, vs, ve, KEY_STATIC | (inScratch ? VAL_SCRATCH : 0));
}

/** Roles that feed a standard field. */
const STANDARD = targetTable([
  [R.SRC, T.src_ip],
  [R.DST, T.dst_ip],
  [R.SPORT, T.src_port],
  [R.DPORT, T.dst_port],
  [R.NAT_SRC, T.nat_src_ip],
  [R.NAT_DST, T.nat_dst_ip],
  [R.NAT_SPORT, T.nat_src_port],
  [R.NAT_DPORT, T.nat_dst_port],
  [R.PROTO, T.proto],
  [R.ACTION, T.action],
  [R.BYTES, T.bytes],
  [R.SEVERITY, T.severity],
]);

/** Stores a column that feeds a standard column according to its role. */
function applyRole(
  role: number,
  rec: ParsedRecord,
  b: Buffer,
  vs: number,
  ve: number,
  inScratch: boolean,
): string | null {
  const target = role < STANDARD.length ? STANDARD[role] : 0;
  if (target !== 0) return setStandardField(target, rec, b, vs, ve, inScratch);
  applySpanRole(role, rec, vs, ve, inScratch);
  return null;
}

function applySpanRole(role: number, rec: ParsedRecord, vs: number, ve: number, inScratch: boolean): void {
  switch (role) {
    case R.TIME:
      st.timeS = vs;
      st.timeE = ve;
      st.timeEscaped = inScratch;
      break;
    case R.RULE:
      setSpan(rec.rule, vs, ve, inScratch);
      break;
    case R.MESSAGE:
      setSpan(rec.message, vs, ve, inScratch);
      break;
    case R.DEVICE:
      setSpan(rec.device, vs, ve, inScratch);
      break;
    case R.SERIAL:
      if (rec.device.start < 0) setSpan(rec.device, vs, ve, inScratch);
      break;
  }
}

function setSpan(span: Span, s: number, e: number, inScratch: boolean): void {
  if (e <= s) return;
  if (inScratch) span.setScratch(s, e);
  else span.set(s, e);
}

/** Generated time `YYYY/MM/DD hh:mm:ss`, firewall-local. */
function applyClock(buf: Buffer, rec: ParsedRecord, ctx: ParseContext): string | null {
  const ts = st.timeS;
  if (ts < 0 || st.timeE === ts) return null;
  if (
    st.timeEscaped ||
    st.timeE - ts !== 19 ||
    buf[ts + 4] !== 47 ||
    buf[ts + 7] !== 47 ||
    buf[ts + 10] !== 32
  ) {
    return BAD_TIMESTAMP;
  }
  const end = st.timeE;
  const local = civilToMs(
    fixedDigits(buf, ts, 4, end),
    fixedDigits(buf, ts + 5, 2, end),
    fixedDigits(buf, ts + 8, 2, end),
    fixedDigits(buf, ts + 11, 2, end),
    fixedDigits(buf, ts + 14, 2, end),
    fixedDigits(buf, ts + 17, 2, end),
    0,
  );
  if (local !== local) return BAD_TIMESTAMP;
  rec.timestamp = ctx.tz.localToUtc(local);
  return null;
}
