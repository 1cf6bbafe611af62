/**
 * RowBinary value writers as plain functions over (buffer, position): each writes at `pos` and
 * returns the position after the value, the caller having made room. BinaryOutput's methods and
 * the generated row writers (rowbinary-codegen.ts, which keep the position in a local) share them,
 * so both write the same bytes.
 */

/** Spans at least this long are copied natively; shorter ones with a JS loop (cheaper than the call). */
const NATIVE_COPY_MIN = 96;

const TWO_32 = 4294967296;

/** Room a String value needs beyond its bytes (LEB128 length of up to 2^35). */
export const STRING_HEAD_MAX = 5;
/** Room a decimal String value needs (length byte + up to 16 digits below 2^53). */
export const DECIMAL_MAX = 18;

/** Any integer |v| < 2^53 as 64-bit two's complement (negative values included). */
export function putI64(b: Uint8Array, o: number, v: number): number {
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
  return o + 8;
}

/** A 32-bit value little-endian. */
export function putU32(b: Uint8Array, o: number, v: number): number {
  b[o] = v;
  b[o + 1] = v >>> 8;
  b[o + 2] = v >>> 16;
  b[o + 3] = v >>> 24;
  return o + 4;
}

/** The IPv6 column value of IPv4 address `v4` (a 32-bit value): ::ffff:a.b.c.d, 16 bytes. */
export function putIpv4Mapped(b: Uint8Array, o: number, v4: number): number {
  for (let i = o; i < o + 10; i++) b[i] = 0;
  b[o + 10] = 0xff;
  b[o + 11] = 0xff;
  b[o + 12] = v4 >>> 24;
  b[o + 13] = v4 >>> 16;
  b[o + 14] = v4 >>> 8;
  b[o + 15] = v4;
  return o + 16;
}

/** ms * 10^scale as Int64, exact beyond 2^53 (DateTime64 with more than millisecond precision). */
export function putScaledI64(b: Uint8Array, o: number, ms: number, scale: number): number {
  const hiMs = Math.floor(ms / TWO_32);
  const loMs = ms - hiMs * TWO_32;
  const low = loMs * scale; // < 2^52
  const carry = Math.floor(low / TWO_32);
  putU32(b, o, low - carry * TWO_32);
  return putU32(b, o + 4, (hiMs * scale + carry) | 0);
}

/** A String value: LEB128 length, then the bytes [s, e) of `src` as they are. */
export function putString(b: Buffer, o: number, src: Uint8Array, s: number, e: number): number {
  const n = e - s;
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
    // The whole source (a single-line message's `raw`): TypedArray set is a plain memcpy, about
    // 100 ns cheaper than Buffer.copy's argument checks. A part of it: Buffer.copy, which makes no
    // view object per value (subarray + set allocates one).
    if (s === 0 && e === src.length) b.set(src, o);
    else Buffer.prototype.copy.call(src, b, o, s, e);
    return o + n;
  }
  for (let i = s; i < e; i++) b[o++] = src[i];
  return o;
}

/** A String value holding a short Latin-1 text (protocol names). */
export function putLatin1(b: Uint8Array, o: number, text: string): number {
  b[o++] = text.length;
  for (let i = 0; i < text.length; i++) b[o++] = text.charCodeAt(i) & 0xff;
  return o;
}

/** A String value holding the decimal text of 0 <= n < 2^53 (numbers in String columns). */
export function putDecimal(b: Uint8Array, o: number, n: number): number {
  const lenAt = o++;
  const start = o;
  if (n >= 1e9) {
    const high = Math.floor(n / 1e9);
    o = putDigits(b, o, high, digitCount(high));
    o = putDigits(b, o, n - high * 1e9, 9);
  } else o = putDigits(b, o, n, digitCount(n));
  b[lenAt] = o - start;
  return o;
}

function digitCount(n: number): number {
  let len = 1;
  for (let x = n; x >= 10; x = Math.floor(x / 10)) len++;
  return len;
}

/** `n` as exactly `width` decimal digits (zero-padded). */
function putDigits(b: Uint8Array, o: number, n: number, width: number): number {
  for (let p = o + width - 1; p >= o; p--) {
    const q = Math.floor(n / 10);
    b[p] = 48 + (n - q * 10);
    n = q;
  }
  return o + width;
}
