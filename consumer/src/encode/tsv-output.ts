/**
 * One growable output buffer for TabSeparated rows, reused across batches. Writes digits, epoch
 * times and escaped byte spans straight into the buffer; no intermediate strings.
 * TSV escaping: tab, line feed, carriage return and backslash become `\t`, `\n`, `\r`, `\\`
 * (ClickHouse rejects a raw CR at a row end); `\N` is NULL.
 */

const ESCAPE = new Uint8Array(256);
ESCAPE[9] = 116; // \t
ESCAPE[10] = 110; // \n
ESCAPE[13] = 114; // \r
ESCAPE[92] = 92; // \\

/** "00".."99" as bytes: digit pairs for two-at-a-time decimal formatting. */
const DIGIT_PAIRS = new Uint8Array(200);
for (let i = 0; i < 100; i++) {
  DIGIT_PAIRS[i * 2] = 48 + ((i / 10) | 0);
  DIGIT_PAIRS[i * 2 + 1] = 48 + (i % 10);
}

/** Spans at least this long are copied natively; shorter ones with a JS loop (cheaper than the call). */
const NATIVE_COPY_MIN = 96;

/** Growable byte buffer with TSV-aware writers. */
export class TsvOutput {
  buf: Buffer;
  pos = 0;
  private readonly cachedSeconds = [-1, -1];
  private readonly cachedLengths = [0, 0];
  private readonly cachedDigits = Buffer.alloc(32);
  private nextCacheSlot = 0;

  /** Allocates the initial buffer (it grows by doubling and is never shrunk). */
  constructor(initialBytes = 1 << 20) {
    this.buf = Buffer.allocUnsafe(initialBytes);
  }

  /** Guarantees room for `n` more bytes. */
  ensure(n: number): void {
    if (this.pos + n > this.buf.length) this.grow(n);
  }

  private grow(n: number): void {
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** Appends one byte (room must have been ensured). */
  byte(c: number): void {
    this.buf[this.pos++] = c;
  }

  /** Appends `\N`. */
  nullValue(): void {
    this.ensure(2);
    this.buf[this.pos++] = 92;
    this.buf[this.pos++] = 78;
  }

  /** Appends a non-negative integer (< 2^53) in decimal. */
  uint(n: number): void {
    this.ensure(16);
    if (n <= 0x7fffffff) {
      this.smallUint(n);
      return;
    }
    // Split so each part fits int32 arithmetic: high part, then nine zero-padded digits.
    const high = Math.floor(n / 1e9);
    this.smallUint(high);
    this.padded(n - high * 1e9, 9);
  }

  /** Decimal digits of 0 <= n < 2^31, two digits per (int32) division. */
  private smallUint(n: number): void {
    const len =
      n < 1e5
        ? n < 100
          ? n < 10
            ? 1
            : 2
          : n < 1e3
            ? 3
            : n < 1e4
              ? 4
              : 5
        : n < 1e7
          ? n < 1e6
            ? 6
            : 7
          : n < 1e8
            ? 8
            : n < 1e9
              ? 9
              : 10;
    const b = this.buf;
    let o = this.pos + len;
    while (n >= 100) {
      const q = (n / 100) | 0;
      const r = (n - q * 100) << 1;
      b[--o] = DIGIT_PAIRS[r + 1];
      b[--o] = DIGIT_PAIRS[r];
      n = q;
    }
    if (n >= 10) {
      b[--o] = DIGIT_PAIRS[(n << 1) + 1];
      b[--o] = DIGIT_PAIRS[n << 1];
    } else {
      b[--o] = 48 + n;
    }
    this.pos += len;
  }

  /** Appends exactly `width` digits of `n`, zero-padded (for fractions). */
  padded(n: number, width: number): void {
    this.ensure(width);
    const b = this.buf;
    for (let o = this.pos + width - 1; o >= this.pos; o--) {
      const q = (n / 10) | 0;
      b[o] = 48 + (n - q * 10);
      n = q;
    }
    this.pos += width;
  }

  /** Appends epoch ms as `seconds[.fraction]` with `precision` fraction digits (DateTime64 input). */
  epochSeconds(ms: number, precision: number): void {
    const sec = Math.floor(ms / 1000);
    this.seconds(sec);
    if (precision === 0) return;
    this.ensure(precision + 1);
    this.buf[this.pos++] = 46;
    const frac = ms - sec * 1000;
    if (precision === 3) {
      this.padded(frac, 3);
    } else if (precision < 3) {
      this.padded((frac / 10 ** (3 - precision)) | 0, precision);
    } else {
      this.padded(frac, 3);
      this.buf.fill(48, this.pos, this.pos + precision - 3);
      this.pos += precision - 3;
    }
  }

  /**
   * Appends epoch seconds. Rows mostly share the event second and always the batch's ingest second,
   * so the digits of the two most recent distinct values are cached.
   */
  seconds(sec: number): void {
    this.ensure(16);
    let slot = sec === this.cachedSeconds[0] ? 0 : sec === this.cachedSeconds[1] ? 1 : -1;
    if (slot < 0) {
      slot = this.nextCacheSlot;
      this.nextCacheSlot ^= 1;
      const start = this.pos;
      this.uint(sec);
      this.cachedSeconds[slot] = sec;
      this.cachedLengths[slot] = this.pos - start;
      this.buf.copy(this.cachedDigits, slot * 16, start, this.pos);
      return;
    }
    const b = this.buf;
    const d = this.cachedDigits;
    const n = this.cachedLengths[slot];
    const o = this.pos;
    for (let i = 0, j = slot * 16; i < n; i++, j++) b[o + i] = d[j];
    this.pos = o + n;
  }

  /** Appends [s, e) of `src` escaping TSV specials. */
  escaped(src: Uint8Array, s: number, e: number): void {
    this.ensure((e - s) * 2);
    const b = this.buf;
    let o = this.pos;
    for (let i = s; i < e; i++) {
      const c = src[i];
      const x = ESCAPE[c];
      if (x === 0) {
        b[o++] = c;
      } else {
        b[o++] = 92;
        b[o++] = x;
      }
    }
    this.pos = o;
  }

  /** Appends [s, e) of `src` verbatim: the caller knows it holds no TSV specials. */
  verbatim(src: Buffer, s: number, e: number): void {
    const n = e - s;
    this.ensure(n);
    if (n >= NATIVE_COPY_MIN) {
      src.copy(this.buf, this.pos, s, e);
      this.pos += n;
      return;
    }
    const b = this.buf;
    let o = this.pos;
    for (let i = s; i < e; i++) b[o++] = src[i];
    this.pos = o;
  }

  /** Appends a short Latin-1 string (protocol names), escaping TSV specials. */
  latin1Text(text: string): void {
    this.ensure(text.length * 2);
    const b = this.buf;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i) & 0xff;
      const x = ESCAPE[c];
      if (x === 0) {
        b[this.pos++] = c;
      } else {
        b[this.pos++] = 92;
        b[this.pos++] = x;
      }
    }
  }
}

/** True when [s, e) contains a byte TSV must escape (used for scratch and unknown spans). */
export function needsEscape(src: Uint8Array, s: number, e: number): boolean {
  for (let i = s; i < e; i++) if (ESCAPE[src[i]] !== 0) return true;
  return false;
}
