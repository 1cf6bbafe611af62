/**
 * Cisco ASA / FTD / PIX syslog messages `%ASA-<sev>-<id>: <text>` (Cisco "Syslog Messages" guide).
 * Connection Built/Teardown (302013-302016, with the mapped `(ip/port)` of Built as NAT), NAT
 * translations (305011/305012), the Deny family (106001, 106006, 106007, 106010,
 * 106015, 106021, 106023, 313001, 710003) and access-list hits (106100) yield addresses, ports,
 * protocol, action and rule; any other id keeps severity, id and text only. ASA payloads carry no
 * clock: the time comes from the syslog header, or the line is clock-less.
 */
import type { ParseContext } from './context';
import {
  ascii,
  containsIgnoreCase,
  findSpace,
  fixedDigits,
  parseUint,
  skipSpaces,
  spanEquals,
  spanEqualsIgnoreCase,
} from './bytes';
import {
  after,
  endpoint,
  endpointAfter,
  mappedAfter,
  indexWords,
  slashParenEndpoint,
  swapEndpoints,
  Word,
} from './cisco-asa-tokens';
import { actionOf, NAT_DST, NAT_SRC, protoNumberOf, setProto } from './normalize';
import { BAD_MESSAGE, UNKNOWN_FORMAT } from './reasons';
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
const OUTBOUND = ascii('outbound');
const PROTOCOL = ascii('protocol');
const RESET = ascii('reset');

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
    case 305011:
    case 305012:
      return translation(buf, body, e, rec, id === 305011);
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

/** `Built {inbound|outbound} {TCP|UDP} connection <id> for A (…) to B (…)`. */
function built(buf: Buffer, p: number, e: number, rec: ParsedRecord): string | null {
  const dirStart = skipSpaces(buf, findSpace(buf, p, e), e);
  const dirEnd = findSpace(buf, dirStart, e);
  const protoStart = skipSpaces(buf, dirEnd, e);
  setProto(rec, buf, protoStart, findSpace(buf, protoStart, e));
  rec.action = ACTION_ALLOW;
  const reason = connectionEndpoints(buf, protoStart, e, rec);
  if (reason !== null) return reason;
  const forS = after.s[Word.For];
  const toS = after.s[Word.To];
  const nat =
    mappedAfter(rec, NAT_SRC, buf, forS, after.e[Word.For], after.e[Word.For], e) ??
    mappedAfter(rec, NAT_DST, buf, toS, after.e[Word.To], after.e[Word.To], e);
  if (nat !== null) return nat;
  // Outbound: the `for` side is the responder, so the initiator (source) is the `to` side.
  if (spanEquals(buf, dirStart, dirEnd, OUTBOUND)) swapEndpoints(rec);
  return null;
}

/** `Teardown {TCP|UDP} connection <id> for A to B duration h:mm:ss bytes N [reason]`. */
function teardown(buf: Buffer, p: number, e: number, rec: ParsedRecord): string | null {
  const protoStart = skipSpaces(buf, findSpace(buf, p, e), e);
  setProto(rec, buf, protoStart, findSpace(buf, protoStart, e));
  const reason = connectionEndpoints(buf, protoStart, e, rec);
  if (reason !== null) return reason;
  rec.action = ACTION_CLOSE;
  if (rec.collectFields && after.s[Word.Duration] >= 0) {
    rec.addField(K_DURATION, 0, after.s[Word.Duration], after.e[Word.Duration], KEY_STATIC);
  }
  const bytesAt = after.s[Word.Bytes];
  if (bytesAt >= 0) {
    const n = parseUint(buf, bytesAt, after.e[Word.Bytes]);
    if (n >= 0) rec.bytes = n;
    const why = skipSpaces(buf, after.e[Word.Bytes], e);
    if (why < e) {
      if (containsIgnoreCase(buf, why, e, RESET)) rec.action = ACTION_RESET;
      if (rec.collectFields) rec.addField(K_REASON, 0, why, e, KEY_STATIC);
    }
  }
  // Teardowns do not say who initiated; the side with the lower port is taken as the service.
  if (rec.srcPort >= 0 && rec.dstPort >= 0 && rec.srcPort < rec.dstPort) swapEndpoints(rec);
  return null;
}

/**
 * `{Built|Teardown} {dynamic|static} {TCP|UDP|ICMP} translation from if:real/port to if:mapped/port`
 * (305011/305012): the PAT/NAT binding itself, the record a CGNAT-style legal query needs.
 */
function translation(buf: Buffer, p: number, e: number, rec: ParsedRecord, built: boolean): string | null {
  const kindEnd = findSpace(buf, skipSpaces(buf, findSpace(buf, p, e), e), e);
  const protoStart = skipSpaces(buf, kindEnd, e);
  setProto(rec, buf, protoStart, findSpace(buf, protoStart, e));
  indexWords(buf, p, e);
  const reason = endpointAfter(rec, 0, buf, Word.From) ?? endpointAfter(rec, NAT_SRC, buf, Word.To);
  if (reason !== null) return reason;
  rec.action = built ? ACTION_ALLOW : ACTION_CLOSE;
  if (rec.collectFields && after.s[Word.Duration] >= 0)
    rec.addField(K_DURATION, 0, after.s[Word.Duration], after.e[Word.Duration], KEY_STATIC);
  return null;
}

/** `connection <id> for A … to B`: A into src, B into dst. */
function connectionEndpoints(buf: Buffer, p: number, e: number, rec: ParsedRecord): string | null {
  indexWords(buf, p, e);
  if (rec.collectFields && after.s[Word.Connection] >= 0) {
    rec.addField(K_CONNECTION_ID, 0, after.s[Word.Connection], after.e[Word.Connection], KEY_STATIC);
  }
  const reason = endpointAfter(rec, 0, buf, Word.For);
  return reason !== null ? reason : endpointAfter(rec, 1, buf, Word.To);
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

/** The Deny family: proto among the first tokens, `src …/dst …` or `from …/to …`, optional ACL. */
function denied(buf: Buffer, p: number, e: number, rec: ParsedRecord): string | null {
  rec.action = ACTION_DENY;
  let t = p;
  for (let n = 0; n < 4 && t < e; n++) {
    const te = findSpace(buf, t, e);
    if (spanEqualsIgnoreCase(buf, t, te, PROTOCOL)) {
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
  indexWords(buf, p, e);
  const bySrc = after.s[Word.Src] >= 0;
  const reason = endpointAfter(rec, 0, buf, bySrc ? Word.Src : Word.From);
  if (reason !== null) return reason;
  const dst = bySrc ? Word.Dst : Word.To;
  if (after.s[dst] >= 0) {
    const r = endpoint(rec, 1, buf, after.s[dst], after.e[dst]);
    if (r !== null) return r;
  }
  let s = after.s[Word.AccessGroup];
  if (s >= 0) {
    let te = after.e[Word.AccessGroup];
    if (buf[s] === 34 && te - s >= 2 && buf[te - 1] === 34) {
      s++;
      te--;
    }
    if (te > s) rec.rule.set(s, te);
  }
  return null;
}
