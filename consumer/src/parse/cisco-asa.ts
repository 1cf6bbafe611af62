/**
 * Cisco ASA / FTD / PIX syslog messages `%ASA-<sev>-<id>: <text>` (Cisco "Syslog Messages" guide).
 * Connection Built/Teardown (302013-302016), the Deny family (106001, 106006, 106007, 106010,
 * 106015, 106021, 106023, 313001, 710003) and access-list hits (106100) yield addresses, ports,
 * protocol, action and rule; any other id keeps severity, id and text only. ASA payloads carry no
 * clock: the time comes from the syslog header, or the line is clock-less.
 */
import type { ParseContext } from './context';
import {
  ascii,
  findSpace,
  fixedDigits,
  skipSpaces,
  spanEquals,
  spanEqualsIgnoreCase,
  containsIgnoreCase,
} from './bytes';
import { ipVersion } from './ip';
import { actionOf, protoNumberOf, setIp, setPort, setProto } from './normalize';
import { BAD_MESSAGE, INVALID_IP, UNKNOWN_FORMAT } from './reasons';
import {
  ACTION_ALLOW,
  ACTION_CLOSE,
  ACTION_DENY,
  ACTION_RESET,
  F_ASA,
  KEY_STATIC,
  ParsedRecord,
  staticKey,
} from './record';

const K_MESSAGE_ID = staticKey('message_id');
const K_CONNECTION_ID = staticKey('connection_id');
const K_DURATION = staticKey('duration');
const K_REASON = staticKey('reason');
const W = {
  for: ascii('for'),
  to: ascii('to'),
  from: ascii('from'),
  src: ascii('src'),
  dst: ascii('dst'),
  bytes: ascii('bytes'),
  duration: ascii('duration'),
  outbound: ascii('outbound'),
  accessGroup: ascii('access-group'),
  protocol: ascii('protocol'),
  reset: ascii('reset'),
  connection: ascii('connection'),
};

/** Token scanner state (start/end of the token found last). */
const tok = { s: 0, e: 0 };

/** Finds the token equal to `word` in [p, e); returns the start of the token after it, or -1. */
function after(buf: Buffer, p: number, e: number, word: Uint8Array): number {
  p = skipSpaces(buf, p, e);
  while (p < e) {
    const end = findSpace(buf, p, e);
    if (spanEquals(buf, p, end, word)) {
      const next = skipSpaces(buf, end, e);
      tok.s = next;
      tok.e = findSpace(buf, next, e);
      return next < e ? next : -1;
    }
    p = skipSpaces(buf, end, e);
  }
  return -1;
}

/** True when [p, e) starts with `%ASA-`, `%FTD-` or `%PIX-` and a `<digit>-<digits>:` tag. */
export function isAsaTag(buf: Uint8Array, p: number, e: number): boolean {
  if (p + 10 > e || buf[p] !== 37 || buf[p + 4] !== 45 || buf[p + 6] !== 45) return false;
  const a = buf[p + 1];
  return (a === 65 || a === 70 || a === 80) && buf[p + 5] >= 48 && buf[p + 5] <= 55;
}

/** Parses an ASA payload (optionally preceded by `: `) into `rec`. */
export function parseAsa(
  buf: Buffer,
  s: number,
  e: number,
  rec: ParsedRecord,
  _ctx: ParseContext,
): string | null {
  rec.format = F_ASA;
  let p = skipSpaces(buf, s, e);
  if (p < e && buf[p] === 58) p = skipSpaces(buf, p + 1, e);
  if (!isAsaTag(buf, p, e)) return UNKNOWN_FORMAT;
  rec.severity = buf[p + 5] - 48;
  const idStart = p + 7;
  let idEnd = idStart;
  while (idEnd < e && buf[idEnd] >= 48 && buf[idEnd] <= 57) idEnd++;
  if (idEnd === idStart || idEnd >= e || buf[idEnd] !== 58) return UNKNOWN_FORMAT;
  const id = idEnd - idStart === 6 ? fixedDigits(buf, idStart, 6, idEnd) : -1;
  const body = skipSpaces(buf, idEnd + 1, e);
  rec.message.set(body, e);
  if (rec.collectFields) rec.addField(K_MESSAGE_ID, 0, idStart, idEnd, KEY_STATIC);
  switch (id) {
    case 302013:
    case 302015:
      return built(buf, body, e, rec);
    case 302014:
    case 302016:
      return teardown(buf, body, e, rec);
    case 106100:
      return accessList(buf, body, e, rec);
    case 106001:
    case 106006:
    case 106007:
    case 106010:
    case 106015:
    case 106021:
    case 106023:
    case 313001:
    case 710003:
      return denied(buf, body, e, rec);
    default:
      return null;
  }
}

