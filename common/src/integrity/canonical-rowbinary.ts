/**
 * RowBinary rows -> canonical rows (canonical.ts), directly: the same bytes the canonical form
 * gives the TabSeparated text of those rows (Strings and Enum names TSV-escaped, integers and
 * DateTime seconds in decimal, DateTime64 as epoch milliseconds, IPv4 and IPv6 as 32 hex digits of
 * the IPv4-mapped 16 bytes, NULL as `\N`), without rendering the TSV first. Everything the TSV
 * route refused is refused here too, with an error instead of a digest: a DateTime64 before 1970
 * or with more than 15 digits of seconds (parseEpochMs), an Enum value the type does not declare,
 * a column type without a canonical form. The time column's range is tracked exactly like the
 * TSV route tracks it. Used by BatchDigester.addRowBinary.
 */
import { T_DATETIME, T_DATETIME64, T_ENUM, T_INT, T_IPV4, T_IPV6, T_STRING } from '../columns/column-type';
import type { CanonicalColumn } from './canonical-ops';
import { compileColumn, ESCAPE, writeDecimal, type Col } from './canonical-rowbinary-plan';

const HEX = Buffer.from('0123456789abcdef', 'latin1');
/** The IPv4-mapped prefix ::ffff: as canonical hex (20 zeros, then ffff). */
const MAPPED = Buffer.from('00000000000000000000ffff', 'latin1');
const TWO_32 = 2 ** 32;
/** From this length on, native byte scans beat escaping byte by byte in JavaScript. */
const NATIVE_SCAN_BYTES = 64;
/** The bytes TSV escapes: backslash, tab, LF, CR. */
const ESCAPED_BYTES = [92, 9, 10, 13];

/** Canonicalises RowBinary rows of one column list; not re-entrant (fields hold the last row's state). */
export class RowBinaryCanonical {
  private readonly cols: Col[];
  /** Canonical bytes a row may need beyond twice its RowBinary bytes. */
  readonly slack: number;
  /** Time column value (epoch ms as the TSV route tracks it) of the last written row; NaN when NULL. */
  timeMs = NaN;
  /** Column whose canonical span write() records in markStart/markEnd (-1: none). */
  mark = -1;
  markStart = 0;
  markEnd = 0;
  /** Why the last write() or rowEnd() failed. */
  error = '';
  /**
   * Per escaped byte, its next position at or after the last scan start in the current body
   * (body length when none): the body is read front to back, so each byte value is scanned
   * natively at most once per body, with no per-string views.
   */
  private readonly nextEscape = new Float64Array(ESCAPED_BYTES.length);
  private scanned: Buffer | undefined;

  /** Throws RangeError for a column type without a canonical form. */
  constructor(columns: readonly CanonicalColumn[], timeColumn = 'ts') {
    let slack = 16;
    this.cols = columns.map((c) => {
      const col = compileColumn(c, c.name === timeColumn);
      let maxName = 0;
      for (const n of col.enumNames.values()) maxName = Math.max(maxName, n.length);
      slack += 1 + maxName + (col.kind === T_IPV4 || col.kind === T_IPV6 ? 32 : 22);
      return col;
    });
    this.slack = slack;
  }

  /** End (exclusive) of the row that starts at `p`, or -1 when it runs past `end` (error set). */
  rowEnd(b: Buffer, p: number, end: number): number {
    const cols = this.cols;
    for (let k = 0; k < cols.length; k++) {
      const c = cols[k];
      if (c.nullable) {
        if (p >= end) return this.fail('row cut short');
        if (b[p++] === 1) continue;
      }
      if (c.width > 0) {
        p += c.width;
        continue;
      }
      let len = 0;
      let shift = 1;
      for (;;) {
        if (p >= end) return this.fail('row cut short');
        const x = b[p++];
        len += (x & 0x7f) * shift;
        if (x < 0x80) break;
        shift *= 128;
      }
      p += len;
    }
    return p > end ? this.fail('row cut short') : p;
  }

