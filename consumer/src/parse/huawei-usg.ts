/**
 * Huawei USG / HiSecEngine firewall logs through the information center:
 * `%%01SEC/4/POLICYDENY(l)[0]:vsys=public, protocol=6, source-ip=…, source-port=…,
 * destination-ip=…, destination-port=…, time=…, source-zone=…, rule-name=….` and the session
 * log form `%%01SECLOG/6/SESSION_TEARDOWN(l):IPVer=4,Protocol=tcp,SourceIP=…,SourceNatIP=…,…`.
 * The tag is `%%<version><module>/<severity>/<brief>(<type>)[<seq>]:`; pairs are `key=value`
 * separated by commas, the last value ends with a period. Keys are matched without case. The
 * action comes from the brief (…DENY, …PERMIT, …TEARDOWN) unless an `action=` pair says otherwise.
 */
import type { ParseContext } from './context';
import { ascii, containsIgnoreCase, isDigit } from './bytes';
import { applyTarget, T } from './kv-apply';
import { KvDialect, scanKv } from './kv-scan';
import { KeywordTable } from './keywords';
import { BAD_MESSAGE } from './reasons';
import { ACTION_ALLOW, ACTION_CLOSE, ACTION_DENY, ACTION_UNKNOWN, F_HUAWEI, ParsedRecord } from './record';

const KEYS = new KeywordTable(
  [
    ['source-ip', T.src_ip],
    ['sourceip', T.src_ip],
    ['destination-ip', T.dst_ip],
    ['destinationip', T.dst_ip],
    ['source-port', T.src_port],
    ['sourceport', T.src_port],
    ['destination-port', T.dst_port],
    ['destinationport', T.dst_port],
    ['source-nat-ip', T.nat_src_ip],
    ['sourcenatip', T.nat_src_ip],
    ['source-nat-port', T.nat_src_port],
    ['sourcenatport', T.nat_src_port],
    ['destination-nat-ip', T.nat_dst_ip],
    ['destinationnatip', T.nat_dst_ip],
    ['destination-nat-port', T.nat_dst_port],
    ['destinationnatport', T.nat_dst_port],
    ['protocol', T.proto],
    ['action', T.action],
    ['rule-name', T.rule],
    ['policyname', T.rule],
    ['policy-name', T.rule],
    ['sendbytes', T.bytes],
    ['rcvbytes', T.bytes],
  ].map(([k, v]) => [k as string, v as number] as [string, number]),
  true,
);
const DIALECT: KvDialect = { pairSep: 44, kvSep: 61, quote: 0, lenient: true };
const BRIEF_ACTIONS: Array<[Buffer, number]> = [
  [ascii('deny'), ACTION_DENY],
  [ascii('permit'), ACTION_ALLOW],
  [ascii('teardown'), ACTION_CLOSE],
  [ascii('session_tear'), ACTION_CLOSE],
];

function onPair(rec: ParsedRecord, ks: number, ke: number, vb: Buffer, vs: number, ve: number, sc: boolean) {
  const t = KEYS.lookup(rec.src, ks, ke);
  return t < 0 ? null : applyTarget(t, rec, vb, vs, ve, sc);
}

/** `%%` + two version digits + a module name: the Huawei VRP information-center tag. */
export function isHuaweiTag(buf: Uint8Array, p: number, e: number): boolean {
  return p + 6 < e && buf[p] === 37 && buf[p + 1] === 37 && isDigit(buf[p + 2]) && isDigit(buf[p + 3]);
}

/** Parses a Huawei `%%…` payload into `rec`. */
export function parseHuaweiUsg(buf: Buffer, s: number, e: number, rec: ParsedRecord, _ctx: ParseContext) {
  rec.format = F_HUAWEI;
  if (!isHuaweiTag(buf, s, e)) return BAD_MESSAGE;
  // module/severity/brief up to `(`, `[` or `:`.
  const tagStart = s + 4;
  let p = tagStart;
  while (p < e && buf[p] !== 40 && buf[p] !== 91 && buf[p] !== 58) p++;
  const tagEnd = p;
  const slash = tagStart + indexOfSlash(buf, tagStart, tagEnd);
  if (slash < tagStart || slash + 2 >= tagEnd || !isDigit(buf[slash + 1]) || buf[slash + 2] !== 47)
    return BAD_MESSAGE;
  rec.severity = buf[slash + 1] - 48 <= 7 ? buf[slash + 1] - 48 : -1;
  rec.message.set(tagStart, tagEnd);
  while (p < e && buf[p] !== 58) p++;
  if (p >= e) return BAD_MESSAGE;
  let end = e;
  while (end > p && (buf[end - 1] === 32 || buf[end - 1] === 46)) end--;
  const pairs = scanKv(buf, p + 1, end, rec, DIALECT, onPair);
  if (pairs < 0) return scanKv.reason;
  if (rec.action === ACTION_UNKNOWN) {
    for (const [word, action] of BRIEF_ACTIONS) {
      if (containsIgnoreCase(buf, slash + 3, tagEnd, word)) {
        rec.action = action;
        break;
      }
    }
  }
  return null;
}

function indexOfSlash(buf: Uint8Array, s: number, e: number): number {
  for (let i = s; i < e; i++) if (buf[i] === 47) return i - s;
  return -1;
}