/** `[iface:]ip[/port]` token into src (0) or dst (1). Ports that are service names are skipped. */
function endpoint(rec: ParsedRecord, which: number, buf: Buffer, s: number, e: number): string | null {
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
  if (!setIp(rec, which, buf, ipStart, ipEnd, false) || ipEnd === ipStart) return INVALID_IP;
  if (slash >= 0) setPort(rec, which, buf, slash + 1, e);
  return null;
}

/** Endpoint following `word`, or BAD_MESSAGE when the word or its operand is missing. */
function endpointAfter(
  rec: ParsedRecord,
  which: number,
  buf: Buffer,
  p: number,
  e: number,
  word: Uint8Array,
): string | null {
  if (after(buf, p, e, word) < 0) return BAD_MESSAGE;
  return endpoint(rec, which, buf, tok.s, tok.e);
}

/** `Built {inbound|outbound} {TCP|UDP} connection <id> for A (…) to B (…)`. */
function built(buf: Buffer, p: number, e: number, rec: ParsedRecord): string | null {
  const dirStart = skipSpaces(buf, findSpace(buf, p, e), e);
  const dirEnd = findSpace(buf, dirStart, e);
  const protoStart = skipSpaces(buf, dirEnd, e);
  setProto(rec, buf, protoStart, findSpace(buf, protoStart, e));
  rec.action = ACTION_ALLOW;
  const reason = connectionEndpoints(buf, protoStart, e, rec);
  if (reason !== null) return reason;
  // Outbound: the `for` side is the responder, so the initiator (source) is the `to` side.
  if (spanEquals(buf, dirStart, dirEnd, W.outbound)) swapEndpoints(rec);
  return null;
}

/** `Teardown {TCP|UDP} connection <id> for A to B duration h:mm:ss bytes N [reason]`. */
function teardown(buf: Buffer, p: number, e: number, rec: ParsedRecord): string | null {
  const protoStart = skipSpaces(buf, findSpace(buf, p, e), e);
  setProto(rec, buf, protoStart, findSpace(buf, protoStart, e));
  const reason = connectionEndpoints(buf, protoStart, e, rec);
  if (reason !== null) return reason;
  rec.action = ACTION_CLOSE;
  if (after(buf, p, e, W.duration) >= 0 && rec.collectFields)
    rec.addField(K_DURATION, 0, tok.s, tok.e, KEY_STATIC);
  if (after(buf, p, e, W.bytes) >= 0) {
    const n = fixedDigitsRun(buf, tok.s, tok.e);
    if (n >= 0) rec.bytes = n;
    const why = skipSpaces(buf, tok.e, e);
    if (why < e) {
      if (containsIgnoreCase(buf, why, e, W.reset)) rec.action = ACTION_RESET;
      if (rec.collectFields) rec.addField(K_REASON, 0, why, e, KEY_STATIC);
    }
  }
  // Teardowns do not say who initiated; the side with the lower port is taken as the service.
  if (rec.srcPort >= 0 && rec.dstPort >= 0 && rec.srcPort < rec.dstPort) swapEndpoints(rec);
  return null;
}

/** Exchanges source and destination address, version and port. */
function swapEndpoints(rec: ParsedRecord): void {
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
}

