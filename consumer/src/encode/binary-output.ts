/**
 * One growable output buffer for RowBinary rows, reused across batches, plus the byte offset where
 * each row starts (row isolation and regrouping cut the body by rows without re-parsing it: RowBinary
 * has no row delimiter). Little-endian fixed-width integers, LEB128 lengths, raw string bytes.
 */

import {
  DECIMAL_MAX,
  putDecimal,
  putI64,
  putIpv4Mapped,
  putLatin1,
  putScaledI64,
  putString,
  STRING_HEAD_MAX,
} from './binary-put';

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
    this.pos = putI64(this.buf, this.pos, v);
  }

  /** The IPv6 column value of IPv4 address `v4` (a 32-bit value): ::ffff:a.b.c.d, 16 bytes. */
  ipv4Mapped(v4: number): void {
    this.ensure(16);
    this.pos = putIpv4Mapped(this.buf, this.pos, v4);
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
    this.ensure(8);
    this.pos = putScaledI64(this.buf, this.pos, ms, scale);
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
    this.ensure(e - s + STRING_HEAD_MAX);
    this.pos = putString(this.buf, this.pos, src, s, e);
  }

  /** A String value holding a short Latin-1 text (protocol names). */
  latin1String(text: string): void {
    this.ensure(text.length + 1);
    this.pos = putLatin1(this.buf, this.pos, text);
  }

  /** A String value holding the decimal text of 0 <= n < 2^53 (numbers in String columns). */
  decimalString(n: number): void {
    this.ensure(DECIMAL_MAX);
    this.pos = putDecimal(this.buf, this.pos, n);
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
