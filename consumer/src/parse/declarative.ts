/**
 * User-defined formats without code, compiled once into payload parsers that run on the same
 * byte-level machinery as the native ones:
 * - `kv`: pair and key/value delimiters, optional quoting, a map from our columns to one or more
 *   vendor keys, and vendor action words mapped to our actions;
 * - `csv`: delimiter, quoting, column positions, optionally a layout chosen by one column's value;
 * - `structuredData`: an RFC 5424 SD-ID and its PARAM names mapped to columns.
 * A `timestamp` mapping reads RFC 3339 / ISO stamps (offset-less ones in the configured zone) or
 * epoch numbers (s/ms/µs/ns). Compilation throws on a bad configuration (a config error, caught at
 * admission and by `logpipeline plan`); parsing never throws.
 */
import type { ParseContext, PayloadParser } from './context';
import { KvDialect, scanKv } from './kv-scan';
import { KeywordTable } from './keywords';
import { BAD_CSV, BAD_KV } from './reasons';
import {
  F_CSV,
  F_KV,
  F_SD,
  ParsedRecord,
  staticKey,
  KEY_STATIC,
  UNESCAPE_DOUBLED_QUOTE,
  VAL_SCRATCH,
} from './record';
import { forEachSdParam } from './sd';
import { actionTable, byte, store, targetOf } from './declarative-map';

import { type CsvFormat, type KvFormat, type SdFormat } from '../../../common/src/parser-contract';

export { MAPPABLE_COLUMNS } from '../../../common/src/parser-contract';
export type { CsvFormat, KvFormat, SdFormat } from '../../../common/src/parser-contract';
function keyTable(fields: Record<string, string[]>): KeywordTable {
  const entries: Array<[string, number]> = [];
  for (const [column, keys] of Object.entries(fields)) {
    const target = targetOf(column);
    if (!Array.isArray(keys) || keys.length === 0)
      throw new RangeError(`fields.${column} needs at least one key`);
    for (const k of keys) entries.push([k, target]);
  }
  return new KeywordTable(entries);
}

/** Compiles a `kv` format into a payload parser. */
export function compileKv(cfg: KvFormat): PayloadParser {
  const dialect: KvDialect = {
    pairSep: byte(cfg.pairDelimiter, ' ', 'kv.pairDelimiter'),
    kvSep: byte(cfg.keyValueDelimiter, '=', 'kv.keyValueDelimiter'),
    quote: byte(cfg.quote, '"', 'kv.quote'),
    lenient: false,
  };
  if (dialect.pairSep === 0 || dialect.kvSep === 0 || dialect.pairSep === dialect.kvSep)
    throw new RangeError('kv.pairDelimiter and kv.keyValueDelimiter must be two different characters');
  const keys = keyTable(cfg.fields);
  const actions = actionTable(cfg.actions);
  let ctxNow: ParseContext;
  const onPair = (
    rec: ParsedRecord,
    ks: number,
    ke: number,
    vb: Buffer,
    vs: number,
    ve: number,
    sc: boolean,
  ) => {
    const t = keys.lookup(rec.src, ks, ke);
    return t < 0 ? null : store(t, actions, rec, vb, vs, ve, sc, ctxNow);
  };
  return (buf, s, e, rec, ctx) => {
    rec.format = F_KV;
    ctxNow = ctx;
    const pairs = scanKv(buf, s, e, rec, dialect, onPair);
    if (pairs < 0) return scanKv.reason;
    return pairs === 0 ? BAD_KV : null;
  };
}

