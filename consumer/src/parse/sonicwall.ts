/**
 * SonicWall SonicOS syslog ("default" format): `id=firewall sn=<serial> time="2024-01-15 10:23:45
 * UTC" fw=<wan ip> pri=6 c=… m=537 msg="Connection Closed" … src=10.0.0.5:51234:X0 dst=198.51.100.7
 * :443:X1 proto=tcp/https sent=… rcvd=… rule="…" natSrc=203.0.113.5:23456 natDst=…`. Endpoints are
 * `address:port:interface[:name]`; IPv6 endpoints are read from `srcV6=`/`dstV6=` (address only)
 * or a bracketed `[addr]:port` form. The action is `fw_action` when it says forward/drop, else
 * derived from the message (opened, closed, dropped, blocked).
 */
import type { ParseContext } from './context';
import { ascii, containsIgnoreCase, indexOfByte, startsWith } from './bytes';
import { applyTarget, T } from './kv-apply';
import { KvDialect, scanKv } from './kv-scan';
import { KeywordTable } from './keywords';
import { DST, NAT_DST, NAT_SRC, setIp, setPort, SRC, actionOf } from './normalize';
import { BAD_KV, BAD_TIMESTAMP, INVALID_IP, INVALID_PORT } from './reasons';
import {
  ACTION_ALLOW,
  ACTION_CLOSE,
  ACTION_DENY,
  ACTION_DROP,
  ACTION_UNKNOWN,
  F_SONICWALL,
  ParsedRecord,
} from './record';
import { isoValueMs } from './vendor-clock';

const E_SRC = 100;
const E_DST = 101;
const E_NAT_SRC = 102;
const E_NAT_DST = 103;
const C_TIME = 104;
const C_PROTO = 105;
const C_FW_ACTION = 106;
const KEYS = new KeywordTable([
  ['src', E_SRC],
  ['dst', E_DST],
  ['natSrc', E_NAT_SRC],
  ['natDst', E_NAT_DST],
  ['srcV6', T.src_ip],
  ['dstV6', T.dst_ip],
  ['time', C_TIME],
  ['proto', C_PROTO],
  ['fw_action', C_FW_ACTION],
  ['sent', T.bytes],
  ['rcvd', T.bytes],
  ['pri', T.severity],
  ['sn', T.device],
  ['rule', T.rule],
  ['msg', T.message],
]);
const DIALECT: KvDialect = { pairSep: 32, kvSep: 61, quote: 34, quote2: 39, lenient: false };
const state = { ts: -1, te: -1, fwAction: ACTION_UNKNOWN };
const FORWARD = ascii('forward');
const MESSAGE_ACTIONS: Array<[Buffer, number]> = [
  [ascii('opened'), ACTION_ALLOW],
  [ascii('closed'), ACTION_CLOSE],
  [ascii('dropped'), ACTION_DROP],
  [ascii('blocked'), ACTION_DENY],
  [ascii('denied'), ACTION_DENY],
];

/** `addr:port[:iface[:name]]` or `[v6]:port…` into slot `which` (SRC/DST/NAT_SRC/NAT_DST). */
function setEndpoint(rec: ParsedRecord, which: number, b: Buffer, vs: number, ve: number, sc: boolean) {
  let as = vs;
  let ae: number;
  let ps: number;
  if (vs < ve && b[vs] === 91) {
    as = vs + 1;
    ae = indexOfByte(b, 93, as, ve);
    if (ae < 0) return INVALID_IP;
    ps = ae + 1 < ve && b[ae + 1] === 58 ? ae + 2 : -1;
  } else {
    ae = indexOfByte(b, 58, vs, ve);
    if (ae < 0) ae = ve;
    ps = ae < ve ? ae + 1 : -1;
  }
  if (!setIp(rec, which, b, as, ae, sc)) return INVALID_IP;
  if (ps < 0) return null;
  let pe = indexOfByte(b, 58, ps, ve);
  if (pe < 0) pe = ve;
  return setPort(rec, which, b, ps, pe) ? null : INVALID_PORT;
}

function onPair(rec: ParsedRecord, ks: number, ke: number, vb: Buffer, vs: number, ve: number, sc: boolean) {
  const t = KEYS.lookup(rec.src, ks, ke);
  if (t < 0) return null;
  if (t < 100) return applyTarget(t, rec, vb, vs, ve, sc);
  switch (t) {
    case E_SRC:
      return setEndpoint(rec, SRC, vb, vs, ve, sc);
    case E_DST:
      return setEndpoint(rec, DST, vb, vs, ve, sc);
    case E_NAT_SRC:
      return setEndpoint(rec, NAT_SRC, vb, vs, ve, sc);
    case E_NAT_DST:
      return setEndpoint(rec, NAT_DST, vb, vs, ve, sc);
    case C_TIME:
      state.ts = sc ? -2 : vs;
      state.te = ve;
      return null;
    case C_PROTO: {
      const slash = indexOfByte(vb, 47, vs, ve);
      return applyTarget(T.proto, rec, vb, vs, slash < 0 ? ve : slash, sc);
    }
    default:
      state.fwAction = startsWith(vb, vs, ve, FORWARD) ? ACTION_ALLOW : actionOf(vb, vs, ve);
      return null;
  }
}

const ID_FIREWALL = ascii('id=');
const SN = ascii(' sn=');

/** SonicOS lines start with `id=<name> sn=<serial>`. */
export function isSonicWall(buf: Uint8Array, p: number, e: number): boolean {
  if (!startsWith(buf, p, e, ID_FIREWALL)) return false;
  let i = p + 3;
  while (i < e && i - p < 40 && buf[i] !== 32) i++;
  return startsWith(buf, i, e, SN);
}

/** Parses a SonicOS key=value payload into `rec`. */
export function parseSonicWall(buf: Buffer, s: number, e: number, rec: ParsedRecord, ctx: ParseContext) {
  rec.format = F_SONICWALL;
  state.ts = -1;
  state.fwAction = ACTION_UNKNOWN;
  const pairs = scanKv(buf, s, e, rec, DIALECT, onPair);
  if (pairs < 0) return scanKv.reason;
  if (pairs === 0) return BAD_KV;
  rec.action = state.fwAction !== ACTION_UNKNOWN ? state.fwAction : messageAction(rec);
  if (state.ts === -1) return null;
  rec.timestamp = state.ts < 0 ? NaN : isoValueMs(buf, state.ts, state.te, ctx.tz);
  return rec.timestamp === rec.timestamp ? null : BAD_TIMESTAMP;
}

function messageAction(rec: ParsedRecord): number {
  const m = rec.message;
  if (m.start < 0) return ACTION_UNKNOWN;
  const b = rec.spanBuffer(m);
  for (const [word, action] of MESSAGE_ACTIONS)
    if (containsIgnoreCase(b, m.start, m.end, word)) return action;
  return ACTION_UNKNOWN;
}
