/**
 * The parser output: one reusable record per parser holding numbers and spans into the source
 * line, so a parsed line costs no allocation. Values that had to be unescaped (quoted kv values,
 * CEF escapes, JSON strings) are copied once into the record's scratch buffer and the span points
 * there instead. The record is only valid until the next line is parsed into it.
 */

/** Normalised actions; the numbers equal the values of the column type Enum8('unknown'=0, …). */
export const ACTION_UNKNOWN = 0;
export const ACTION_ALLOW = 1;
export const ACTION_DENY = 2;
export const ACTION_DROP = 3;
export const ACTION_RESET = 4;
export const ACTION_CLOSE = 5;
export const ACTION_ALERT = 6;
// The name lists are part of the column contract the operator checks columns against.
import { FORMAT_NAMES } from '../../../common/src/columns/sources';
export {
  ACTION_NAMES,
  DECLARATIVE_FORMAT_NAMES,
  FORMAT_NAMES,
  SEVERITY_NAMES,
  VENDOR_NAMES,
} from '../../../common/src/columns/sources';

/** A format name accepted by the parser (plus `auto`). */
export type FormatName = (typeof FORMAT_NAMES)[number];
export const F_RFC5424 = 0;
export const F_RFC3164 = 1;
export const F_FORTIGATE = 2;
export const F_PALOALTO = 3;
export const F_ASA = 4;
export const F_IPTABLES = 5;
export const F_CEF = 6;
export const F_JSON = 7;
export const F_PFSENSE = 8;
export const F_JUNIPER = 9;
export const F_HUAWEI = 10;
export const F_SOPHOS = 11;
export const F_SONICWALL = 12;
export const F_CHECKPOINT = 13;
export const F_MIKROTIK = 14;
export const F_KV = 15;
export const F_CSV = 16;
export const F_SD = 17;

/** Field-table flag: the key bytes live in the scratch buffer. */
export const KEY_SCRATCH = 1;
/** Field-table flag: the value bytes live in the scratch buffer. */
export const VAL_SCRATCH = 2;
/** Field-table flag: the key is an index into STATIC_KEYS (names the vendor layout defines). */
export const KEY_STATIC = 4;
const FIELD_INTS = 5;

/** Key names that are not spelled in the line (CSV column names, header parts). */
export const STATIC_KEYS: Buffer[] = [];
const staticIds = new Map<string, number>();

/** Registers (once) a key name that parsers attach to values by position; returns its id. */
export function staticKey(name: string): number {
  let id = staticIds.get(name);
  if (id === undefined) {
    id = STATIC_KEYS.length;
    STATIC_KEYS.push(Buffer.from(name, 'utf8'));
    staticIds.set(name, id);
  }
  return id;
}

/** A mutable [start, end) span in either the source line buffer or the record's scratch buffer. */
export class Span {
  start = -1;
  end = -1;
  scratch = false;
  /**
   * The dotted IPv4 address the span holds as a number, -1 when not known: set by the parser that
   * validated it so the encoder writes it without parsing the text again; every (re)point clears it.
   */
  ipv4 = -1;

  /** Points the span at [s, e) of the source buffer. */
  set(s: number, e: number): void {
    this.start = s;
    this.end = e;
    this.scratch = false;
    this.ipv4 = -1;
  }

  /** Points the span at [s, e) of the scratch buffer. */
  setScratch(s: number, e: number): void {
    this.start = s;
    this.end = e;
    this.scratch = true;
    this.ipv4 = -1;
  }

  /** Copies another span's coordinates. */
  copy(other: Span): void {
    this.start = other.start;
    this.end = other.end;
    this.scratch = other.scratch;
    this.ipv4 = other.ipv4;
  }

  /** Marks the value absent. */
  clear(): void {
    this.start = -1;
    this.end = -1;
    this.scratch = false;
    this.ipv4 = -1;
  }
}

/** Unescape modes for copying a value into scratch. */
export const UNESCAPE_BACKSLASH = 0; // `\x` -> `x`
export const UNESCAPE_CEF = 1; // like BACKSLASH, plus `\n` / `\r` -> LF / CR
export const UNESCAPE_DOUBLED_QUOTE = 2; // CSV: `""` -> `"`
export const UNESCAPE_SD = 3; // RFC 5424 PARAM-VALUE: only `\"`, `\\`, `\]` are escapes

/** One parsed line: standard columns as numbers/spans plus an optional table of vendor fields. */
export class ParsedRecord {
  src: Buffer = Buffer.alloc(0);
  lineStart = 0;
  lineEnd = 0;
  /** The line holds no tab, CR or backslash (set from the parse flags): no escapes to undo or add. */
  srcClean = false;
  scratch: Buffer = Buffer.allocUnsafe(1024);
  scratchLen = 0;
  /** Id of the format that parsed the payload (FORMAT_NAMES index), -1 before parsing. */
  format = -1;
  /** Epoch milliseconds; NaN when the line carries no clock. */
  timestamp = NaN;
  readonly device = new Span();
  readonly srcIp = new Span();
  readonly dstIp = new Span();
  readonly rule = new Span();
  readonly message = new Span();
  /** NAT / CGNAT translated (public) source and destination; spans and ports like the originals. */
  readonly natSrcIp = new Span();
  readonly natDstIp = new Span();
  /** 4 or 6 once the address span is validated, 0 when absent. */
  srcIpVersion = 0;
  dstIpVersion = 0;
  natSrcIpVersion = 0;
  natDstIpVersion = 0;
  srcPort = -1;
  dstPort = -1;
  natSrcPort = -1;
  natDstPort = -1;
  /** IANA protocol number, or -1 when unknown or absent. */
  protoNumber = -1;
  /** Lower-case protocol name or number text; '' when absent. */
  protoName = '';
  action = ACTION_UNKNOWN;
  /** Total bytes (sent + received where both exist), -1 when absent. */
  bytes = -1;
  /** Syslog severity 0..7, -1 when absent. */
  severity = -1;
  /** When false parsers skip the field table (the column plan uses no `field:` source). */
  collectFields = false;
  fieldCount = 0;
  fields = new Int32Array(64 * FIELD_INTS);

