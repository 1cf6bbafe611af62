/**
 * Byte-level fast path for JSON lines: scans one object (nested objects flattened to dotted keys,
 * as the JSON.parse walk does) straight from the line's bytes and records the values whose dotted
 * key is a known alias — no string, no object per line. It only takes lines whose result is
 * certainly the same as JSON.parse + walk; anything else (escapes in keys, `\u` surrogates, arrays,
 * floats and exponents, integers of more than 15 digits, `-0`, keys that start with a digit —
 * JSON.parse enumerates integer-like keys first —, a key repeated in one object, nesting beyond the
 * walk's depth, any syntax error) makes it answer false and the caller parses with JSON.parse.
 */
import type { KeywordTable } from './keywords';
import type { ParsedRecord } from './record';

/** Most alias hits kept per line (more: the line takes the JSON.parse path). */
const MAX_HITS = 64;
/** Dotted keys longer than this cannot be aliases (the longest alias is far shorter). */
const MAX_PATH = 96;
const MAX_KEYS = 512;

/** Alias hits of the last scanned line, in key order: column, value span in scratch, number value. */
export const hits = {
  count: 0,
  column: new Int32Array(MAX_HITS),
  start: new Int32Array(MAX_HITS),
  end: new Int32Array(MAX_HITS),
  /** The value as a number when it was a JSON number, else NaN. */
  number: new Float64Array(MAX_HITS),
};

const path = Buffer.alloc(MAX_PATH);
/** Key spans of the objects being scanned (duplicate-key check per object). */
const keyStart = new Int32Array(MAX_KEYS);
const keyEnd = new Int32Array(MAX_KEYS);

/** Scan state of one line. */
const scan = { keys: 0, aliases: null as KeywordTable | null, maxDepth: 0, ok: true, escaped: false };

/** Byte an escape `\x` stands for (x = `"` `\` `/` b f n r t), 0 for others (`u` is handled apart). */
const UNESCAPE = new Uint8Array(256);
for (const [c, v] of [
  ['"', 34],
  ['\\', 92],
  ['/', 47],
  ['b', 8],
  ['f', 12],
  ['n', 10],
  ['r', 13],
  ['t', 9],
] as const)
  UNESCAPE[c.charCodeAt(0)] = v;
const HEX = new Int8Array(256).fill(-1);
for (let i = 0; i < 16; i++) {
  HEX['0123456789abcdef'.charCodeAt(i)] = i;
  HEX['0123456789ABCDEF'.charCodeAt(i)] = i;
}

/** The code unit of `\uXXXX` whose XXXX starts at p, or -1 (bad hex, or a surrogate: left to JSON.parse). */
function unicodeEscape(b: Uint8Array, p: number, e: number): number {
  if (p + 4 > e) return -1;
  const a = HEX[b[p]];
  const c = HEX[b[p + 1]];
  const d = HEX[b[p + 2]];
  const f = HEX[b[p + 3]];
  if ((a | c | d | f) < 0) return -1;
  const u = (a << 12) | (c << 8) | (d << 4) | f;
  return u >= 0xd800 && u <= 0xdfff ? -1 : u;
}

function ws(b: Uint8Array, p: number, e: number): number {
  while (p < e) {
    const c = b[p];
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) break;
    p++;
  }
  return p;
}

/**
 * Index of the quote closing a string that starts at p, or -1 (invalid, or an escape the scanner
 * leaves to JSON.parse); sets `scan.escaped` when the string holds escapes.
 */
function stringEnd(b: Uint8Array, p: number, e: number): number {
  scan.escaped = false;
  while (p < e) {
    const c = b[p];
    if (c === 34) return p;
    if (c < 32) return -1;
    if (c === 92) {
      const x = p + 1 < e ? b[p + 1] : 0;
      if (x === 117) {
        if (unicodeEscape(b, p + 2, e) < 0) return -1;
        p += 6;
      } else if (UNESCAPE[x] !== 0) p += 2;
      else return -1;
      scan.escaped = true;
      continue;
    }
    p++;
  }
  return -1;
}

