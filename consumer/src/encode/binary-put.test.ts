import { putString } from './binary-put';

/** The RowBinary String of bytes [s, e) spelled out: LEB128 length, then the bytes. */
function expected(src: Uint8Array, s: number, e: number): number[] {
  const out: number[] = [];
  let n = e - s;
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  for (let i = s; i < e; i++) out.push(src[i]);
  return out;
}

describe('putString', () => {
  // Short spans are copied by a loop, long ones natively: the whole source with TypedArray set,
  // a part of it with Buffer.copy. Every path writes the same bytes at the same place.
  it.each([0, 1, 95, 96, 97, 127, 128, 600, 20_000])('writes %i bytes whole and in part', (len) => {
    const src = Buffer.alloc(len + 4);
    for (let i = 0; i < src.length; i++) src[i] = (i * 37 + 11) & 0xff;
    const whole = src.subarray(2, 2 + len);
    const spans: Array<[Uint8Array, number, number]> = [
      [whole, 0, len],
      [src, 2, 2 + len],
      [new Uint8Array(whole), 0, len],
    ];
    for (const [b, s, e] of spans) {
      const dst = Buffer.alloc(len + 16, 0xee);
      const end = putString(dst, 3, b, s, e);
      const want = expected(b, s, e);
      expect(end).toBe(3 + want.length);
      expect(Array.from(dst.subarray(3, end))).toEqual(want);
      expect(dst[2]).toBe(0xee);
      expect(dst[end]).toBe(0xee);
    }
  });
});
