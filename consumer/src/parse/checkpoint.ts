/**
 * Check Point (R80/R81 Log Exporter, syslog format): `[action:"Accept"; flags:"…"; ifdir:"outbound";
 * origin:"10.1.1.1"; time:"1705314225"; src:"10.0.0.5"; s_port:"51234"; dst:"198.51.100.7";
 * service:"443"; proto:"6"; rule_name:"web"; xlatesrc:"203.0.113.5"; xlatesport:"23456"; …]`, usually
 * where RFC 5424 expects structured data (the syslog header hands it over as the payload). Pairs
 * are `key:"value"` separated by `;`; brackets are optional. `xlatesrc`/`xlatedst` of 0.0.0.0 and
 * ports of 0 mean "not translated". `time` is epoch seconds (UTC).
 */
import type { ParseContext } from './context';
import { applyTarget, T } from './kv-apply';
import { KvDialect, scanKv } from './kv-scan';
import { KeywordTable } from './keywords';
import { BAD_KV, BAD_TIMESTAMP } from './reasons';
import { F_CHECKPOINT, ParsedRecord } from './record';
import { parseEpochDigits } from './time';

const C_TIME = 100;
const KEYS = new KeywordTable([
  ['src', T.src_ip],
  ['dst', T.dst_ip],
  ['s_port', T.src_port],
  ['service', T.dst_port],
  ['xlatesrc', T.nat_src_ip],
  ['xlatedst', T.nat_dst_ip],
  ['xlatesport', T.nat_src_port],
  ['xlatedport', T.nat_dst_port],
  ['proto', T.proto],
  ['action', T.action],
  ['rule_name', T.rule],
  ['origin', T.device],
  ['severity', T.severity],
  ['msg', T.message],
  ['client_outbound_bytes', T.bytes],
  ['server_outbound_bytes', T.bytes],
  ['time', C_TIME],
]);
const DIALECT: KvDialect = { pairSep: 59, kvSep: 58, quote: 34, lenient: false };
const clock = { s: -1, e: -1 };

function onPair(rec: ParsedRecord, ks: number, ke: number, vb: Buffer, vs: number, ve: number, sc: boolean) {
  const t = KEYS.lookup(rec.src, ks, ke);
  if (t < 0) return null;
  if (t < 100) return applyTarget(t, rec, vb, vs, ve, sc);
  clock.s = sc ? -2 : vs;
  clock.e = ve;
  return null;
}

function isKeyByte(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 45;
}

/** `[name:"` or `name:"` at `p`: the Check Point key:"value" form. */
export function isCheckPoint(buf: Uint8Array, p: number, e: number): boolean {
  let i = p < e && buf[p] === 91 ? p + 1 : p;
  const ks = i;
  while (i < e && i - ks < 40 && isKeyByte(buf[i])) i++;
  return i > ks && i + 1 < e && buf[i] === 58 && buf[i + 1] === 34;
}

/** Parses a Check Point key:"value" payload into `rec`. */
export function parseCheckPoint(buf: Buffer, s: number, e: number, rec: ParsedRecord, _ctx: ParseContext) {
  rec.format = F_CHECKPOINT;
  clock.s = -1;
  let end = e;
  while (end > s && buf[end - 1] === 32) end--;
  if (s < end && buf[s] === 91) {
    if (buf[end - 1] !== 93) return BAD_KV;
    s++;
    end--;
  }
  const pairs = scanKv(buf, s, end, rec, DIALECT, onPair);
  if (pairs < 0) return scanKv.reason;
  if (pairs === 0) return BAD_KV;
  if (clock.s === -1) return null;
  rec.timestamp = clock.s < 0 ? NaN : parseEpochDigits(buf, clock.s, clock.e);
  return rec.timestamp === rec.timestamp ? null : BAD_TIMESTAMP;
}
