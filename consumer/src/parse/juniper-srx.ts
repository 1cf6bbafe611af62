/**
 * Juniper SRX security flow logs (RT_FLOW), in both forms Junos sends:
 * - structured data (`set system syslog … structured-data`): RFC 5424 with MSGID
 *   `RT_FLOW_SESSION_CREATE|CLOSE|DENY` and `[junos@2636.… source-address="…" source-port="…"
 *   destination-address="…" nat-source-address="…" nat-source-port="…" protocol-id="6"
 *   policy-name="…" bytes-from-client="…" bytes-from-server="…" …]`;
 * - text: `RT_FLOW_SESSION_CREATE: session created 10.0.0.5/51234->198.51.100.7/443 0x0
 *   junos-https 203.0.113.5/23456->198.51.100.7/443 0x0 source rule r1 N/A N/A 6 allow-web trust
 *   untrust 12345 …`. Endpoints are `address/port` (IPv6 too); the first `->` pair is the session,
 *   the second its NAT translation; the protocol is the first number after them, the policy the
 *   token after it, and CLOSE lines carry `packets(bytes)` for client and server after the zones.
 * CREATE -> allow, CLOSE -> close, DENY -> deny.
 */
import type { ParseContext } from './context';
import { ascii, isDigit, parseUint, startsWith } from './bytes';
import { applyTarget, T } from './kv-apply';
import { KeywordTable } from './keywords';
import { DST, NAT_DST, NAT_SRC, setIp, setPort, SRC } from './normalize';
import { BAD_MESSAGE, INVALID_IP, INVALID_PORT } from './reasons';
import {
  ACTION_ALLOW,
  ACTION_CLOSE,
  ACTION_DENY,
  ACTION_UNKNOWN,
  F_JUNIPER,
  ParsedRecord,
  Span,
} from './record';
import { forEachSdParam } from './sd';

const SD_KEYS = new KeywordTable([
  ['source-address', T.src_ip],
  ['destination-address', T.dst_ip],
  ['source-port', T.src_port],
  ['destination-port', T.dst_port],
  ['nat-source-address', T.nat_src_ip],
  ['nat-destination-address', T.nat_dst_ip],
  ['nat-source-port', T.nat_src_port],
  ['nat-destination-port', T.nat_dst_port],
  ['protocol-id', T.proto],
  ['policy-name', T.rule],
  ['bytes-from-client', T.bytes],
  ['bytes-from-server', T.bytes],
  ['action', T.action],
  ['reason', T.message],
]);
const JUNOS_SD = ascii('junos@');
const RT_FLOW = ascii('RT_FLOW_SESSION_');
const CREATE = ascii('CREATE');
const CLOSE = ascii('CLOSE');
const DENY = ascii('DENY');

/** True when the header's structured data is a Junos element (`[junos@2636…`). */
export function isJunosSd(buf: Uint8Array, sdStart: number, sdEnd: number): boolean {
  return sdStart >= 0 && startsWith(buf, sdStart + 1, sdEnd, JUNOS_SD);
}

/** True when a text payload is an RT_FLOW session event. */
export function isRtFlowText(buf: Uint8Array, p: number, e: number): boolean {
  return startsWith(buf, p, e, RT_FLOW);
}

/** Action of an event name span `RT_FLOW_SESSION_<EVENT>…`. */
function eventAction(buf: Uint8Array, s: number, e: number): number {
  const p = s + RT_FLOW.length;
  if (startsWith(buf, p, e, CREATE)) return ACTION_ALLOW;
  if (startsWith(buf, p, e, CLOSE)) return ACTION_CLOSE;
  if (startsWith(buf, p, e, DENY)) return ACTION_DENY;
  return ACTION_UNKNOWN;
}

function onSdParam(
  rec: ParsedRecord,
  _is: number,
  _ie: number,
  ns: number,
  ne: number,
  vb: Buffer,
  vs: number,
  ve: number,
  sc: boolean,
) {
  const t = SD_KEYS.lookup(rec.src, ns, ne);
  // Junos writes "N/A" for absent translations and names.
  if (t < 0 || (ve - vs === 3 && vb[vs] === 78 && vb[vs + 1] === 47)) return null;
  return applyTarget(t, rec, vb, vs, ve, sc);
}