/** Compiles an RFC 5424 structured-data mapping; the parser reads the header's SD span. */
export function compileSd(cfg: SdFormat): {
  sdId: Buffer;
  parse: (buf: Buffer, sdStart: number, sdEnd: number, rec: ParsedRecord, ctx: ParseContext) => string | null;
} {
  if (!cfg.sdId || !/^[!-~]{1,32}$/.test(cfg.sdId) || /[= \]"]/.test(cfg.sdId))
    throw new RangeError(
      'structuredData.sdId must be an SD-ID (1..32 printable characters, no = ] " or space)',
    );
  const sdId = Buffer.from(cfg.sdId, 'latin1');
  const keys = keyTable(cfg.fields);
  const actions = actionTable(cfg.actions);
  let ctxNow: ParseContext;
  const onParam = (
    rec: ParsedRecord,
    is: number,
    ie: number,
    ns: number,
    ne: number,
    vb: Buffer,
    vs: number,
    ve: number,
    sc: boolean,
  ) => {
    if (ie - is !== sdId.length || rec.src.compare(sdId, 0, sdId.length, is, ie) !== 0) return null;
    const t = keys.lookup(rec.src, ns, ne);
    return t < 0 ? null : store(t, actions, rec, vb, vs, ve, sc, ctxNow);
  };
  return {
    sdId,
    parse: (buf, sdStart, sdEnd, rec, ctx) => {
      rec.format = F_SD;
      ctxNow = ctx;
      return forEachSdParam(buf, sdStart, sdEnd, rec, onParam);
    },
  };
}

/** True when the header's structured data [sdStart, sdEnd) holds an element with this SD-ID. */
export function hasSdElement(buf: Uint8Array, sdStart: number, sdEnd: number, sdId: Buffer): boolean {
  const n = sdId.length;
  for (let i = sdStart; i + n < sdEnd; i++) {
    if (buf[i] !== 91) continue;
    let j = 0;
    while (j < n && buf[i + 1 + j] === sdId[j]) j++;
    if (j === n && (buf[i + 1 + n] === 32 || buf[i + 1 + n] === 93)) return true;
  }
  return false;
}

const MAX_CSV_COLUMNS = 256;
const csvStarts = new Int32Array(MAX_CSV_COLUMNS);
const csvEnds = new Int32Array(MAX_CSV_COLUMNS);
const csvQuoted = new Uint8Array(MAX_CSV_COLUMNS);
const CSV_KEYS: number[] = [];

/** Splits [s, e) into csvStarts/csvEnds; -1 on an unterminated quote. */
function splitCsv(buf: Uint8Array, s: number, e: number, delim: number, quote: number): number {
  let n = 0;
  let p = s;
  while (n < MAX_CSV_COLUMNS) {
    if (quote !== 0 && p < e && buf[p] === quote) {
      let q = p + 1;
      let doubled = false;
      for (;;) {
        while (q < e && buf[q] !== quote) q++;
        if (q >= e) return -1;
        if (q + 1 < e && buf[q + 1] === quote) {
          doubled = true;
          q += 2;
          continue;
        }
        break;
      }
      csvStarts[n] = p + 1;
      csvEnds[n] = q;
      csvQuoted[n] = doubled ? 1 : 0;
      n++;
      p = q + 1;
      if (p >= e) break;
      if (buf[p] !== delim) return -1;
      p++;
      continue;
    }
    let q = p;
    while (q < e && buf[q] !== delim) q++;
    csvStarts[n] = p;
    csvEnds[n] = q;
    csvQuoted[n] = 0;
    n++;
    if (q >= e) break;
    p = q + 1;
  }
  return n;
}

/** One compiled CSV layout: parallel arrays of positions and targets. */
interface CsvLayout {
  positions: Int32Array;
  targets: Int32Array;
}

function layoutOf(fields: Record<string, number>): CsvLayout {
  const entries = Object.entries(fields);
  const positions = new Int32Array(entries.length);
  const targets = new Int32Array(entries.length);
  entries.forEach(([column, pos], i) => {
    if (!Number.isInteger(pos) || pos < 0 || pos >= MAX_CSV_COLUMNS)
      throw new RangeError(`csv fields.${column} must be a position 0..${MAX_CSV_COLUMNS - 1}`);
    positions[i] = pos;
    targets[i] = targetOf(column);
  });
  return { positions, targets };
}

/** Compiles a `csv` format into a payload parser. */
export function compileCsv(cfg: CsvFormat): PayloadParser {
  const delim = byte(cfg.delimiter, ',', 'csv.delimiter');
  const quote = byte(cfg.quote, '"', 'csv.quote');
  if (delim === 0 || delim === quote)
    throw new RangeError('csv.delimiter must be one character, not the quote');
  const base = cfg.fields ? layoutOf(cfg.fields) : null;
  const layouts = new Map<string, CsvLayout>();
  for (const [value, fields] of Object.entries(cfg.layouts ?? {})) layouts.set(value, layoutOf(fields));
  const selector = cfg.layoutField;
  if (selector !== undefined && (!Number.isInteger(selector) || selector < 0 || layouts.size === 0))
    throw new RangeError('csv.layoutField needs a position and at least one entry in csv.layouts');
  if (!base && layouts.size === 0) throw new RangeError('csv needs fields or layouts');
  const layoutKeys = new KeywordTable([...layouts.keys()].map((k, i) => [k, i] as [string, number]));
  const layoutList = [...layouts.values()];
  const actions = actionTable(cfg.actions);
  for (let i = CSV_KEYS.length; i < MAX_CSV_COLUMNS; i++) CSV_KEYS.push(staticKey(`csv.${i}`));
  return (buf, s, e, rec, ctx) => {
    rec.format = F_CSV;
    const n = splitCsv(buf, s, e, delim, quote);
    if (n < 0) return BAD_CSV;
    let layout = base;
    if (selector !== undefined && selector < n) {
      const id = layoutKeys.lookup(buf, csvStarts[selector], csvEnds[selector]);
      if (id >= 0) layout = layoutList[id];
    }
    if (rec.collectFields) for (let i = 0; i < n; i++) addCsvField(rec, buf, i);
    if (layout === null) return null;
    for (let i = 0; i < layout.positions.length; i++) {
      const pos = layout.positions[i];
      if (pos >= n) continue;
      let vb = buf;
      let vs = csvStarts[pos];
      let ve = csvEnds[pos];
      let sc = false;
      if (csvQuoted[pos]) {
        vs = rec.unescapeToScratch(buf, vs, ve, UNESCAPE_DOUBLED_QUOTE);
        ve = rec.scratchLen;
        vb = rec.scratch;
        sc = true;
      }
      const reason = store(layout.targets[i], actions, rec, vb, vs, ve, sc, ctx);
      if (reason !== null) return reason;
    }
    return null;
  };
}

function addCsvField(rec: ParsedRecord, buf: Buffer, i: number): void {
  if (csvQuoted[i]) {
    const vs = rec.unescapeToScratch(buf, csvStarts[i], csvEnds[i], UNESCAPE_DOUBLED_QUOTE);
    rec.addField(CSV_KEYS[i], 0, vs, rec.scratchLen, KEY_STATIC | VAL_SCRATCH);
  } else {
    rec.addField(CSV_KEYS[i], 0, csvStarts[i], csvEnds[i], KEY_STATIC);
  }
}
