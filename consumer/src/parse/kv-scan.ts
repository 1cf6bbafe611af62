/**
 * A generic key/value scanner shared by the kv-shaped vendor formats (Sophos, SonicWall, Huawei,
 * Check Point) and the declarative `kv` parser: pairs separated by one byte (space, `,`, `;`),
 * key and value separated by one byte (`=`, `:`), values bare or quoted with backslash escapes.
 * Each pair is handed to a callback as spans; escaped values are unescaped into scratch once.
 */
import { BAD_KV } from './reasons';
import { ParsedRecord, UNESCAPE_BACKSLASH, VAL_SCRATCH } from './record';

/** Separator and quoting rules of one kv dialect. */
export interface KvDialect {
  /** Byte between pairs (spaces around it are skipped). */
  pairSep: number;
  /** Byte between key and value. */
  kvSep: number;
  /** Quote byte of quoted values (0: no quoting). */
  quote: number;
  /** A second accepted quote byte (0: none), e.g. `'` next to `"`. */
  quote2?: number;
  /** Tokens without a key/value separator are skipped instead of failing the line. */
  lenient: boolean;
}

/** Receives one pair; returns a dead-letter reason or null. `vb` is the source or the scratch buffer. */
export type KvPairHandler = (
  rec: ParsedRecord,
  ks: number,
  ke: number,
  vb: Buffer,
  vs: number,
  ve: number,
  scratch: boolean,
) => string | null;

/** Scan results of closingQuote: whether a backslash escape was seen. */
const quoted = { escaped: false };

function closingQuote(buf: Uint8Array, p: number, e: number, quote: number, clean: boolean): number {
  quoted.escaped = false;
  if (clean) {
    while (p < e && buf[p] !== quote) p++;
  } else {
    while (p < e && buf[p] !== quote) {
      if (buf[p] === 92) {
        quoted.escaped = true;
        p++;
      }
      p++;
    }
  }
  return p < e ? p : -1;
}

/**
 * Scans [s, e) as pairs of `dialect`, calling `onPair` for each. Returns the number of pairs
 * (>= 0) or -1 with the reason left in `scanKv.reason`.
 */
export function scanKv(
  buf: Buffer,
  s: number,
  e: number,
  rec: ParsedRecord,
  dialect: KvDialect,
  onPair: KvPairHandler,
): number {
  const { pairSep, kvSep, quote, lenient } = dialect;
  const quote2 = dialect.quote2 ?? 0;
  const collect = rec.collectFields;
  let p = s;
  let pairs = 0;
  while (p < e) {
    while (p < e && (buf[p] === 32 || buf[p] === pairSep)) p++;
    if (p >= e) break;
    const ks = p;
    while (p < e && buf[p] !== kvSep && buf[p] !== pairSep && (pairSep !== 32 || buf[p] !== 32)) p++;
    if (p >= e || buf[p] !== kvSep || p === ks) {
      if (!lenient) return fail(BAD_KV);
      while (p < e && buf[p] !== pairSep) p++;
      continue;
    }
    let ke = p++;
    while (ke > ks && buf[ke - 1] === 32) ke--;
    while (p < e && buf[p] === 32 && pairSep !== 32) p++;
    let vs = p;
    let ve: number;
    let vb = buf;
    let scratch = false;
    const q = p < e ? buf[p] : 0;
    if (quote !== 0 && (q === quote || (q === quote2 && quote2 !== 0))) {
      vs = p + 1;
      ve = closingQuote(buf, vs, e, q, rec.srcClean);
      if (ve < 0) return fail(BAD_KV);
      p = ve + 1;
      if (quoted.escaped) {
        vs = rec.unescapeToScratch(buf, vs, ve, UNESCAPE_BACKSLASH);
        ve = rec.scratchLen;
        vb = rec.scratch;
        scratch = true;
      }
    } else {
      while (p < e && buf[p] !== pairSep) p++;
      ve = p;
      while (ve > vs && buf[ve - 1] === 32) ve--;
    }
    pairs++;
    if (collect) rec.addField(ks, ke, vs, ve, scratch ? VAL_SCRATCH : 0);
    const reason = onPair(rec, ks, ke, vb, vs, ve, scratch);
    if (reason !== null) return fail(reason);
  }
  return pairs;
}

function fail(reason: string): number {
  scanKv.reason = reason;
  return -1;
}
/** Reason of the last failed scanKv call. */
scanKv.reason = BAD_KV as string;