  /**
   * Writes the canonical row (LF-terminated) of the RowBinary row at `p` into `out` at `o` (room:
   * twice the row's bytes plus `slack`); returns the new position, or -1 with `error` set.
   */
  write(b: Buffer, p: number, out: Buffer, o: number): number {
    const cols = this.cols;
    this.timeMs = NaN;
    for (let k = 0; k < cols.length; k++) {
      const c = cols[k];
      if (k > 0) {
        if (k - 1 === this.mark) this.markEnd = o;
        out[o++] = 9;
      }
      if (k === this.mark) this.markStart = o;
      if (c.nullable && b[p++] === 1) {
        out[o++] = 92;
        out[o++] = 78;
        continue;
      }
      switch (c.kind) {
        case T_STRING: {
          let len = 0;
          let shift = 1;
          for (;;) {
            const x = b[p++];
            len += (x & 0x7f) * shift;
            if (x < 0x80) break;
            shift *= 128;
          }
          const e = p + len;
          if (len >= NATIVE_SCAN_BYTES && !this.escapeWithin(b, p, e)) {
            // Long strings without anything to escape (most raw lines): native scans and one memcpy.
            o += b.copy(out, o, p, e);
            p = e;
            break;
          }
          for (; p < e; p++) {
            const v = b[p];
            const x = ESCAPE[v];
            if (x === 0) out[o++] = v;
            else {
              out[o++] = 92;
              out[o++] = x;
            }
          }
          break;
        }
        case T_ENUM: {
          const v = c.width === 2 ? b.readInt16LE(p) : b.readInt8(p);
          p += c.width;
          const name = c.enumNames.get(v);
          if (!name) return this.fail(`column ${k}: enum value ${v} not declared`);
          o += name.copy(out, o);
          break;
        }
        case T_INT:
          o = this.integer(c, b, p, out, o);
          p += c.width;
          break;
        case T_DATETIME: {
          const sec = b.readUInt32LE(p);
          p += 4;
          o = writeDecimal(sec, out, o);
          // Epoch ms, as the TSV route tracks it (link v1 recorded seconds × 10^6 here).
          if (c.isTime) this.timeMs = sec * 1000;
          break;
        }
        case T_DATETIME64: {
          const ms = this.epochMs(c, b, p);
          p += 8;
          if (ms < 0) return this.fail(`column ${k}: not an epoch time`);
          o = writeDecimal(ms, out, o);
          if (c.isTime) this.timeMs = ms;
          break;
        }
        case T_IPV4: {
          o += MAPPED.copy(out, o);
          for (let j = 3; j >= 0; j--) {
            const x = b[p + j];
            out[o++] = HEX[x >> 4];
            out[o++] = HEX[x & 15];
          }
          p += 4;
          break;
        }
        default: {
          // T_IPV6: the 16 stored bytes in order.
          for (let j = 0; j < 16; j++) {
            const x = b[p++];
            out[o++] = HEX[x >> 4];
            out[o++] = HEX[x & 15];
          }
        }
      }
    }
    if (this.mark === cols.length - 1) this.markEnd = o;
    out[o++] = 10;
    return o;
  }

  /** Starts reading `body` from its front (call before the first row of each payload or range). */
  begin(body: Buffer): void {
    this.scanned = body;
    this.nextEscape.fill(-1);
  }

  /** True when [p, e) of the body holds a byte TSV escapes. */
  private escapeWithin(b: Buffer, p: number, e: number): boolean {
    if (b !== this.scanned) this.begin(b);
    const next = this.nextEscape;
    for (let k = 0; k < ESCAPED_BYTES.length; k++) {
      let at = next[k];
      if (at < p) {
        at = b.indexOf(ESCAPED_BYTES[k], p);
        next[k] = at = at < 0 ? b.length : at;
      }
      if (at < e) return true;
    }
    return false;
  }

  /** An integer in decimal (what String() gives; exact for all 64-bit values). */
  private integer(c: Col, b: Buffer, p: number, out: Buffer, o: number): number {
    let v: number;
    if (c.width === 8) {
      const lo = b.readUInt32LE(p);
      const hi = c.signed ? b.readInt32LE(p + 4) : b.readUInt32LE(p + 4);
      // Beyond 2^53 a double is inexact: fall back to BigInt text.
      if (hi >= 0x200000 || hi < -0x200000) {
        const text = String(c.signed ? b.readBigInt64LE(p) : b.readBigUInt64LE(p));
        return o + out.write(text, o, 'latin1');
      }
      v = hi * TWO_32 + lo;
    } else if (c.width === 4) v = c.signed ? b.readInt32LE(p) : b.readUInt32LE(p);
    else if (c.width === 2) v = c.signed ? b.readInt16LE(p) : b.readUInt16LE(p);
    else v = c.signed ? b.readInt8(p) : b[p];
    if (v < 0) {
      out[o++] = 45;
      v = -v;
    }
    return writeDecimal(v, out, o);
  }

  /** Epoch ms of a DateTime64 the way parseEpochMs reads its TSV text; -1 where that text is refused. */
  private epochMs(c: Col, b: Buffer, p: number): number {
    const lo = b.readUInt32LE(p);
    const hi = b.readInt32LE(p + 4);
    if (hi < 0) return -1; // before 1970: the text starts with '-'
    let sec: number;
    let frac: number;
    if (hi < 0x200000) {
      // Exact: ticks < 2^53, and (ticks - frac) is a multiple of scale.
      const ticks = hi * TWO_32 + lo;
      frac = ticks % c.scale;
      sec = (ticks - frac) / c.scale;
    } else {
      const ticks = b.readBigInt64LE(p);
      const scale = BigInt(c.scale);
      sec = Number(ticks / scale);
      frac = Number(ticks % scale);
    }
    // parseEpochMs refuses more than 15 digits of seconds.
    if (sec >= 1e15) return -1;
    return sec * 1000 + (c.fracDiv > 1 ? Math.floor(frac / c.fracDiv) : frac * c.fracMul);
  }

  private fail(message: string): -1 {
    this.error = message;
    return -1;
  }
}
