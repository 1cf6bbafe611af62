/**
 * MikroTik RouterOS firewall log (a rule with `action=log` or `log=yes`):
 * `firewall,info [PREFIX ]forward: in:ether1 out:bridge, src-mac 00:11:22:33:44:55, proto TCP
 * (SYN), 10.0.0.5:51234->198.51.100.7:443, NAT (10.0.0.5:51234->203.0.113.5:23456)->198.51.100.7:443,
 * len 60`. Segments are separated by `, ` outside parentheses. Endpoints are `addr:port`, `addr`
 * (ICMP) or `[v6]:port`; IPv6 without a port is the bare address. NAT: `(orig->translated)` on the
 * source side is source NAT, on the destination side destination NAT; the translated (post-NAT)
 * values fill nat_*. The log prefix is the rule and decides the action (accept/drop/reject …).
 */
import type { ParseContext } from './context';
import { ascii, containsIgnoreCase, isDigit, parseUint, startsWith } from './bytes';
import { DST, NAT_DST, NAT_SRC, setIp, setPort, setProto, SRC } from './normalize';
import { BAD_MESSAGE, INVALID_IP, INVALID_PORT } from './reasons';
import {
  ACTION_ALERT,
  ACTION_ALLOW,
  ACTION_DENY,
  ACTION_DROP,
  F_MIKROTIK,
  KEY_STATIC,
  ParsedRecord,
  staticKey,
} from './record';

const PROTO = ascii('proto ');
const NAT = ascii('NAT ');
const LEN = ascii('len ');
const K_CHAIN = staticKey('mikrotik.chain');
const PREFIX_WORDS: Array<[Buffer, number]> = [
  [ascii('accept'), ACTION_ALLOW],
  [ascii('allow'), ACTION_ALLOW],
  [ascii('drop'), ACTION_DROP],
  [ascii('reject'), ACTION_DENY],
  [ascii('block'), ACTION_DENY],
  [ascii('deny'), ACTION_DENY],
  [ascii('log'), ACTION_ALERT],
];

/** Position of `: in:` within the first 120 bytes (the chain's colon), or -1. */
export function findMikrotikChain(buf: Uint8Array, p: number, e: number): number {
  const limit = e - 6 < p + 120 ? e - 6 : p + 120;
  for (let i = p; i < limit; i++) {
    if (buf[i] === 58 && buf[i + 1] === 32 && buf[i + 2] === 105 && buf[i + 3] === 110 && buf[i + 4] === 58)
      return i;
  }
  return -1;
}

/** Parses a RouterOS firewall log payload into `rec`. */
export function parseMikrotik(buf: Buffer, s: number, e: number, rec: ParsedRecord, _ctx: ParseContext) {
  rec.format = F_MIKROTIK;
  const colon = findMikrotikChain(buf, s, e);
  if (colon < 0) return BAD_MESSAGE;
  let chainStart = colon;
  while (chainStart > s && buf[chainStart - 1] !== 32) chainStart--;
  if (rec.collectFields) rec.addField(K_CHAIN, 0, chainStart, colon, KEY_STATIC);
  setPrefix(buf, s, chainStart, rec);
  let p = colon + 2;
  while (p < e) {
    const segStart = p;
    let depth = 0;
    while (p < e && !(depth === 0 && buf[p] === 44 && buf[p + 1] === 32)) {
      if (buf[p] === 40) depth++;
      else if (buf[p] === 41) depth--;
      p++;
    }
    const reason = segment(buf, segStart, p, rec);
    if (reason !== null) return reason;
    p += 2;
  }
  return rec.srcIpVersion === 0 ? BAD_MESSAGE : null;
}