/** Parses the Junos structured data [sdStart, sdEnd) of an RFC 5424 line into `rec`. */
export function parseJuniperSd(buf: Buffer, sdStart: number, sdEnd: number, msgid: Span, rec: ParsedRecord) {
  rec.format = F_JUNIPER;
  const reason = forEachSdParam(buf, sdStart, sdEnd, rec, onSdParam);
  if (reason !== null) return reason;
  if (rec.action === ACTION_UNKNOWN && msgid.start >= 0 && startsWith(buf, msgid.start, msgid.end, RT_FLOW))
    rec.action = eventAction(buf, msgid.start, msgid.end);
  return null;
}

/** Splits `addr/port->addr/port` [s, e) into slots a and b; reason or null. */
function setPair(buf: Buffer, s: number, arrow: number, e: number, rec: ParsedRecord, a: number, b: number) {
  return setEndpoint(buf, s, arrow, rec, a) ?? setEndpoint(buf, arrow + 2, e, rec, b);
}

function setEndpoint(buf: Buffer, s: number, e: number, rec: ParsedRecord, which: number): string | null {
  let slash = e - 1;
  while (slash > s && buf[slash] !== 47) slash--;
  if (slash <= s) return BAD_MESSAGE;
  if (!setIp(rec, which, buf, s, slash, false)) return INVALID_IP;
  return setPort(rec, which, buf, slash + 1, e) ? null : INVALID_PORT;
}

/** Position of `->` inside the token [s, e), or -1. */
function arrowIn(buf: Uint8Array, s: number, e: number): number {
  for (let i = s; i + 1 < e; i++) if (buf[i] === 45 && buf[i + 1] === 62) return i;
  return -1;
}

/** Parses the text form `RT_FLOW_SESSION_…: session … a/p->b/p …` into `rec`. */
export function parseJuniperText(buf: Buffer, s: number, e: number, rec: ParsedRecord, _ctx: ParseContext) {
  rec.format = F_JUNIPER;
  if (!isRtFlowText(buf, s, e)) return BAD_MESSAGE;
  let p = s;
  while (p < e && buf[p] !== 58 && buf[p] !== 32) p++;
  rec.action = eventAction(buf, s, p);
  rec.message.set(s, p);
  let pairs = 0;
  let afterPairs = -1;
  while (p < e) {
    while (p < e && buf[p] === 32) p++;
    const ts = p;
    while (p < e && buf[p] !== 32) p++;
    const arrow = arrowIn(buf, ts, p);
    if (arrow < 0) {
      if (pairs > 0) {
        afterPairs = ts;
        if (rec.action === ACTION_DENY || pairs === 2) break;
      }
      continue;
    }
    const reason =
      pairs === 0
        ? setPair(buf, ts, arrow, p, rec, SRC, DST)
        : setPair(buf, ts, arrow, p, rec, NAT_SRC, NAT_DST);
    if (reason !== null) return reason;
    if (++pairs === 2) afterPairs = -1;
  }
  if (pairs === 0) return BAD_MESSAGE;
  if (afterPairs >= 0) readTail(buf, afterPairs, e, rec);
  return null;
}

/** After the endpoints: protocol number, then policy, then (CLOSE) `pkts(bytes)` for both sides. */
function readTail(buf: Buffer, p: number, e: number, rec: ParsedRecord): void {
  let stage = 0;
  let counters = rec.action === ACTION_CLOSE ? 2 : 0;
  while (p < e && (stage < 2 || counters > 0)) {
    while (p < e && buf[p] === 32) p++;
    const ts = p;
    while (p < e && buf[p] !== 32) p++;
    if (stage === 0) {
      let de = ts;
      while (de < p && isDigit(buf[de])) de++;
      if (de === ts || (de < p && buf[de] !== 40)) continue;
      applyTarget(T.proto, rec, buf, ts, de, false);
      stage = 1;
    } else if (stage === 1) {
      if (p > ts) rec.rule.set(ts, p);
      stage = 2;
    } else {
      const open = ts + indexOfParen(buf, ts, p);
      if (open < ts || buf[p - 1] !== 41) continue;
      const n = parseUint(buf, open + 1, p - 1);
      if (n < 0 || parseUint(buf, ts, open) < 0) continue;
      rec.bytes = rec.bytes < 0 ? n : rec.bytes + n;
      counters--;
    }
  }
}

function indexOfParen(buf: Uint8Array, s: number, e: number): number {
  for (let i = s; i < e; i++) if (buf[i] === 40) return i - s;
  return -1;
}
