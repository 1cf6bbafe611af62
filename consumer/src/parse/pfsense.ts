/**
 * pfSense / OPNsense `filterlog` (pf packet filter log, CSV): `rule,subrule,anchor,tracker,iface,
 * reason,action,dir,ipver,` then IPv4 `tos,ecn,ttl,id,offset,flags,protoid,proto,length,src,dst,`
 * or IPv6 `class,flowlabel,hoplimit,proto,protoid,length,src,dst,`, then TCP/UDP `sport,dport,
 * datalen[,tcpflags,seq,ack,window,urg,options]` (ICMP and others carry type-specific fields and
 * no ports). Layout per Netgate's "Raw Filter Log Format". pass -> allow, block -> deny; `rule` is
 * the tracker id (stable across rule reordering), else the rule number; `bytes` the packet length.
 */
import type { ParseContext } from './context';
import { isDigit } from './bytes';
import { actionOf, DST, setIp, setPort, setProto, SRC } from './normalize';
import { BAD_CSV, INVALID_IP, INVALID_PORT } from './reasons';
import { F_PFSENSE, KEY_STATIC, ParsedRecord, staticKey } from './record';
import { parseUint } from './bytes';

/** Column index of each value per IP version: [proto name, length, src, dst, sport]. */
const V4 = { proto: 16, length: 17, src: 18, dst: 19, sport: 20 };
const V6 = { proto: 12, length: 14, src: 15, dst: 16, sport: 17 };
const NAMES = [
  'rule',
  'subrule',
  'anchor',
  'tracker',
  'interface',
  'reason',
  'action',
  'direction',
  'ipversion',
];
const KEY_IDS = NAMES.map((n) => staticKey(`filterlog.${n}`));

/** Start/end of each of the first 24 CSV values, reused per line. */
const starts = new Int32Array(24);
const ends = new Int32Array(24);

/** Splits up to 24 values; returns how many. */
function split(buf: Uint8Array, s: number, e: number): number {
  let n = 0;
  let p = s;
  starts[0] = s;
  while (p < e && n < 23) {
    if (buf[p] === 44) {
      ends[n++] = p;
      starts[n] = p + 1;
    }
    p++;
  }
  let end = e;
  if (n === 23) {
    end = p;
    while (end < e && buf[end] !== 44) end++;
  }
  ends[n] = end;
  return n + 1;
}

/** Field 7 is `in`/`out` and field 8 is `4`/`6`: the filterlog CSV shape. */
export function isFilterlog(buf: Uint8Array, p: number, e: number): boolean {
  if (!isDigit(buf[p])) return false;
  let commas = 0;
  let i = p;
  const limit = e < p + 160 ? e : p + 160;
  while (i < limit && commas < 7) if (buf[i++] === 44) commas++;
  if (commas < 7) return false;
  const d = i;
  const isIn = buf[d] === 105 && buf[d + 1] === 110 && buf[d + 2] === 44;
  const isOut = buf[d] === 111 && buf[d + 1] === 117 && buf[d + 2] === 116 && buf[d + 3] === 44;
  if (!isIn && !isOut) return false;
  const v = d + (isIn ? 3 : 4);
  return v + 1 < e && (buf[v] === 52 || buf[v] === 54) && buf[v + 1] === 44;
}

/** Parses a filterlog CSV payload into `rec`. */
export function parsePfsense(buf: Buffer, s: number, e: number, rec: ParsedRecord, _ctx: ParseContext) {
  rec.format = F_PFSENSE;
  const n = split(buf, s, e);
  if (n < 9) return BAD_CSV;
  const version = ends[8] - starts[8] === 1 ? buf[starts[8]] - 48 : -1;
  const at = version === 4 ? V4 : version === 6 ? V6 : null;
  if (at === null || n <= at.dst) return BAD_CSV;
  if (rec.collectFields)
    for (let i = 0; i < 9; i++) rec.addField(KEY_IDS[i], 0, starts[i], ends[i], KEY_STATIC);
  rec.action = actionOf(buf, starts[6], ends[6]);
  if (ends[3] > starts[3]) rec.rule.set(starts[3], ends[3]);
  else if (ends[0] > starts[0]) rec.rule.set(starts[0], ends[0]);
  setProto(rec, buf, starts[at.proto], ends[at.proto]);
  const length = parseUint(buf, starts[at.length], ends[at.length]);
  if (length >= 0) rec.bytes = length;
  if (!setIp(rec, SRC, buf, starts[at.src], ends[at.src], false)) return INVALID_IP;
  if (!setIp(rec, DST, buf, starts[at.dst], ends[at.dst], false)) return INVALID_IP;
  if ((rec.protoNumber === 6 || rec.protoNumber === 17 || rec.protoNumber === 132) && n > at.sport + 1) {
    if (!setPort(rec, SRC, buf, starts[at.sport], ends[at.sport])) return INVALID_PORT;
    if (!setPort(rec, DST, buf, starts[at.sport + 1], ends[at.sport + 1])) return INVALID_PORT;
  }
  return null;
}
