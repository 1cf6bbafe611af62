/**
 * One growable output buffer for RowBinary rows, reused across batches, plus the byte offset where
 * each row starts (row isolation and regrouping cut the body by rows without re-parsing it: RowBinary
 * has no row delimiter). Little-endian fixed-width integers, LEB128 lengths, raw string bytes.
 */

/** Spans at least this long are copied natively; shorter ones with a JS loop (cheaper than the call). */
const NATIVE_COPY_MIN = 96;

const TWO_32 = 4294967296;

/** "00".."99" as bytes (decimal text of numbers written into String columns). */
const DIGIT_PAIRS = new Uint8Array(200);
for (let i = 0; i < 100; i++) {
  DIGIT_PAIRS[i * 2] = 48 + ((i / 10) | 0);
  DIGIT_PAIRS[i * 2 + 1] = 48 + (i % 10);
}

/** Growable byte buffer with RowBinary writers and a row-start index. */
export class BinaryOutput {
  buf: Buffer;
  pos = 0;
  /** rowStarts[i] = offset of row i; rowStarts[rows] = end after finishRows(). */
  rowStarts = new Uint32Array(1024);
  rows = 0;

  constructor(initialBytes = 1 << 20) {
    this.buf = Buffer.allocUnsafe(initialBytes);
  }

  /** Starts a batch: empties the buffer and the row index. */
  reset(): void {
    this.pos = 0;
    this.rows = 0;
  }

  /** Records that a row starts at the current position (call when the row is known to be kept). */
  commitRow(start: number): void {
    if (this.rows + 1 >= this.rowStarts.length) {
      const grown = new Uint32Array(this.rowStarts.length * 2);
      grown.set(this.rowStarts);
      this.rowStarts = grown;
    }
    this.rowStarts[this.rows++] = start;
  }

  /** Forgets rows starting at or after byte `pos` (a line rolled back after its row was committed). */
  dropRowsFrom(pos: number): void {
    while (this.rows > 0 && this.rowStarts[this.rows - 1] >= pos) this.rows--;
  }

  /** The row index for the batch: rows + 1 entries, the last one the body's end (a copy). */
  rowIndex(): Uint32Array {
    const out = new Uint32Array(this.rows + 1);
    out.set(this.rowStarts.subarray(0, this.rows));
    out[this.rows] = this.pos;
    return out;
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

  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }

  u16(v: number): void {
    this.ensure(2);
    const b = this.buf;
    b[this.pos++] = v;
    b[this.pos++] = v >>> 8;
  }

  u32(v: number): void {
    this.ensure(4);
    const b = this.buf;
    const o = this.pos;
    b[o] = v;
    b[o + 1] = v >>> 8;
    b[o + 2] = v >>> 16;
    b[o + 3] = v >>> 24;
    this.pos = o + 4;
  }

  /** Any integer |v| < 2^53 as 64-bit two's complement (negative values included). */
  i64(v: number): void {
    this.ensure(8);
    const b = this.buf;
    const o = this.pos;
    // ToUint32 is v mod 2^32 for every integer, so the low word needs no division.
    const lo = v >>> 0;
    const hi = ((v - lo) / TWO_32) | 0;
    b[o] = lo;
    b[o + 1] = lo >>> 8;
    b[o + 2] = lo >>> 16;
    b[o + 3] = lo >>> 24;
    b[o + 4] = hi;
    b[o + 5] = hi >>> 8;
    b[o + 6] = hi >>> 16;
    b[o + 7] = hi >>> 24;
    this.pos = o + 8;
  }

  /** The IPv6 column value of IPv4 address `v4` (a 32-bit value): ::ffff:a.b.c.d, 16 bytes. */
  ipv4Mapped(v4: number): void {
    this.ensure(16);
    const b = this.buf;
    const o = this.pos;
    for (let i = o; i < o + 10; i++) b[i] = 0;
    b[o + 10] = 0xff;
    b[o + 11] = 0xff;
    b[o + 12] = v4 >>> 24;
    b[o + 13] = v4 >>> 16;
    b[o + 14] = v4 >>> 8;
    b[o + 15] = v4;
    this.pos = o + 16;
  }