/** Copies the validated string [s, e) into `out` at o undoing escapes (\u as UTF-8); returns the end. */
function unescapeInto(b: Uint8Array, s: number, e: number, out: Buffer, o: number): number {
  for (let i = s; i < e; i++) {
    const c = b[i];
    if (c !== 92) {
      out[o++] = c;
      continue;
    }
    const x = b[++i];
    if (x !== 117) {
      out[o++] = UNESCAPE[x];
      continue;
    }
    const u = unicodeEscape(b, i + 1, e);
    i += 4;
    if (u < 0x80) out[o++] = u;
    else if (u < 0x800) {
      out[o++] = 0xc0 | (u >> 6);
      out[o++] = 0x80 | (u & 63);
    } else {
      out[o++] = 0xe0 | (u >> 12);
      out[o++] = 0x80 | ((u >> 6) & 63);
      out[o++] = 0x80 | (u & 63);
    }
  }
  return o;
}

/**
 * Scans the object at [s, e) (one line). True when `hits` holds its alias values (copied into
 * the record's scratch) and the line is exactly what JSON.parse would accept and walk alike.
 */
export function scanJsonLine(
  b: Uint8Array,
  s: number,
  e: number,
  rec: ParsedRecord,
  aliases: KeywordTable,
  maxDepth: number,
): boolean {
  hits.count = 0;
  scan.keys = 0;
  scan.ok = true;
  scan.aliases = aliases;
  scan.maxDepth = maxDepth;
  const p = ws(b, s, e);
  if (p >= e || b[p] !== 123) return false;
  const end = object(b, p + 1, e, 0, 0, rec);
  return end > 0 && ws(b, end, e) === e && scan.ok;
}

/** Scans an object's members after its `{`; returns the index after its `}`, or -1. */
function object(
  b: Uint8Array,
  p: number,
  e: number,
  depth: number,
  pathLen: number,
  rec: ParsedRecord,
): number {
  p = ws(b, p, e);
  if (p < e && b[p] === 125) return p + 1;
  const firstKey = scan.keys;
  while (p < e) {
    if (b[p] !== 34) return -1;
    const ks = p + 1;
    const ke = stringEnd(b, ks, e);
    if (ke < 0 || scan.escaped || (ke > ks && b[ks] >= 48 && b[ks] <= 57) || !newKey(b, ks, ke, firstKey))
      return -1;
    p = ws(b, ke + 1, e);
    if (p >= e || b[p] !== 58) return -1;
    p = ws(b, p + 1, e);
    const len = extendPath(b, ks, ke, pathLen);
    p = value(b, p, e, depth, len, rec);
    if (p < 0) return -1;
    p = ws(b, p, e);
    if (p >= e) return -1;
    if (b[p] === 125) {
      scan.keys = firstKey;
      return p + 1;
    }
    if (b[p] !== 44) return -1;
    p = ws(b, p + 1, e);
  }
  return -1;
}

/** Records a key of the current object; false when the object already has it. */
function newKey(b: Uint8Array, ks: number, ke: number, firstKey: number): boolean {
  const n = ke - ks;
  for (let k = firstKey; k < scan.keys; k++) {
    if (keyEnd[k] - keyStart[k] !== n) continue;
    let m = 0;
    const o = keyStart[k];
    while (m < n && b[o + m] === b[ks + m]) m++;
    if (m === n) return false;
  }
  if (scan.keys >= MAX_KEYS) return false;
  keyStart[scan.keys] = ks;
  keyEnd[scan.keys++] = ke;
  return true;
}

