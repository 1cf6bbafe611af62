/**
 * Syslog envelopes in front of vendor payloads: `<PRI>` alone (FortiGate, ASA), RFC 5424
 * (`<PRI>1 TIMESTAMP HOST APP PROCID MSGID SD MSG`) and RFC 3164 / BSD
 * (`<PRI>Mmm dd hh:mm:ss HOST TAG[pid]: MSG`, also with a year or an RFC 3339 stamp, without PRI,
 * and Cisco's `HOST : %ASA…`). The header fills fallbacks (clock, host, severity) and tells the
 * caller where the payload starts.
 */
import { findSpace, fixedDigits, isDigit, skipSpaces } from './bytes';
import { BAD_HEADER, BAD_TIMESTAMP } from './reasons';
import { ParsedRecord, Span, KEY_STATIC, staticKey } from './record';
import { isCheckPoint } from './checkpoint';
import { parseStructuredData } from './sd';
import { bsd, bsdToMs, loadBsd, parseBsdTimestamp, parseIsoTimestamp, saveBsd, scan } from './time';
import type { TimeZone } from './timezone';

/** No syslog envelope: the line is the payload. */
export const HDR_NONE = 0;
/** Only `<PRI>` precedes the payload. */
export const HDR_PRI = 1;
/** RFC 3164 / BSD header. */
export const HDR_3164 = 2;
/** RFC 5424 header. */
export const HDR_5424 = 3;

/** Bytes of a byte class as a 256-entry table: one load per byte instead of a chain of ranges. */
function byteClass(extra: string): Uint8Array {
  const table = new Uint8Array(256);
  for (let c = 48; c <= 57; c++) table[c] = 1;
  for (let c = 65; c <= 90; c++) table[c] = table[c + 32] = 1;
  for (const ch of extra) table[ch.charCodeAt(0)] = 1;
  return table;
}
/** Hostname, FQDN or address bytes: [A-Za-z0-9._:-]. */
const HOST_BYTE = byteClass('._:-');
/** Tag (app-name) bytes: [A-Za-z0-9._/-]. */
const TAG_BYTE = byteClass('._/-');

const K_APP = staticKey('syslog.app');
const K_PROCID = staticKey('syslog.procid');
const K_MSGID = staticKey('syslog.msgid');

/** What the envelope said; reused per line. */
export class SyslogHeader {
  kind = HDR_NONE;
  pri = -1;
  timestamp = NaN;
  /** A BSD stamp whose conversion to epoch is deferred until the payload turns out to lack a clock. */
  readonly bsdStamp = new Int32Array(7);
  bsdPending = false;
  /** Set when the deferred stamp turned out not to be a real date. */
  clockInvalid = false;
  readonly host = new Span();
  readonly app = new Span();
  /** RFC 5424 MSGID (absent for NILVALUE and BSD headers). */
  readonly msgid = new Span();
  /** RFC 5424 STRUCTURED-DATA [sdStart, sdEnd) when present (vendor SD parsers re-read it). */
  sdStart = -1;
  sdEnd = -1;
  /** Start of the payload (after header, tag and BOM). */
  msgStart = 0;

  /** Clears the header before a new line. */
  reset(): void {
    this.kind = HDR_NONE;
    this.pri = -1;
    this.timestamp = NaN;
    this.bsdPending = false;
    this.clockInvalid = false;
    this.host.clear();
    this.app.clear();
    this.msgid.clear();
    this.sdStart = -1;
    this.sdEnd = -1;
    this.msgStart = 0;
  }
}

/**
 * The header's clock, converting a deferred BSD stamp (year inference, zone) on first use.
 * NaN when the header has no clock or its date does not exist (e.g. Feb 30).
 */
export function headerClock(h: SyslogHeader, tz: TimeZone, refMs: number): number {
  if (h.bsdPending) {
    loadBsd(h.bsdStamp);
    h.timestamp = bsdToMs(tz, refMs);
    h.bsdPending = false;
    h.clockInvalid = h.timestamp !== h.timestamp;
  }
  return h.timestamp;
}

/** Value of `<PRI>` at `s` (0..191) with scan.end after `>`, or -1 when malformed. */
function parsePri(buf: Uint8Array, s: number, e: number): number {
  let v = 0;
  let i = s + 1;
  while (i < e && isDigit(buf[i]) && i - s <= 3) v = v * 10 + buf[i++] - 48;
  if (i === s + 1 || i >= e || buf[i] !== 62 || v > 191) return -1;
  scan.end = i + 1;
  return v;
}

/**
 * Parses an optional syslog envelope at the start of [s, e) into `h`; returns a dead-letter reason
 * or null. `h.msgStart` is where the payload begins (s when there is no envelope).
 */
export function parseSyslogHeader(
  buf: Buffer,
  s: number,
  e: number,
  h: SyslogHeader,
  rec: ParsedRecord,
  tz: TimeZone,
): string | null {
  h.reset();
  let p = s;
  if (buf[s] === 60) {
    h.pri = parsePri(buf, s, e);
    if (h.pri < 0) return BAD_HEADER;
    p = scan.end;
    h.kind = HDR_PRI;
    if (p + 1 < e && buf[p] === 49 && buf[p + 1] === 32) return parse5424(buf, p + 2, e, h, rec, tz);
  }
  if (parseBsdTimestamp(buf, p, e)) {
    saveBsd(h.bsdStamp);
    h.bsdPending = true;
    return afterTimestamp(buf, bsd.end, e, h, rec);
  }
  if (isDigit(buf[p]) && p + 19 <= e && buf[p + 4] === 45) {
    const ms = parseIsoTimestamp(buf, p, e, tz);
    if (ms === ms && (scan.end === e || buf[scan.end] === 32 || buf[scan.end] === 58)) {
      h.timestamp = ms;
      return afterTimestamp(buf, scan.end, e, h, rec);
    }
  }
  h.msgStart = p;
  return null;
}

