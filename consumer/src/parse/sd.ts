/**
 * RFC 5424 STRUCTURED-DATA: one or more `[SD-ID PARAM="value" …]` elements. Every SD-PARAM becomes
 * a vendor field (`field:<PARAM-NAME>`); values with `\"`, `\\` or `\]` escapes are unescaped into
 * the record's scratch buffer.
 */
import { ParsedRecord, UNESCAPE_SD, VAL_SCRATCH } from './record';

/** SD-NAME bytes: printable US-ASCII except `=`, space, `]` and `"`. */
function isNameByte(c: number): boolean {
  return c > 32 && c < 127 && c !== 61 && c !== 93 && c !== 34;
}

/**
 * Parses STRUCTURED-DATA starting at `p` (which must be `[`); returns the position after the last
 * element, or -1 when the syntax is broken.
 */
export function parseStructuredData(buf: Buffer, p: number, e: number, rec: ParsedRecord): number {
  if (p >= e || buf[p] !== 91) return -1;
  while (p < e && buf[p] === 91) {
    p++;
    const idStart = p;
    while (p < e && isNameByte(buf[p])) p++;
    if (p === idStart) return -1;
    while (p < e && buf[p] === 32) {
      p = parseParam(buf, p + 1, e, rec);
      if (p < 0) return -1;
    }
    if (p >= e || buf[p] !== 93) return -1;
    p++;
  }
  return p;
}

/** One `NAME="value"`; returns the position after the closing quote or -1. */
function parseParam(buf: Buffer, p: number, e: number, rec: ParsedRecord): number {
  const nameStart = p;
  while (p < e && isNameByte(buf[p])) p++;
  const nameEnd = p;
  if (nameEnd === nameStart || p + 1 >= e || buf[p] !== 61 || buf[p + 1] !== 34) return -1;
  p += 2;
  const valueStart = p;
  let escaped = false;
  while (p < e && buf[p] !== 34) {
    if (buf[p] === 92) {
      escaped = true;
      p++;
    }
    p++;
  }
  if (p >= e) return -1;
  if (rec.collectFields) {
    if (escaped) {
      const vs = rec.unescapeToScratch(buf, valueStart, p, UNESCAPE_SD);
      rec.addField(nameStart, nameEnd, vs, rec.scratchLen, VAL_SCRATCH);
    } else {
      rec.addField(nameStart, nameEnd, valueStart, p, 0);
    }
  }
  return p + 1;
}

/** Receives one SD-PARAM of element [idStart, idEnd): name span and value (source or scratch). */
export type SdParamHandler = (
  rec: ParsedRecord,
  idStart: number,
  idEnd: number,
  ns: number,
  ne: number,
  vb: Buffer,
  vs: number,
  ve: number,
  scratch: boolean,
) => string | null;

/**
 * Walks STRUCTURED-DATA that the header already validated ([s, e) from SyslogHeader.sdStart/sdEnd)
 * and hands every SD-PARAM to `onParam` without adding fields; returns the first reason or null.
 */
export function forEachSdParam(
  buf: Buffer,
  s: number,
  e: number,
  rec: ParsedRecord,
  onParam: SdParamHandler,
): string | null {
  let p = s;
  while (p < e && buf[p] === 91) {
    const idStart = ++p;
    while (p < e && isNameByte(buf[p])) p++;
    const idEnd = p;
    while (p < e && buf[p] === 32) {
      const ns = ++p;
      while (p < e && isNameByte(buf[p])) p++;
      const ne = p;
      p += 2;
      const vs = p;
      let escaped = false;
      while (p < e && buf[p] !== 34) {
        if (buf[p] === 92) {
          escaped = true;
          p++;
        }
        p++;
      }
      let reason: string | null;
      if (escaped) {
        const us = rec.unescapeToScratch(buf, vs, p, UNESCAPE_SD);
        reason = onParam(rec, idStart, idEnd, ns, ne, rec.scratch, us, rec.scratchLen, true);
      } else {
        reason = onParam(rec, idStart, idEnd, ns, ne, buf, vs, p, false);
      }
      if (reason !== null) return reason;
      p++;
    }
    p++;
  }
  return null;
}