function fixedDigitsRun(buf: Buffer, s: number, e: number): number {
  return e > s && e - s <= 15 ? fixedDigits(buf, s, e - s, e) : -1;
}

/** `connection <id> for A … to B`: A into src, B into dst. */
function connectionEndpoints(buf: Buffer, p: number, e: number, rec: ParsedRecord): string | null {
  if (rec.collectFields && after(buf, p, e, W.connection) >= 0)
    rec.addField(K_CONNECTION_ID, 0, tok.s, tok.e, KEY_STATIC);
  const forAt = after(buf, p, e, W.for);
  if (forAt < 0) return BAD_MESSAGE;
  const reason = endpoint(rec, 0, buf, tok.s, tok.e);
  if (reason !== null) return reason;
  return endpointAfter(rec, 1, buf, tok.e, e, W.to);
}

/** `access-list <acl> {permitted|denied|est-allowed} <proto> if/ip(port) -> if/ip(port) …`. */
function accessList(buf: Buffer, p: number, e: number, rec: ParsedRecord): string | null {
  const aclStart = skipSpaces(buf, findSpace(buf, p, e), e);
  const aclEnd = findSpace(buf, aclStart, e);
  const verbStart = skipSpaces(buf, aclEnd, e);
  const verbEnd = findSpace(buf, verbStart, e);
  const protoStart = skipSpaces(buf, verbEnd, e);
  const protoEnd = findSpace(buf, protoStart, e);
  const aStart = skipSpaces(buf, protoEnd, e);
  const aEnd = findSpace(buf, aStart, e);
  const arrowEnd = findSpace(buf, skipSpaces(buf, aEnd, e), e);
  const bStart = skipSpaces(buf, arrowEnd, e);
  const bEnd = findSpace(buf, bStart, e);
  if (aclEnd === aclStart || bEnd === bStart) return BAD_MESSAGE;
  rec.rule.set(aclStart, aclEnd);
  rec.action = actionOf(buf, verbStart, verbEnd);
  setProto(rec, buf, protoStart, protoEnd);
  const reason = slashParenEndpoint(rec, 0, buf, aStart, aEnd);
  return reason !== null ? reason : slashParenEndpoint(rec, 1, buf, bStart, bEnd);
}

/** `iface/ip(port)` into src (0) or dst (1). */
function slashParenEndpoint(
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
  if (!setIp(rec, which, buf, slash + 1, paren, false) || paren === slash + 1) return INVALID_IP;
  setPort(rec, which, buf, paren + 1, e - 1);
  return null;
}

/** The Deny family: proto among the first tokens, `src …/dst …` or `from …/to …`, optional ACL. */
function denied(buf: Buffer, p: number, e: number, rec: ParsedRecord): string | null {
  rec.action = ACTION_DENY;
  let t = p;
  for (let n = 0; n < 4 && t < e; n++) {
    const te = findSpace(buf, t, e);
    if (spanEqualsIgnoreCase(buf, t, te, W.protocol)) {
      const ns = skipSpaces(buf, te, e);
      setProto(rec, buf, ns, findSpace(buf, ns, e));
      break;
    }
    if (protoNumberOf(buf, t, te) >= 0 && te - t > 1) {
      setProto(rec, buf, t, te);
      break;
    }
    t = skipSpaces(buf, te, e);
  }
  const bySrc = after(buf, p, e, W.src) >= 0;
  const srcWord = bySrc ? W.src : W.from;
  const reason = endpointAfter(rec, 0, buf, p, e, srcWord);
  if (reason !== null) return reason;
  const dstAt = after(buf, tok.e, e, bySrc ? W.dst : W.to);
  if (dstAt >= 0) {
    const r = endpoint(rec, 1, buf, tok.s, tok.e);
    if (r !== null) return r;
  }
  if (after(buf, p, e, W.accessGroup) >= 0) {
    let s = tok.s;
    let te = tok.e;
    if (buf[s] === 34 && te - s >= 2 && buf[te - 1] === 34) {
      s++;
      te--;
    }
    if (te > s) rec.rule.set(s, te);
  }
  return null;
}