function segment(buf: Buffer, s: number, e: number, rec: ParsedRecord): string | null {
  if (startsWith(buf, s, e, PROTO)) {
    let pe = s + PROTO.length;
    while (pe < e && buf[pe] !== 32 && buf[pe] !== 40) pe++;
    setProto(rec, buf, s + PROTO.length, pe);
    return null;
  }
  if (startsWith(buf, s, e, LEN)) {
    const n = parseUint(buf, s + LEN.length, e);
    if (n >= 0) rec.bytes = n;
    return null;
  }
  if (startsWith(buf, s, e, NAT)) return natTuple(buf, s + NAT.length, e, rec);
  const c = buf[s];
  if (!(isDigit(c) || c === 91 || (c >= 97 && c <= 102))) return null;
  const arrow = arrowAt(buf, s, e);
  if (arrow < 0) return null;
  return endpoint(buf, s, arrow, rec, SRC) ?? endpoint(buf, arrow + 2, e, rec, DST);
}

/** `(a->b)->c`, `a->(c->d)` or both; only the translated sides are stored. */
function natTuple(buf: Buffer, s: number, e: number, rec: ParsedRecord): string | null {
  let p = s;
  if (buf[p] === 40) {
    const close = closeParen(buf, p, e);
    if (close < 0) return BAD_MESSAGE;
    const inner = arrowAt(buf, p + 1, close);
    if (inner < 0) return BAD_MESSAGE;
    const reason = endpoint(buf, inner + 2, close, rec, NAT_SRC);
    if (reason !== null) return reason;
    p = close + 1;
  } else {
    p = arrowAt(buf, p, e);
    if (p < 0) return BAD_MESSAGE;
  }
  if (!(buf[p] === 45 && buf[p + 1] === 62)) return BAD_MESSAGE;
  p += 2;
  if (p < e && buf[p] === 40) {
    const close = closeParen(buf, p, e);
    const inner = close < 0 ? -1 : arrowAt(buf, p + 1, close);
    if (inner < 0) return BAD_MESSAGE;
    return endpoint(buf, inner + 2, close, rec, NAT_DST);
  }
  return null;
}

function closeParen(buf: Uint8Array, p: number, e: number): number {
  for (let i = p; i < e; i++) if (buf[i] === 41) return i;
  return -1;
}

function arrowAt(buf: Uint8Array, s: number, e: number): number {
  for (let i = s; i + 1 < e; i++) if (buf[i] === 45 && buf[i + 1] === 62) return i;
  return -1;
}

/** `a.b.c.d:port`, `a.b.c.d`, `[v6]:port` or a bare IPv6 address. */
function endpoint(buf: Buffer, s: number, e: number, rec: ParsedRecord, which: number): string | null {
  if (s < e && buf[s] === 91) {
    let close = s + 1;
    while (close < e && buf[close] !== 93) close++;
    if (close >= e) return INVALID_IP;
    if (!setIp(rec, which, buf, s + 1, close, false)) return INVALID_IP;
    if (close + 1 < e && buf[close + 1] === 58)
      return setPort(rec, which, buf, close + 2, e) ? null : INVALID_PORT;
    return null;
  }
  let colons = 0;
  let last = -1;
  for (let i = s; i < e; i++) {
    if (buf[i] === 58) {
      colons++;
      last = i;
    }
  }
  if (colons !== 1) return setIp(rec, which, buf, s, e, false) ? null : INVALID_IP;
  if (!setIp(rec, which, buf, s, last, false)) return INVALID_IP;
  return setPort(rec, which, buf, last + 1, e) ? null : INVALID_PORT;
}

/** Text before the chain minus a leading topics token (`firewall,info`): the log prefix. */
function setPrefix(buf: Buffer, s: number, e: number, rec: ParsedRecord): void {
  let p = s;
  let t = s;
  while (t < e && buf[t] !== 32) t++;
  for (let i = s; i < t; i++) {
    if (buf[i] === 44) {
      p = t;
      break;
    }
  }
  while (p < e && buf[p] === 32) p++;
  let end = e;
  while (end > p && buf[end - 1] === 32) end--;
  if (end > p && buf[end - 1] === 58) end--;
  if (end <= p) return;
  rec.rule.set(p, end);
  for (const [word, action] of PREFIX_WORDS) {
    if (containsIgnoreCase(buf, p, end, word)) {
      rec.action = action;
      return;
    }
  }
}
