/**
 * Cheap per-line payload detection for `auto` (and for the payload behind a syslog header): looks
 * only at the first bytes, except Sophos, MikroTik and iptables which scan a bounded prefix window.
 * Order: CEF, JSON, ASA / Huawei (`%`), Check Point (`[k:"`), PAN-OS CSV, pfSense filterlog,
 * SonicWall (`id= sn=`), Juniper RT_FLOW text, Sophos (before FortiGate: old SFOS also starts with
 * `date=`), FortiGate, Check Point without brackets, MikroTik, netfilter.
 */
import { isDigit, skipSpaces } from './bytes';
import { isCef } from './cef';
import { isAsaTag } from './cisco-asa';
import { findNetfilterStart } from './iptables';
import { KeywordTable } from './keywords';
import { isCheckPoint } from './checkpoint';
import { isHuaweiTag } from './huawei-usg';
import { isRtFlowText } from './juniper-srx';
import { findMikrotikChain } from './mikrotik';
import { isFilterlog } from './pfsense';
import {
  F_ASA,
  F_CEF,
  F_CHECKPOINT,
  F_FORTIGATE,
  F_HUAWEI,
  F_IPTABLES,
  F_JSON,
  F_JUNIPER,
  F_MIKROTIK,
  F_PALOALTO,
  F_PFSENSE,
  F_SONICWALL,
  F_SOPHOS,
} from './record';
import { isSonicWall } from './sonicwall';
import { isSophos } from './sophos';

/** Keys a FortiOS log line starts with (date= for FortiOS 5+, the others for FortiAnalyzer forwards). */
const FORTI_FIRST_KEYS = new KeywordTable(
  ['date', 'logver', 'itime', 'devname', 'devid', 'eventtime', 'logid', 'logdesc', 'tz'].map(
    (k) => [k, 1] as [string, number],
  ),
);

/** PAN-OS CSV: `<digits>,YYYY/MM/DD `. */
function isPanCsv(buf: Uint8Array, p: number, e: number): boolean {
  let i = p;
  while (i < e && i - p < 4 && isDigit(buf[i])) i++;
  if (i === p || i + 12 > e || buf[i] !== 44) return false;
  return isDigit(buf[i + 1]) && isDigit(buf[i + 4]) && buf[i + 5] === 47 && buf[i + 8] === 47;
}

function isFortigate(buf: Uint8Array, p: number, e: number): boolean {
  let i = p;
  while (i < e && i - p < 10 && buf[i] !== 61) i++;
  return i < e && buf[i] === 61 && FORTI_FIRST_KEYS.lookup(buf, p, i) > 0;
}

/**
 * Where the next `_` of one message is: one native scan finds it, and lines before it reuse the
 * answer (Sophos detection looks for `_`; FortiGate messages have none, so a packed message of them
 * costs one scan instead of a JS compare per byte of each line's first 240). Positions asked for
 * one buffer must not go back and the bytes must not change until reset() (the encoder resets per message).
 */
export class UnderscoreCursor {
  private buf: Buffer | null = null;
  private next = 0;

  /** Forgets the buffer: the next call scans afresh. */
  reset(): void {
    this.buf = null;
  }

  /** The first `_` at or after `p` in `buf`, or buf.length when there is none. */
  from(buf: Buffer, p: number): number {
    if (buf !== this.buf || this.next < p) {
      const at = buf.indexOf(95, p);
      this.buf = buf;
      this.next = at < 0 ? buf.length : at;
    }
    return this.next;
  }
}

/**
 * Format id of the payload starting at `p`, or -1 when nothing matches. `underscores` (optional)
 * spares the Sophos check its byte scan; the answer is the same without it.
 */
export function detectPayload(buf: Buffer, p: number, e: number, underscores?: UnderscoreCursor): number {
  if (p >= e) return -1;
  const c = buf[p];
  if (c === 67 && isCef(buf, p, e)) return F_CEF;
  if (c === 123) return F_JSON;
  if (c === 37 || c === 58) {
    const q = c === 58 ? skipSpaces(buf, p + 1, e) : p;
    if (isAsaTag(buf, q, e)) return F_ASA;
    if (isHuaweiTag(buf, p, e)) return F_HUAWEI;
  }
  if (c === 91 && isCheckPoint(buf, p, e)) return F_CHECKPOINT;
  if (isDigit(c)) {
    if (isPanCsv(buf, p, e)) return F_PALOALTO;
    if (isFilterlog(buf, p, e)) return F_PFSENSE;
  }
  if (c === 105 && isSonicWall(buf, p, e)) return F_SONICWALL;
  if (c === 82 && isRtFlowText(buf, p, e)) return F_JUNIPER;
  const forti = isFortigate(buf, p, e);
  if ((forti || c === 100) && isSophos(buf, p, e, underscores === undefined ? p : underscores.from(buf, p)))
    return F_SOPHOS;
  if (forti) return F_FORTIGATE;
  if (isCheckPoint(buf, p, e)) return F_CHECKPOINT;
  if (findMikrotikChain(buf, p, e) >= 0) return F_MIKROTIK;
  if (findNetfilterStart(buf, p, e) >= 0) return F_IPTABLES;
  return -1;
}