  /** Clears every value and points the record at a new line. */
  reset(src: Buffer, s: number, e: number): void {
    this.src = src;
    this.lineStart = s;
    this.lineEnd = e;
    this.srcClean = false;
    this.scratchLen = 0;
    this.format = -1;
    this.timestamp = NaN;
    this.device.clear();
    this.srcIp.clear();
    this.dstIp.clear();
    this.rule.clear();
    this.message.clear();
    this.natSrcIp.clear();
    this.natDstIp.clear();
    this.srcIpVersion = 0;
    this.dstIpVersion = 0;
    this.natSrcIpVersion = 0;
    this.natDstIpVersion = 0;
    this.srcPort = -1;
    this.dstPort = -1;
    this.natSrcPort = -1;
    this.natDstPort = -1;
    this.protoNumber = -1;
    this.protoName = '';
    this.action = ACTION_UNKNOWN;
    this.bytes = -1;
    this.severity = -1;
    this.fieldCount = 0;
  }

  /** Appends a vendor field; spans are source offsets unless flagged KEY_SCRATCH/VAL_SCRATCH/KEY_STATIC. */
  addField(keyStart: number, keyEnd: number, valStart: number, valEnd: number, flags: number): void {
    let i = this.fieldCount * FIELD_INTS;
    if (i + FIELD_INTS > this.fields.length) {
      const grown = new Int32Array(this.fields.length * 2);
      grown.set(this.fields);
      this.fields = grown;
    }
    const f = this.fields;
    f[i++] = keyStart;
    f[i++] = keyEnd;
    f[i++] = valStart;
    f[i++] = valEnd;
    f[i] = flags;
    this.fieldCount++;
  }

  /** Makes room for `n` more scratch bytes, keeping what is already there. */
  ensureScratch(n: number): void {
    const need = this.scratchLen + n;
    if (need <= this.scratch.length) return;
    const grown = Buffer.allocUnsafe(Math.max(need, this.scratch.length * 2));
    this.scratch.copy(grown, 0, 0, this.scratchLen);
    this.scratch = grown;
  }

  /** Copies [s, e) of `buf` into scratch, undoing `mode` escapes; returns the scratch start. */
  unescapeToScratch(buf: Uint8Array, s: number, e: number, mode: number): number {
    this.ensureScratch(e - s);
    const out = this.scratch;
    const start = this.scratchLen;
    let o = start;
    for (let i = s; i < e; i++) {
      let c = buf[i];
      if (mode === UNESCAPE_DOUBLED_QUOTE) {
        if (c === 34 && i + 1 < e && buf[i + 1] === 34) i++;
      } else if (c === 92 && i + 1 < e) {
        const next = buf[i + 1];
        if (mode !== UNESCAPE_SD || next === 34 || next === 92 || next === 93) {
          c = next;
          i++;
          if (mode === UNESCAPE_CEF) c = c === 110 ? 10 : c === 114 ? 13 : c;
        }
      }
      out[o++] = c;
    }
    this.scratchLen = o;
    return start;
  }

  /** Writes a JS string into scratch as UTF-8; returns its start (its end is `scratchLen`). */
  stringToScratch(text: string): number {
    this.ensureScratch(text.length * 3);
    const start = this.scratchLen;
    this.scratchLen += this.scratch.write(text, start, 'utf8');
    return start;
  }

  /** Index of the first field whose key equals `key`, or -1. */
  findField(key: Uint8Array): number {
    const f = this.fields;
    const n = key.length;
    for (let i = 0, j = 0; i < this.fieldCount; i++, j += FIELD_INTS) {
      const flags = f[j + 4];
      if (flags & KEY_STATIC) {
        const k = STATIC_KEYS[f[j]];
        if (k.length === n && k.equals(key)) return i;
        continue;
      }
      const ks = f[j];
      if (f[j + 1] - ks !== n) continue;
      const kb = flags & KEY_SCRATCH ? this.scratch : this.src;
      let m = 0;
      while (m < n && kb[ks + m] === key[m]) m++;
      if (m === n) return i;
    }
    return -1;
  }

  /** Buffer holding field `i`'s value (source or scratch). */
  fieldValueBuffer(i: number): Buffer {
    return this.fields[i * FIELD_INTS + 4] & VAL_SCRATCH ? this.scratch : this.src;
  }

  /** Start offset of field `i`'s value. */
  fieldValueStart(i: number): number {
    return this.fields[i * FIELD_INTS + 2];
  }

  /** End offset of field `i`'s value. */
  fieldValueEnd(i: number): number {
    return this.fields[i * FIELD_INTS + 3];
  }

  /** Key of field `i` as a string (CLI/debug only: allocates). */
  fieldKeyString(i: number): string {
    const j = i * FIELD_INTS;
    const flags = this.fields[j + 4];
    if (flags & KEY_STATIC) return STATIC_KEYS[this.fields[j]].toString('utf8');
    const kb = flags & KEY_SCRATCH ? this.scratch : this.src;
    return kb.toString('utf8', this.fields[j], this.fields[j + 1]);
  }

  /** Buffer a span's coordinates refer to. */
  spanBuffer(span: Span): Buffer {
    return span.scratch ? this.scratch : this.src;
  }
}
