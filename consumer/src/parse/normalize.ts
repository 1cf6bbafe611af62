/**
 * Normalisation shared by all vendors: action words -> the seven actions, protocol names/numbers
 * -> lower-case names, severity words/digits -> syslog 0..7, and validated setters for addresses
 * and ports. Lookups go through KeywordTables over the source bytes (no strings on the hot path).
 */
import { lowerAscii, parseUint } from './bytes';
import { addressEnd, ipv4Number, isIpv6 } from './ip';
import { KeywordTable } from './keywords';
import {
  ACTION_ALERT,
  ACTION_ALLOW,
  ACTION_CLOSE,
  ACTION_DENY,
  ACTION_DROP,
  ACTION_RESET,
  ACTION_UNKNOWN,
  ParsedRecord,
} from './record';

const ACTION_WORDS: Array<[string, number]> = [
  ...words(
    ACTION_ALLOW,
    'accept accepted allow allowed pass passthrough permit permitted start built continue',
  ),
  ...words(ACTION_ALLOW, 'override override-lockout est-allowed success'),
  ...words(
    ACTION_DENY,
    'deny denied block blocked reject rejected refused block-url block-ip block-continue',
  ),
  ...words(ACTION_DENY, 'block-override blacklist prevented'),
  ...words(ACTION_DROP, 'drop dropped drop-icmp discard discarded random-drop sinkhole'),
  ...words(ACTION_RESET, 'reset reset-client reset-server reset-both server-rst client-rst rst'),
  ...words(ACTION_CLOSE, 'close closed timeout teardown end ip-conn'),
  ...words(ACTION_ALERT, 'alert alerted detected monitored log audit syncookie-sent'),
];

function words(value: number, list: string): Array<[string, number]> {
  return list.split(' ').map((w) => [w, value] as [string, number]);
}

const ACTIONS = new KeywordTable(ACTION_WORDS, true);

/** Normalised action of a vendor action word (any case); unknown words give ACTION_UNKNOWN. */
export function actionOf(buf: Uint8Array, s: number, e: number): number {
  const a = ACTIONS.lookup(buf, s, e);
  return a < 0 ? ACTION_UNKNOWN : a;
}

/** IANA protocol numbers with the lower-case names the proto column uses for them. */
const PROTOCOLS: Array<[string, number]> = [
  ['icmp', 1],
  ['igmp', 2],
  ['ipip', 4],
  ['tcp', 6],
  ['udp', 17],
  ['ipv6', 41],
  ['gre', 47],
  ['esp', 50],
  ['ah', 51],
  ['icmpv6', 58],
  ['ospf', 89],
  ['pim', 103],
  ['vrrp', 112],
  ['l2tp', 115],
  ['sctp', 132],
];
const PROTO_ALIASES: Array<[string, number]> = [
  ['ipv6-icmp', 58],
  ['icmp6', 58],
  ['ipencap', 4],
  ['ospfigp', 89],
];
const PROTO_NAMES = new KeywordTable([...PROTOCOLS, ...PROTO_ALIASES], true);
/** Name written for each protocol number: the IANA keyword when common, else the decimal number. */
export const PROTO_BY_NUMBER: string[] = [];
for (let n = 0; n < 256; n++) PROTO_BY_NUMBER.push(String(n));
for (const [name, n] of PROTOCOLS) PROTO_BY_NUMBER[n] = name;

/** IANA number of a known protocol name or a decimal 0..255, else -1. */
export function protoNumberOf(buf: Uint8Array, s: number, e: number): number {
  const n = parseUint(buf, s, e);
  if (n >= 0) return n > 255 ? -1 : n;
  return PROTO_NAMES.lookup(buf, s, e);
}

/** Sets proto from a protocol name or number span; unknown names are kept lower-cased. */
export function setProto(rec: ParsedRecord, buf: Uint8Array, s: number, e: number): void {
  if (e <= s) return;
  const n = parseUint(buf, s, e);
  if (n >= 0) {
    if (n > 255) return;
    rec.protoNumber = n;
    rec.protoName = PROTO_BY_NUMBER[n];
    return;
  }
  const known = PROTO_NAMES.lookup(buf, s, e);
  if (known >= 0) {
    rec.protoNumber = known;
    rec.protoName = PROTO_BY_NUMBER[known];
    return;
  }
  if (e - s > 32) return;
  // Rare path (unknown protocol word): lower-case ASCII only so other bytes survive unchanged.
  let name = '';
  for (let i = s; i < e; i++) name += String.fromCharCode(lowerAscii(buf[i]));
  rec.protoNumber = -1;
  rec.protoName = name;
}