/** Writes `prefix.key` into the path buffer; returns its length (> MAX_PATH: not an alias). */
function extendPath(b: Uint8Array, ks: number, ke: number, pathLen: number): number {
  if (pathLen > MAX_PATH) return pathLen + 1 + (ke - ks);
  let o = pathLen;
  if (o > 0) {
    if (o >= MAX_PATH) return MAX_PATH + 1;
    path[o++] = 46;
  }
  if (o + (ke - ks) > MAX_PATH) return MAX_PATH + 1;
  for (let i = ks; i < ke; i++) path[o++] = b[i];
  return o;
}

function aliasOf(pathLen: number): number {
  return pathLen > MAX_PATH ? -1 : (scan.aliases as KeywordTable).lookup(path, 0, pathLen);
}

/** Scans one value at p; returns the index after it, or -1. */
function value(
  b: Uint8Array,
  p: number,
  e: number,
  depth: number,
  pathLen: number,
  rec: ParsedRecord,
): number {
  if (p >= e) return -1;
  const c = b[p];
  if (c === 34) {
    const end = stringEnd(b, p + 1, e);
    if (end < 0) return -1;
    hit(aliasOf(pathLen), b, p + 1, end, NaN, rec, scan.escaped);
    return end + 1;
  }
  if (c === 123) return depth + 1 > scan.maxDepth ? -1 : object(b, p + 1, e, depth + 1, pathLen, rec);
  if (c === 45 || (c >= 48 && c <= 57)) return integer(b, p, e, pathLen, rec);
  if (c === 116) return literal(b, p, e, TRUE, pathLen, rec);
  if (c === 102) return literal(b, p, e, FALSE, pathLen, rec);
  if (c === 110) return literal(b, p, e, NULL, pathLen, rec);
  return -1;
}

const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');
const NULL = Buffer.from('null');

function literal(
  b: Uint8Array,
  p: number,
  e: number,
  word: Buffer,
  pathLen: number,
  rec: ParsedRecord,
): number {
  const n = word.length;
  if (p + n > e) return -1;
  for (let i = 0; i < n; i++) if (b[p + i] !== word[i]) return -1;
  // null is skipped by the walk; true/false are written as their text.
  if (word !== NULL) hit(aliasOf(pathLen), b, p, p + n, NaN, rec, false);
  return p + n;
}

/** A JSON integer of at most 15 digits (its text is then exactly String(Number(text))). */
function integer(b: Uint8Array, p: number, e: number, pathLen: number, rec: ParsedRecord): number {
  const start = p;
  const negative = b[p] === 45;
  if (negative) p++;
  const ds = p;
  let v = 0;
  while (p < e && b[p] >= 48 && b[p] <= 57) v = v * 10 + (b[p++] - 48);
  const digits = p - ds;
  if (digits === 0 || digits > 15 || (digits > 1 && b[ds] === 48) || (negative && v === 0)) return -1;
  if (p < e && (b[p] === 46 || b[p] === 101 || b[p] === 69)) return -1;
  hit(aliasOf(pathLen), b, start, p, negative ? -v : v, rec, false);
  return p;
}

/** Copies an alias value into scratch and records it (column < 0: not an alias, nothing kept). */
function hit(
  column: number,
  b: Uint8Array,
  s: number,
  e: number,
  num: number,
  rec: ParsedRecord,
  escaped: boolean,
): void {
  if (column < 0) return;
  if (hits.count >= MAX_HITS) {
    scan.ok = false;
    return;
  }
  rec.ensureScratch(e - s);
  const out = rec.scratch;
  const vs = rec.scratchLen;
  let o = vs;
  // Escaped text only shrinks when decoded (\uXXXX: 6 bytes -> at most 3).
  if (escaped) o = unescapeInto(b, s, e, out, o);
  else for (let i = s; i < e; i++) out[o++] = b[i];
  rec.scratchLen = o;
  const h = hits.count++;
  hits.column[h] = column;
  hits.start[h] = vs;
  hits.end[h] = o;
  hits.number[h] = num;
}