  /** An integer of `bits` width (8/16/32/64), two's complement for negatives. */
  int(v: number, bits: number): void {
    if (bits === 64) this.i64(v);
    else if (bits === 32) this.u32(v);
    else if (bits === 16) this.u16(v);
    else this.u8(v);
  }

  /** A value known to be exact only as a BigInt (64-bit text beyond 2^53). */
  big64(v: bigint): void {
    this.ensure(8);
    this.buf.writeBigUInt64LE(BigInt.asUintN(64, v), this.pos);
    this.pos += 8;
  }

  /** ms * 10^scale as Int64, exact beyond 2^53 (DateTime64 with more than millisecond precision). */
  scaledI64(ms: number, scale: number): void {
    const hiMs = Math.floor(ms / TWO_32);
    const loMs = ms - hiMs * TWO_32;
    const low = loMs * scale; // < 2^52
    const carry = Math.floor(low / TWO_32);
    this.u32(low - carry * TWO_32);
    this.u32((hiMs * scale + carry) | 0);
  }

  /** LEB128 unsigned length. */
  varint(n: number): void {
    this.ensure(10);
    const b = this.buf;
    while (n >= 0x80) {
      b[this.pos++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 128);
    }
    b[this.pos++] = n;
  }

  /** A String value: length, then the bytes [s, e) of `src` as they are. */
  string(src: Uint8Array, s: number, e: number): void {
    const n = e - s;
    this.ensure(n + 5);
    const b = this.buf;
    let o = this.pos;
    if (n < 0x80) b[o++] = n;
    else {
      let m = n;
      while (m >= 0x80) {
        b[o++] = (m & 0x7f) | 0x80;
        m >>>= 7;
      }
      b[o++] = m;
    }
    if (n >= NATIVE_COPY_MIN) {
      // Buffer.copy: no view object per value (subarray + set allocates one).
      Buffer.prototype.copy.call(src, b, o, s, e);
      this.pos = o + n;
      return;
    }
    for (let i = s; i < e; i++) b[o++] = src[i];
    this.pos = o;
  }

  /** A String value holding a short Latin-1 text (protocol names). */
  latin1String(text: string): void {
    this.ensure(text.length + 1);
    const b = this.buf;
    b[this.pos++] = text.length;
    for (let i = 0; i < text.length; i++) b[this.pos++] = text.charCodeAt(i) & 0xff;
  }

  /** A String value holding the decimal text of 0 <= n < 2^53 (numbers in String columns). */
  decimalString(n: number): void {
    this.ensure(18);
    const lenAt = this.pos++;
    const start = this.pos;
    if (n >= 1e9) {
      const high = Math.floor(n / 1e9);
      this.digits(high);
      this.padded(n - high * 1e9, 9);
    } else this.digits(n);
    this.buf[lenAt] = this.pos - start;
  }

  private digits(n: number): void {
    let len = 1;
    for (let x = n; x >= 10; x = Math.floor(x / 10)) len++;
    this.padded(n, len);
  }

  private padded(n: number, width: number): void {
    const b = this.buf;
    for (let o = this.pos + width - 1; o >= this.pos; o--) {
      const q = Math.floor(n / 10);
      b[o] = 48 + (n - q * 10);
      n = q;
    }
    this.pos += width;
  }

  /** `n` zero bytes (type defaults: 0, 0.0.0.0, ::). */
  zeros(n: number): void {
    this.ensure(n);
    const b = this.buf;
    for (let i = this.pos; i < this.pos + n; i++) b[i] = 0;
    this.pos += n;
  }

  /** Copies pre-encoded bytes (static values). */
  raw(src: Buffer): void {
    this.ensure(src.length);
    src.copy(this.buf, this.pos);
    this.pos += src.length;
  }
}