const SEVERITY_WORDS = new KeywordTable(
  [
    ...words(0, 'emergency emerg panic'),
    ...words(1, 'alert'),
    ...words(2, 'critical crit very-high'),
    ...words(3, 'error err high'),
    ...words(4, 'warning warn medium'),
    ...words(5, 'notice low'),
    ...words(6, 'informational information info'),
    ...words(7, 'debug'),
  ],
  true,
);

/** Syslog severity 0..7 of a severity word (syslog, FortiGate, PAN-OS, CEF words), or -1. */
export function severityOfWord(buf: Uint8Array, s: number, e: number): number {
  return SEVERITY_WORDS.lookup(buf, s, e);
}

/** Syslog severity of a CEF severity (0..10 or Low/Medium/High/Very-High), or -1. */
export function severityOfCef(buf: Uint8Array, s: number, e: number): number {
  const n = parseUint(buf, s, e);
  if (n < 0) return severityOfWord(buf, s, e);
  if (n > 10) return -1;
  // CEF bands: 0-3 low, 4-6 medium, 7-8 high, 9-10 very high.
  return n >= 9 ? 2 : n >= 7 ? 3 : n >= 4 ? 4 : n >= 1 ? 5 : 6;
}

/** Address slots of setIp / setPort. */
export const SRC = 0;
export const DST = 1;
export const NAT_SRC = 2;
export const NAT_DST = 3;

/**
 * Validates an address span and stores it as the source (which=0), destination (1), or NAT
 * translated source (2) / destination (3). Returns false for text that is not an address; empty
 * values count as absent, not invalid. For the NAT slots the unspecified address (0.0.0.0, ::) is
 * what vendors write for "not translated", so it stays absent.
 */
export function setIp(
  rec: ParsedRecord,
  which: number,
  buf: Uint8Array,
  s: number,
  e: number,
  scratch: boolean,
): boolean {
  if (e <= s) return true;
  let end = e;
  const v4 = ipv4Number(buf, s, e);
  let version = v4 >= 0 ? 4 : 0;
  if (version === 0) {
    end = addressEnd(buf, s, e);
    version = isIpv6(buf, s, end) ? 6 : 0;
    if (version === 0) return false;
  }
  if (which >= NAT_SRC) {
    if (isUnspecified(buf, s, end)) return true;
    const nat = which === NAT_SRC ? rec.natSrcIp : rec.natDstIp;
    if (scratch) nat.setScratch(s, end);
    else nat.set(s, end);
    nat.ipv4 = v4;
    if (which === NAT_SRC) rec.natSrcIpVersion = version;
    else rec.natDstIpVersion = version;
    return true;
  }
  const span = which === 0 ? rec.srcIp : rec.dstIp;
  if (scratch) span.setScratch(s, end);
  else span.set(s, end);
  span.ipv4 = v4;
  if (which === 0) rec.srcIpVersion = version;
  else rec.dstIpVersion = version;
  return true;
}

/** `0.0.0.0` or an all-zero IPv6 text (`::`, `0:0::0`): only zeros, dots and colons. */
function isUnspecified(buf: Uint8Array, s: number, e: number): boolean {
  for (let i = s; i < e; i++) {
    const c = buf[i];
    if (c !== 48 && c !== 46 && c !== 58) return false;
  }
  return true;
}

/**
 * Parses and stores a port (which=0 source, 1 destination, 2/3 NAT source/destination); false when
 * not 0..65535. A NAT port 0 means "not translated" and stays absent.
 */
export function setPort(rec: ParsedRecord, which: number, buf: Uint8Array, s: number, e: number): boolean {
  if (e <= s) return true;
  if (e - s > 5) return false;
  const port = parseUint(buf, s, e);
  if (port < 0 || port > 65535) return false;
  storePort(rec, which, port);
  return true;
}

/** Stores an already-validated port number into slot `which` (see setPort). */
export function storePort(rec: ParsedRecord, which: number, port: number): void {
  if (which === SRC) rec.srcPort = port;
  else if (which === DST) rec.dstPort = port;
  else if (port === 0) return;
  else if (which === NAT_SRC) rec.natSrcPort = port;
  else rec.natDstPort = port;
}

/** Adds a byte counter span to rec.bytes (sent + received); ignores non-numbers. */
export function addBytes(rec: ParsedRecord, buf: Uint8Array, s: number, e: number): void {
  const n = parseUint(buf, s, e);
  if (n < 0) return;
  rec.bytes = rec.bytes < 0 ? n : rec.bytes + n;
}
