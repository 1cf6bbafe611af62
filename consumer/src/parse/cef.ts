/**
 * ArcSight Common Event Format: `CEF:Version|Device Vendor|Device Product|Device Version|Device
 * Event Class ID|Name|Severity|Extension`. Header fields escape `\|` and `\\`; extension values
 * escape `\=`, `\\`, `\n`, `\r` and may contain spaces (a value ends where the next `key=` begins).
 * Header fields become field:cefVersion, deviceVendor, deviceProduct, deviceVersion,
 * deviceEventClassId, name, severity; every extension key is a field under its own name.
 */
import type { ParseContext } from './context';
import { ascii, startsWith } from './bytes';
import { severityOfCef } from './normalize';
import { BAD_CEF } from './reasons';
import {
  F_CEF,
  KEY_STATIC,
  ParsedRecord,
  staticKey,
  UNESCAPE_BACKSLASH,
  UNESCAPE_CEF,
  VAL_SCRATCH,
} from './record';
import { applyCefExtension, cefClock, resetCefState } from './cef-extension';

const CEF_TAG = ascii('CEF:');
const HEADER_KEYS = [
  'cefVersion',
  'deviceVendor',
  'deviceProduct',
  'deviceVersion',
  'deviceEventClassId',
  'name',
  'severity',
].map(staticKey);
const H_NAME = 5;
const H_SEVERITY = 6;

/** True when [p, e) starts with `CEF:`. */
export function isCef(buf: Uint8Array, p: number, e: number): boolean {
  return startsWith(buf, p, e, CEF_TAG);
}

/** Parses a CEF payload into `rec`. */
export function parseCef(
  buf: Buffer,
  s: number,
  e: number,
  rec: ParsedRecord,
  ctx: ParseContext,
): string | null {
  rec.format = F_CEF;
  if (!isCef(buf, s, e)) return BAD_CEF;
  resetCefState();
  let p = s + 4;
  for (let field = 0; field < 7; field++) {
    const fs = p;
    let escaped = false;
    while (p < e && buf[p] !== 124) {
      if (buf[p] === 92) {
        escaped = true;
        p++;
      }
      p++;
    }
    if (p >= e) return BAD_CEF;
    headerField(field, buf, fs, p, escaped, rec);
    p++;
  }
  const reason = parseExtension(buf, p, e, rec);
  if (reason !== null) return reason;
  return cefClock(buf, rec, ctx);
}

function headerField(
  field: number,
  buf: Buffer,
  s: number,
  e: number,
  escaped: boolean,
  rec: ParsedRecord,
): void {
  if (field === 0 && e - s !== 1) return;
  let vs = s;
  let ve = e;
  let flags = KEY_STATIC;
  if (escaped) {
    vs = rec.unescapeToScratch(buf, s, e, UNESCAPE_BACKSLASH);
    ve = rec.scratchLen;
    flags |= VAL_SCRATCH;
  }
  if (rec.collectFields) rec.addField(HEADER_KEYS[field], 0, vs, ve, flags);
  if (field === H_NAME && ve > vs) {
    if (escaped) rec.message.setScratch(vs, ve);
    else rec.message.set(vs, ve);
  } else if (field === H_SEVERITY) {
    rec.severity = severityOfCef(escaped ? rec.scratch : buf, vs, ve);
  }
}

/** A key is [A-Za-z0-9_.\[\]]+; anything else before `=` means the `=` belongs to a value. */
function isKeyByte(c: number): boolean {
  return (
    (c >= 48 && c <= 57) ||
    (c >= 65 && c <= 90) ||
    (c >= 97 && c <= 122) ||
    c === 95 ||
    c === 46 ||
    c === 91 ||
    c === 93
  );
}

/**
 * Start of the key ending just before `eq`, or -1 when the `=` belongs to a value: a key is a run
 * of key bytes preceded by a space (or, for the first key only, by the extension start).
 */
function keyStartBefore(buf: Uint8Array, from: number, eq: number, first: boolean): number {
  let k = eq;
  while (k > from && buf[k - 1] !== 32) {
    if (!isKeyByte(buf[k - 1])) return -1;
    k--;
  }
  if (k === eq) return -1;
  if (k === from) return first ? k : -1;
  return k;
}

/** Walks `key=value key=value…`, where a value runs until the space before the next key. */
function parseExtension(buf: Buffer, s: number, e: number, rec: ParsedRecord): string | null {
  let keyS = -1;
  let keyE = -1;
  let valS = -1;
  let escaped = false;
  for (let p = s; p < e; p++) {
    const c = buf[p];
    if (c === 92) {
      escaped = true;
      p++;
      continue;
    }
    if (c !== 61) continue;
    const k = keyStartBefore(buf, keyS < 0 ? s : valS, p, keyS < 0);
    if (k < 0) continue;
    if (keyS >= 0) {
      const reason = extensionPair(buf, keyS, keyE, valS, k - 1, escaped, rec);
      if (reason !== null) return reason;
    }
    keyS = k;
    keyE = p;
    valS = p + 1;
    escaped = false;
  }
  if (keyS < 0) return null;
  return extensionPair(buf, keyS, keyE, valS, e, escaped, rec);
}

function extensionPair(
  buf: Buffer,
  ks: number,
  ke: number,
  vs: number,
  ve: number,
  escaped: boolean,
  rec: ParsedRecord,
): string | null {
  while (ve > vs && buf[ve - 1] === 32) ve--;
  let vBuf = buf;
  if (escaped) {
    vs = rec.unescapeToScratch(buf, vs, ve, UNESCAPE_CEF);
    ve = rec.scratchLen;
    vBuf = rec.scratch;
  }
  if (rec.collectFields) rec.addField(ks, ke, vs, ve, escaped ? VAL_SCRATCH : 0);
  return applyCefExtension(buf, ks, ke, vBuf, vs, ve, escaped, rec);
}