function afterTimestamp(buf: Buffer, p: number, e: number, h: SyslogHeader, rec: ParsedRecord): null {
  h.kind = HDR_3164;
  if (p < e && buf[p] === 58) {
    // Cisco `Jan 15 2024 10:23:45: %ASA-…`: no host.
    h.msgStart = skipSpaces(buf, p + 1, e);
    return null;
  }
  p = skipSpaces(buf, p, e);
  const tokenEnd = findSpace(buf, p, e);
  if (isHostToken(buf, p, tokenEnd)) {
    h.host.set(p, tokenEnd);
    p = skipSpaces(buf, tokenEnd, e);
    if (p < e && buf[p] === 58 && (p + 1 === e || buf[p + 1] === 32)) p = skipSpaces(buf, p + 1, e);
  }
  h.msgStart = parseTag(buf, p, e, h, rec);
  return null;
}

/** A hostname, FQDN or address: [A-Za-z0-9._:-]+ not ending in ':' (that would be a tag). */
function isHostToken(buf: Uint8Array, s: number, e: number): boolean {
  if (e <= s || e - s > 255 || buf[e - 1] === 58) return false;
  for (let i = s; i < e; i++) if (HOST_BYTE[buf[i]] !== 1) return false;
  return true;
}

/** Skips a `TAG[pid]: ` prefix, recording app/procid; returns where the content starts. */
function parseTag(buf: Uint8Array, s: number, e: number, h: SyslogHeader, rec: ParsedRecord): number {
  let i = s;
  while (i < e && i - s < 48 && TAG_BYTE[buf[i]] === 1) i++;
  if (i === s || i >= e) return s;
  const appEnd = i;
  let pidStart = -1;
  let pidEnd = -1;
  if (buf[i] === 91) {
    pidStart = i + 1;
    while (i < e && buf[i] !== 93) i++;
    if (i >= e) return s;
    pidEnd = i;
    i++;
  }
  if (i >= e || buf[i] !== 58 || (i + 1 < e && buf[i + 1] !== 32)) return s;
  h.app.set(s, appEnd);
  if (rec.collectFields) {
    rec.addField(K_APP, 0, s, appEnd, KEY_STATIC);
    if (pidStart >= 0) rec.addField(K_PROCID, 0, pidStart, pidEnd, KEY_STATIC);
  }
  return skipSpaces(buf, i + 1, e);
}

/** RFC 5424 after `<PRI>1 `: TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD [SP MSG]. */
function parse5424(
  buf: Buffer,
  p: number,
  e: number,
  h: SyslogHeader,
  rec: ParsedRecord,
  tz: TimeZone,
): string | null {
  h.kind = HDR_5424;
  if (p >= e) return BAD_HEADER;
  if (buf[p] === 45) {
    p++;
  } else {
    const ms = parseIsoTimestamp(buf, p, e, tz);
    if (ms !== ms) return fixedDigits(buf, p, 4, e) < 0 ? BAD_HEADER : BAD_TIMESTAMP;
    h.timestamp = ms;
    p = scan.end;
  }
  for (let field = 0; field < 4; field++) {
    if (p >= e || buf[p] !== 32) return BAD_HEADER;
    const s = p + 1;
    p = findSpace(buf, s, e);
    if (p === s) return BAD_HEADER;
    if (p - s === 1 && buf[s] === 45) continue;
    if (field === 0) h.host.set(s, p);
    else if (field === 1) h.app.set(s, p);
    else if (field === 3) h.msgid.set(s, p);
    if (rec.collectFields && field > 0)
      rec.addField(field === 1 ? K_APP : field === 2 ? K_PROCID : K_MSGID, 0, s, p, KEY_STATIC);
  }
  if (p >= e || buf[p] !== 32) return BAD_HEADER;
  p++;
  if (p < e && buf[p] === 45) {
    p++;
  } else {
    const fieldsBefore = rec.fieldCount;
    const sdEnd = parseStructuredData(buf, p, e, rec);
    if (sdEnd < 0) {
      // Check Point's Log Exporter writes `[key:"value"; …]` where SD belongs: that is its payload.
      if (!isCheckPoint(buf, p, e)) return BAD_HEADER;
      rec.fieldCount = fieldsBefore;
      h.msgStart = p;
      return null;
    }
    h.sdStart = p;
    h.sdEnd = sdEnd;
    p = sdEnd;
  }
  if (p < e && buf[p] !== 32) return BAD_HEADER;
  if (p < e) p++;
  // A UTF-8 BOM marks the MSG as UTF-8; it is not part of the message.
  if (p + 2 < e && buf[p] === 0xef && buf[p + 1] === 0xbb && buf[p + 2] === 0xbf) p += 3;
  h.msgStart = p;
  return null;
}
