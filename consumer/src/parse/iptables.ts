/**
 * Linux netfilter LOG lines (iptables/nftables/UFW): `[ 1234.5678] [UFW BLOCK] IN=eth0 OUT= MAC=…
 * SRC=… DST=… LEN=60 … PROTO=TCP SPT=… DPT=… SYN …`, usually behind a `kernel:` syslog header.
 * The log prefix before `IN=` becomes `rule` and decides the action (ALLOW/ACCEPT, BLOCK/DENY/
 * REJECT, DROP, AUDIT/LOG); LEN is the packet length and is reported as `bytes`.
 */
import type { ParseContext } from './context';
import { ascii, containsIgnoreCase, isDigit, skipSpaces, startsWith, trimEnd } from './bytes';
import { KeywordTable } from './keywords';
import { setStandardField, T, targetTable } from './kv-apply';
import { BAD_KV, UNKNOWN_FORMAT } from './reasons';
import {
  ACTION_ALERT,
  ACTION_ALLOW,
  ACTION_DENY,
  ACTION_DROP,
  ACTION_UNKNOWN,
  F_IPTABLES,
  ParsedRecord,
} from './record';
import { parseUint } from './bytes';

const K = { SRC: 1, DST: 2, SPT: 3, DPT: 4, PROTO: 5, LEN: 6 } as const;
const KEYS = new KeywordTable(Object.entries(K));
const PREFIX_WORDS: Array<[Uint8Array, number]> = [
  [ascii('allow'), ACTION_ALLOW],
  [ascii('accept'), ACTION_ALLOW],
  [ascii('drop'), ACTION_DROP],
  [ascii('block'), ACTION_DENY],
  [ascii('deny'), ACTION_DENY],
  [ascii('reject'), ACTION_DENY],
  [ascii('audit'), ACTION_ALERT],
  [ascii('log'), ACTION_ALERT],
];
const KERNEL_TAG = ascii('kernel:');
/** How far into the content `IN=` may start (kernel uptime stamp + a 29-byte prefix + slack). */
const MAX_PREFIX_SCAN = 160;

/** Position of the `IN=` token in [s, e) within the first MAX_PREFIX_SCAN bytes, or -1. */
export function findNetfilterStart(buf: Uint8Array, s: number, e: number): number {
  const limit = e - 3 < s + MAX_PREFIX_SCAN ? e - 3 : s + MAX_PREFIX_SCAN;
  for (let i = s; i <= limit; i++) {
    if (buf[i] === 73 && buf[i + 1] === 78 && buf[i + 2] === 61 && (i === s || buf[i - 1] === 32)) return i;
  }
  return -1;
}

/** Parses a netfilter LOG payload into `rec`. */
export function parseIptables(
  buf: Buffer,
  s: number,
  e: number,
  rec: ParsedRecord,
  _ctx: ParseContext,
): string | null {
  rec.format = F_IPTABLES;
  const kv = findNetfilterStart(buf, s, e);
  if (kv < 0) return UNKNOWN_FORMAT;
  setPrefix(buf, s, kv, rec);
  let p = kv;
  const collect = rec.collectFields;
  while (p < e) {
    p = skipSpaces(buf, p, e);
    if (p >= e) break;
    const ks = p;
    while (p < e && buf[p] !== 61 && buf[p] !== 32) p++;
    if (p >= e || buf[p] === 32) {
      // A bare flag (DF, SYN, ACK…): a field with an empty value.
      if (collect) rec.addField(ks, p, p, p, 0);
      continue;
    }
    const ke = p++;
    const vs = p;
    while (p < e && buf[p] !== 32) p++;
    if (ke === ks) return BAD_KV;
    if (collect) rec.addField(ks, ke, vs, p, 0);
    const reason = applyKey(KEYS.lookup(buf, ks, ke), rec, buf, vs, p);
    if (reason !== null) return reason;
  }
  return null;
}

/** Netfilter keys that feed a standard field (LEN is the packet length, stored as is). */
const STANDARD = targetTable([
  [K.SRC, T.src_ip],
  [K.DST, T.dst_ip],
  [K.SPT, T.src_port],
  [K.DPT, T.dst_port],
  [K.PROTO, T.proto],
]);

function applyKey(key: number, rec: ParsedRecord, buf: Buffer, vs: number, ve: number): string | null {
  if (key === K.LEN) {
    const n = parseUint(buf, vs, ve);
    if (n >= 0) rec.bytes = n;
    return null;
  }
  const target = key > 0 && key < STANDARD.length ? STANDARD[key] : 0;
  return target === 0 ? null : setStandardField(target, rec, buf, vs, ve, false);
}

/** The text between the kernel uptime stamp and `IN=`: `[UFW BLOCK]` -> rule "UFW BLOCK". */
function setPrefix(buf: Buffer, s: number, e: number, rec: ParsedRecord): void {
  let p = skipSpaces(buf, s, e);
  // A `kernel:` tag left in the payload (journal text export, no syslog header).
  if (startsWith(buf, p, e, KERNEL_TAG)) p = skipSpaces(buf, p + KERNEL_TAG.length, e);
  // Kernel uptime `[ 1234.567890]`.
  if (p < e && buf[p] === 91) {
    let q = skipSpaces(buf, p + 1, e);
    if (q < e && isDigit(buf[q])) {
      while (q < e && (isDigit(buf[q]) || buf[q] === 46)) q++;
      if (q < e && buf[q] === 93) p = skipSpaces(buf, q + 1, e);
    }
  }
  let end = trimEnd(buf, p, e);
  if (end > p && buf[end - 1] === 58) end = trimEnd(buf, p, end - 1);
  if (end - p >= 2 && buf[p] === 91 && buf[end - 1] === 93) {
    p++;
    end--;
  }
  if (end <= p) return;
  rec.rule.set(p, end);
  rec.action = ACTION_UNKNOWN;
  for (const [word, action] of PREFIX_WORDS) {
    if (containsIgnoreCase(buf, p, end, word)) {
      rec.action = action;
      return;
    }
  }
}
