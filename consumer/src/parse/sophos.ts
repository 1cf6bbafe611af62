/**
 * Sophos Firewall (SFOS / XG) syslog: `key=value` pairs, values bare or double-quoted. Two
 * generations of key names are read: SFOS up to v19 (`date= time= timezone= device_name= log_id=
 * status= priority= sent_bytes= recv_bytes= tran_src_ip= tran_src_port= tran_dst_ip=
 * tran_dst_port=`) and v19.5+ (`timestamp= severity= bytes_sent= bytes_received= src_trans_ip=
 * src_trans_port= dst_trans_ip= dst_trans_port=`). The action comes from `log_subtype`
 * (Allowed/Denied/Dropped) or `status`; the clock from `timestamp`, else `date`+`time`.
 */
import type { ParseContext } from './context';
import { ascii, startsWith } from './bytes';
import { applyTarget, T } from './kv-apply';
import { KvDialect, scanKv } from './kv-scan';
import { KeywordTable } from './keywords';
import { BAD_KV, BAD_TIMESTAMP } from './reasons';
import { F_SOPHOS, ParsedRecord } from './record';
import { dateTimeMs, isoValueMs } from './vendor-clock';

const C_DATE = 100;
const C_TIME = 101;
const C_ZONE = 102;
const C_STAMP = 103;
const KEYS = new KeywordTable([
  ['src_ip', T.src_ip],
  ['dst_ip', T.dst_ip],
  ['src_port', T.src_port],
  ['dst_port', T.dst_port],
  ['tran_src_ip', T.nat_src_ip],
  ['src_trans_ip', T.nat_src_ip],
  ['tran_src_port', T.nat_src_port],
  ['src_trans_port', T.nat_src_port],
  ['tran_dst_ip', T.nat_dst_ip],
  ['dst_trans_ip', T.nat_dst_ip],
  ['tran_dst_port', T.nat_dst_port],
  ['dst_trans_port', T.nat_dst_port],
  ['protocol', T.proto],
  ['log_subtype', T.action],
  ['status', T.action],
  ['sent_bytes', T.bytes],
  ['recv_bytes', T.bytes],
  ['bytes_sent', T.bytes],
  ['bytes_received', T.bytes],
  ['fw_rule_id', T.rule],
  ['device_name', T.device],
  ['message', T.message],
  ['priority', T.severity],
  ['severity', T.severity],
  ['date', C_DATE],
  ['time', C_TIME],
  ['timezone', C_ZONE],
  ['timestamp', C_STAMP],
]);
const DIALECT: KvDialect = { pairSep: 32, kvSep: 61, quote: 34, lenient: false };
const clock = { ds: -1, de: -1, ts: -1, te: -1, zs: -1, ze: -1, ss: -1, se: -1 };

function setClock(part: 'd' | 't' | 'z' | 's', s: number, e: number): void {
  if (part === 'd') {
    clock.ds = s;
    clock.de = e;
  } else if (part === 't') {
    clock.ts = s;
    clock.te = e;
  } else if (part === 'z') {
    clock.zs = s;
    clock.ze = e;
  } else {
    clock.ss = s;
    clock.se = e;
  }
}

function onPair(rec: ParsedRecord, ks: number, ke: number, vb: Buffer, vs: number, ve: number, sc: boolean) {
  const t = KEYS.lookup(rec.src, ks, ke);
  if (t < 0) return null;
  if (t < 100) return applyTarget(t, rec, vb, vs, ve, sc);
  // Clock values are read later from the source line; an escaped one is never a clock.
  if (sc) vs = ve = -2;
  if (t === C_DATE) setClock('d', vs, ve);
  else if (t === C_TIME) setClock('t', vs, ve);
  else if (t === C_ZONE) setClock('z', vs, ve);
  else setClock('s', vs, ve);
  return null;
}

const DEVICE_NAME = ascii('device_name=');
const LOG_ID = ascii('log_id=');

/**
 * True when a kv payload is Sophos: SFOS names its device `device_name=` and events `log_id=`.
 * `firstUnderscore`: a position no `_` of [p, e) comes before (the caller's UnderscoreCursor), so a
 * FortiGate line, which has none, costs nothing here instead of one compare per byte.
 */
export function isSophos(buf: Uint8Array, p: number, e: number, firstUnderscore = p): boolean {
  // A key starting in [p, limit) at a word start. Anchored on the '_' both keys hold (offset 6 and 3).
  const limit = e < p + 240 ? e : p + 240;
  const scanEnd = e < limit + 6 ? e : limit + 6;
  for (let u = firstUnderscore > p + 3 ? firstUnderscore : p + 3; u < scanEnd; u++) {
    if (buf[u] !== 95) continue;
    if (keyAt(buf, u - 6, p, limit, e, DEVICE_NAME) || keyAt(buf, u - 3, p, limit, e, LOG_ID)) return true;
  }
  return false;
}

/** `key` starts at i, a word start inside [p, limit). */
function keyAt(buf: Uint8Array, i: number, p: number, limit: number, e: number, key: Uint8Array): boolean {
  return i >= p && i < limit && (i === p || buf[i - 1] === 32) && startsWith(buf, i, e, key);
}

/** Parses a Sophos SFOS key=value payload into `rec`. */
export function parseSophos(buf: Buffer, s: number, e: number, rec: ParsedRecord, ctx: ParseContext) {
  rec.format = F_SOPHOS;
  clock.ds = clock.ts = clock.zs = clock.ss = -1;
  const pairs = scanKv(buf, s, e, rec, DIALECT, onPair);
  if (pairs < 0) return scanKv.reason;
  if (pairs === 0) return BAD_KV;
  if (clock.ss !== -1) {
    rec.timestamp = clock.ss < 0 ? NaN : isoValueMs(buf, clock.ss, clock.se, ctx.tz);
    return rec.timestamp === rec.timestamp ? null : BAD_TIMESTAMP;
  }
  if (clock.ds === -1 && clock.ts === -1) return null;
  if (clock.ds < 0 || clock.ts < 0) return BAD_TIMESTAMP;
  rec.timestamp = dateTimeMs(buf, clock.ds, clock.de, clock.ts, clock.te, clock.zs, clock.ze, ctx.tz);
  return rec.timestamp === rec.timestamp ? null : BAD_TIMESTAMP;
}
