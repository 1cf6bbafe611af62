/**
 * The line parser: envelope (syslog header) + payload (vendor format) -> one reused ParsedRecord,
 * or a dead-letter reason. Pure and synchronous; config is resolved once in the constructor.
 * Header values are fallbacks: the vendor payload's clock, device and severity win.
 */
import { isUtf8 } from 'node:buffer';
import type { ParseContext, PayloadParser } from './context';
import { parseCef } from './cef';
import { parseAsa } from './cisco-asa';
import { detectPayload, UnderscoreCursor } from './detect';
import { parseFortigate } from './fortigate';
import { parseIptables } from './iptables';
import { parseJson } from './json';
import { parsePaloAlto } from './paloalto';
import { parseCheckPoint } from './checkpoint';
import { parseHuaweiUsg } from './huawei-usg';
import { isJunosSd, parseJuniperSd, parseJuniperText } from './juniper-srx';
import { parseMikrotik } from './mikrotik';
import { parsePfsense } from './pfsense';
import { parseSonicWall } from './sonicwall';
import { parseSophos } from './sophos';
import {
  BAD_HEADER,
  BAD_TIMESTAMP,
  EMPTY_LINE,
  INVALID_UTF8,
  LINE_TOO_LONG,
  UNKNOWN_FORMAT,
} from './reasons';
import {
  DECLARATIVE_FORMAT_NAMES,
  F_RFC3164,
  F_RFC5424,
  FORMAT_NAMES,
  FormatName,
  ParsedRecord,
} from './record';
import { hasSdElement, type CsvFormat, type KvFormat, type SdFormat } from './declarative';
import {
  compileRules,
  compileSdFormat,
  declarativeParser,
  NO_RULE,
  tryRules,
  type CompiledRules,
  type CompiledSd,
  type DeclarativeRule,
} from './declarative-rules';
import { requiredCheck, RequiredCheck } from './required';
import { HDR_5424, HDR_NONE, headerClock, parseSyslogHeader, SyslogHeader } from './syslog';
import { isPlausibleTimestamp } from './time';
import { createTimeZone } from './timezone';

/** parse() flag: the caller verified the line is valid UTF-8. */
export const LINE_UTF8_VALID = 1;
/** parse() flag: the caller verified the line holds no tab, CR or backslash. */
export const LINE_NO_SPECIALS = 2;
/**
 * parse() flag: `buf` is the previous call's buffer, unchanged, and this line starts after that
 * one (the next line of the same message): what the parser learnt scanning ahead stays valid.
 */
export const LINE_SAME_MESSAGE = 4;

/** Default maximum line length: longer lines are dead-lettered as `line_too_long`. */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024;

/** Parser configuration (mirrors the worker config's `parser` section). */
export interface ParserOptions {
  /** A format name or `auto` (per-line detection). */
  format: FormatName | 'auto' | string;
  /** Zone for clock stamps without offset; IANA name or fixed offset. Default UTC. */
  timezone?: string;
  /** Lines longer than this are dead-lettered. Default 65536. */
  maxLineBytes?: number;
  /** Fill the vendor field table (needed for `field:` columns and the CLI). Default false. */
  collectFields?: boolean;
  /** Column sources that must be present, e.g. ['src_ip'] -> `missing_field:src_ip`. Default none. */
  required?: readonly string[];
  /** The CRD's name for `required` (spec.parser.requiredFields); `required` wins when both are set. */
  requiredFields?: readonly string[];
  /** Settings of the declarative formats (format kv / csv / structured-data). */
  kv?: KvFormat;
  csv?: CsvFormat;
  structuredData?: SdFormat;
  /** Extra declarative rules `auto` tries first, in order. */
  rules?: readonly DeclarativeRule[];
}

const PAYLOAD_PARSERS: Record<string, PayloadParser> = {
  fortigate: parseFortigate,
  paloalto: parsePaloAlto,
  'cisco-asa': parseAsa,
  iptables: parseIptables,
  cef: parseCef,
  json: parseJson,
  pfsense: parsePfsense,
  'juniper-srx': parseJuniperText,
  'huawei-usg': parseHuaweiUsg,
  sophos: parseSophos,
  sonicwall: parseSonicWall,
  checkpoint: parseCheckPoint,
  mikrotik: parseMikrotik,
};
const BY_FORMAT_ID: Array<PayloadParser | null> = FORMAT_NAMES.map((name) => PAYLOAD_PARSERS[name] ?? null);

/** Parses lines of one configured format into its reusable `record`. */
export class LineParser {
  /** The record every successful parse fills; valid until the next parse call. */
  readonly record = new ParsedRecord();
  private readonly header = new SyslogHeader();
  private readonly ctx: ParseContext;
  private readonly mode: 'auto' | 'syslog' | 'rfc5424' | 'vendor';
  private readonly vendor: PayloadParser | null;
  /** Junos structured data in the RFC 5424 header is read when the format is auto or juniper-srx. */
  private readonly junosSd: boolean;
  private readonly maxLineBytes: number;
  private readonly required: RequiredCheck;
  private readonly sdFormat: CompiledSd | null;
  private readonly rules: CompiledRules;
  /** Auto detection's forward scan for `_`, kept across the lines of one message. */
  private readonly underscores = new UnderscoreCursor();

