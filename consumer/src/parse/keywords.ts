/**
 * Span -> small integer lookup for the parsers' keys (`srcip`, `SPT`, `act`) and value words
 * (`accept` -> allow) without building a string. Candidates are found by a signature of length,
 * first and last byte (no per-byte hashing), then verified byte by byte. Letters are folded to
 * the same signature in either case, so the same table serves case-insensitive lookups.
 */
import { lowerAscii } from './bytes';

const MAX_LEN = 48;
const NONE = -1;

/** 15-bit signature: length mod 32, and the low five bits of the first and last byte. */
function signature(len: number, first: number, last: number): number {
  return ((len & 31) << 10) | ((first & 31) << 5) | (last & 31);
}

/** Maps byte spans to integer ids; `lookup` returns -1 for spans that are not keywords. */
export class KeywordTable {
  /** First candidate per signature, then a chain through `next`. */
  private readonly heads = new Int16Array(1 << 15).fill(NONE);
  private readonly next: number[] = [];
  private readonly keys: Uint8Array[] = [];
  private readonly values: number[] = [];
  private readonly ignoreCase: boolean;

  /** Builds the table; with `ignoreCase` keys are stored lower-case and matched case-insensitively. */
  constructor(entries: ReadonlyArray<readonly [string, number]>, ignoreCase = false) {
    this.ignoreCase = ignoreCase;
    for (const [key, value] of entries) this.add(ignoreCase ? key.toLowerCase() : key, value);
  }

  private add(key: string, value: number): void {
    const bytes = Buffer.from(key, 'utf8');
    const n = bytes.length;
    if (n === 0 || n > MAX_LEN || this.keys.length >= 32767)
      throw new RangeError(`keyword out of range: ${key}`);
    if (this.lookup(bytes, 0, n) >= 0) return;
    const sig = signature(n, bytes[0], bytes[n - 1]);
    this.next.push(this.heads[sig]);
    this.heads[sig] = this.keys.length;
    this.keys.push(bytes);
    this.values.push(value);
  }

  /** Id of the keyword spelled by [s, e), or -1. */
  lookup(buf: Uint8Array, s: number, e: number): number {
    const len = e - s;
    if (len <= 0 || len > MAX_LEN) return NONE;
    let idx = this.heads[signature(len, buf[s], buf[e - 1])];
    while (idx !== NONE) {
      if (this.matches(this.keys[idx], buf, s, len)) return this.values[idx];
      idx = this.next[idx];
    }
    return NONE;
  }

  private matches(key: Uint8Array, buf: Uint8Array, s: number, len: number): boolean {
    if (key.length !== len) return false;
    if (this.ignoreCase) {
      for (let i = 0; i < len; i++) if (lowerAscii(buf[s + i]) !== key[i]) return false;
    } else {
      for (let i = 0; i < len; i++) if (buf[s + i] !== key[i]) return false;
    }
    return true;
  }
}
