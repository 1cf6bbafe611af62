/**
 * Token helpers for Cisco ASA message bodies: one pass records, for each keyword of interest
 * (`for`, `to`, `from`, `src`, `dst`, `bytes`, …), the token that follows its first occurrence;
 * endpoint tokens (`iface:ip/port`, `ip/port`, `iface/ip(port)`) are then decoded into the record.
 */
import { findSpace, skipSpaces } from './bytes';
import { ipVersion } from './ip';
import { KeywordTable } from './keywords';
import { setIp, setPort } from './normalize';
import { BAD_MESSAGE, INVALID_IP } from './reasons';
import type { ParsedRecord } from './record';

/** Keywords whose following token the ASA parsers need. */
export const Word = {
  For: 1,
  To: 2,
  From: 3,
  Src: 4,
  Dst: 5,
  Bytes: 6,
  Duration: 7,
  Connection: 8,
  AccessGroup: 9,
} as const;
/** A keyword id. */
export type Word = (typeof Word)[keyof typeof Word];
const WORDS = new KeywordTable([
  ['for', Word.For],
  ['to', Word.To],
  ['from', Word.From],
  ['src', Word.Src],
  ['dst', Word.Dst],
  ['bytes', Word.Bytes],
  ['duration', Word.Duration],
  ['connection', Word.Connection],
  ['access-group', Word.AccessGroup],
]);
const WORD_SLOTS = 10;

/** Start/end of the token after each keyword's first occurrence (-1 when absent). */
export const after = { s: new Int32Array(WORD_SLOTS), e: new Int32Array(WORD_SLOTS) };

/** Indexes the keywords of [p, e) into `after` in one pass over the tokens. */
export function indexWords(buf: Uint8Array, p: number, e: number): void {
  after.s.fill(-1);
  let pending = -1;
  p = skipSpaces(buf, p, e);
  while (p < e) {
    const te = findSpace(buf, p, e);
    if (pending > 0 && after.s[pending] < 0) {
      after.s[pending] = p;
      after.e[pending] = te;
    }
    pending = WORDS.lookup(buf, p, te);
    p = skipSpaces(buf, te, e);
  }
}

/** `[iface:]ip[/port]` token into slot `which` (0 src, 1 dst, 2/3 NAT); service-name ports are skipped. */
export function endpoint(rec: ParsedRecord, which: number, buf: Buffer, s: number, e: number): string | null {
  let slash = -1;
  for (let i = e - 1; i > s; i--) {
    if (buf[i] === 47) {
      slash = i;
      break;
    }
  }
  const ipEnd = slash >= 0 ? slash : e;
  let ipStart = s;
  if (ipVersion(buf, s, ipEnd) === 0) {
    while (ipStart < ipEnd && buf[ipStart] !== 58) ipStart++;
    if (ipStart >= ipEnd) return INVALID_IP;
    ipStart++;
  }
  if (ipEnd === ipStart || !setIp(rec, which, buf, ipStart, ipEnd, false)) return INVALID_IP;
  if (slash >= 0) setPort(rec, which, buf, slash + 1, e);
  return null;
}

/** The endpoint token after keyword `word`; BAD_MESSAGE when the keyword is absent. */
export function endpointAfter(rec: ParsedRecord, which: number, buf: Buffer, word: Word): string | null {
  const s = after.s[word];
  return s < 0 ? BAD_MESSAGE : endpoint(rec, which, buf, s, after.e[word]);
}

/** `iface/ip(port)` into src (0) or dst (1). */
export function slashParenEndpoint(
  rec: ParsedRecord,
  which: number,
  buf: Buffer,
  s: number,
  e: number,
): string | null {
  let slash = s;
  while (slash < e && buf[slash] !== 47) slash++;
  let paren = slash;
  while (paren < e && buf[paren] !== 40) paren++;
  if (slash >= e || paren >= e || buf[e - 1] !== 41) return BAD_MESSAGE;
  if (paren === slash + 1 || !setIp(rec, which, buf, slash + 1, paren, false)) return INVALID_IP;
  setPort(rec, which, buf, paren + 1, e - 1);
  return null;
}

/**
 * The `(mapped_ip/mapped_port)` token right after [.., tokenEnd) (Built messages): stored as the
 * NAT address of slot `natWhich` (2 source, 3 destination) when it differs from the real one
 * [realS, realE) — ASA repeats the real address when nothing is translated.
 */
export function mappedAfter(
  rec: ParsedRecord,
  natWhich: number,
  buf: Buffer,
  realS: number,
  realE: number,
  tokenEnd: number,
  e: number,
): string | null {
  const s = skipSpaces(buf, tokenEnd, e);
  const te = findSpace(buf, s, e);
  if (te - s < 4 || buf[s] !== 40 || buf[te - 1] !== 41) return null;
  let colon = realS;
  while (colon < realE && buf[colon] !== 58) colon++;
  const rs = colon < realE && ipVersion(buf, realS, realE) === 0 ? colon + 1 : realS;
  if (buf.compare(buf, s + 1, te - 1, rs, realE) === 0) return null;
  return endpoint(rec, natWhich, buf, s + 1, te - 1);
}

/** Exchanges source and destination address, version and port. */
export function swapEndpoints(rec: ParsedRecord): void {
  const { start, end, scratch } = rec.srcIp;
  rec.srcIp.copy(rec.dstIp);
  if (scratch) rec.dstIp.setScratch(start, end);
  else rec.dstIp.set(start, end);
  const version = rec.srcIpVersion;
  rec.srcIpVersion = rec.dstIpVersion;
  rec.dstIpVersion = version;
  const port = rec.srcPort;
  rec.srcPort = rec.dstPort;
  rec.dstPort = port;
  swapNat(rec);
}

function swapNat(rec: ParsedRecord): void {
  const { start, end, scratch } = rec.natSrcIp;
  rec.natSrcIp.copy(rec.natDstIp);
  if (scratch) rec.natDstIp.setScratch(start, end);
  else rec.natDstIp.set(start, end);
  const version = rec.natSrcIpVersion;
  rec.natSrcIpVersion = rec.natDstIpVersion;
  rec.natDstIpVersion = version;
  const port = rec.natSrcPort;
  rec.natSrcPort = rec.natDstPort;
  rec.natDstPort = port;
}