  /** Resolves the configuration; throws on an unknown format or timezone (config errors, not data). */
  constructor(options: ParserOptions) {
    const format = options.format;
    if (
      format !== 'auto' &&
      !(FORMAT_NAMES as readonly string[]).includes(format) &&
      !(DECLARATIVE_FORMAT_NAMES as readonly string[]).includes(format)
    ) {
      throw new RangeError(`unknown parser format: ${format}`);
    }
    this.mode =
      format === 'auto'
        ? 'auto'
        : format === 'rfc3164'
          ? 'syslog'
          : format === 'rfc5424' || format === 'structured-data'
            ? 'rfc5424'
            : 'vendor';
    this.vendor = PAYLOAD_PARSERS[format] ?? declarativeParser(format, options);
    this.sdFormat = format === 'structured-data' ? compileSdFormat(options.structuredData) : null;
    this.rules = compileRules(format === 'auto' ? (options.rules ?? []) : []);
    this.junosSd = format === 'auto' || format === 'juniper-srx';
    this.ctx = { tz: createTimeZone(options.timezone), refMs: Date.now() };
    this.maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this.record.collectFields = options.collectFields ?? false;
    this.required = requiredCheck(options.required ?? options.requiredFields ?? []);
  }

  /** Sets the reference instant for year inference (the batch's ingest time, for determinism). */
  setReferenceTime(ms: number): void {
    this.ctx.refMs = ms;
  }

  /**
   * Parses [s, e) of `buf` (one line, no newline). Returns null when `record` holds the result,
   * else a dead-letter reason. `flags` carries what the caller already knows about the line:
   * LINE_UTF8_VALID skips the UTF-8 check, LINE_NO_SPECIALS (no tab, CR or backslash) enables
   * escape-free fast paths and verbatim copies in the encoder, LINE_SAME_MESSAGE keeps forward
   * scans of the previous line of the same buffer.
   */
  parse(buf: Buffer, s: number, e: number, flags = 0): string | null {
    const rec = this.record;
    rec.reset(buf, s, e);
    rec.srcClean = (flags & LINE_NO_SPECIALS) !== 0;
    if ((flags & LINE_SAME_MESSAGE) === 0) this.underscores.reset();
    if (e - s > this.maxLineBytes) return LINE_TOO_LONG;
    let first = s;
    while (first < e && (buf[first] === 32 || buf[first] === 9)) first++;
    if (first === e) return EMPTY_LINE;
    if ((flags & LINE_UTF8_VALID) === 0 && !isUtf8(buf.subarray(s, e))) return INVALID_UTF8;
    const reason = this.parsePayload(buf, first, e);
    if (reason !== null) return reason;
    return this.finish(rec);
  }

  private parsePayload(buf: Buffer, s: number, e: number): string | null {
    const h = this.header;
    const rec = this.record;
    const headerReason = parseSyslogHeader(buf, s, e, h, rec, this.ctx.tz);
    if (headerReason !== null) return headerReason;
    const p = h.msgStart;
    if (this.sdFormat !== null) {
      if (h.sdStart < 0 || !hasSdElement(buf, h.sdStart, h.sdEnd, this.sdFormat.sdId)) return UNKNOWN_FORMAT;
      return this.sdFormat.parse(buf, h.sdStart, h.sdEnd, rec, this.ctx);
    }
    if (this.rules.length > 0) {
      const reason = tryRules(this.rules, buf, p, e, h.sdStart, h.sdEnd, rec, this.ctx);
      if (reason !== NO_RULE) return reason;
    }
    if (this.junosSd && h.sdStart >= 0 && isJunosSd(buf, h.sdStart, h.sdEnd))
      return parseJuniperSd(buf, h.sdStart, h.sdEnd, h.msgid, rec);
    if (this.mode === 'vendor') return (this.vendor as PayloadParser)(buf, p, e, rec, this.ctx);
    if (this.mode === 'rfc5424' && h.kind !== HDR_5424) return BAD_HEADER;
    if (this.mode === 'syslog' && h.kind === HDR_NONE) return BAD_HEADER;
    const detected = detectPayload(buf, p, e, this.underscores);
    if (detected >= 0) return (BY_FORMAT_ID[detected] as PayloadParser)(buf, p, e, rec, this.ctx);
    if (h.kind === HDR_NONE) return UNKNOWN_FORMAT;
    rec.format = h.kind === HDR_5424 ? F_RFC5424 : F_RFC3164;
    let end = e;
    while (end > p && (buf[end - 1] === 32 || buf[end - 1] === 9)) end--;
    if (end > p) rec.message.set(p, end);
    return null;
  }

  /** Header fallbacks, clock range check and required columns. */
  private finish(rec: ParsedRecord): string | null {
    const h = this.header;
    if (rec.timestamp !== rec.timestamp) {
      rec.timestamp = headerClock(h, this.ctx.tz, this.ctx.refMs);
      // A header stamp that names no real date (Feb 30) is a broken clock, not a missing one.
      if (h.clockInvalid) return BAD_TIMESTAMP;
    }
    if (rec.device.start < 0 && h.host.start >= 0) rec.device.copy(h.host);
    if (rec.severity < 0 && h.pri >= 0) rec.severity = h.pri & 7;
    if (rec.timestamp === rec.timestamp && !isPlausibleTimestamp(rec.timestamp)) return BAD_TIMESTAMP;
    return this.required(rec);
  }
}
