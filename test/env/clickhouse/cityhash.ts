/**
 * CityHash128 as ClickHouse bundles it (CityHash v1.0.2, which differs from later CityHash
 * releases), the checksum in front of every block of ClickHouse's compressed-block framing
 * (`decompress=1` request bodies). 64-bit arithmetic in BigInt: slow, but the test bed hashes only
 * what clients send it with `decompress=1`.
 */

const MASK = (1n << 64n) - 1n;
const K0 = 0xc3a5c85c97cb3127n;
const K1 = 0xb492b66fbe98f273n;
const K2 = 0x9ae16a3b2f90404fn;
const K3 = 0xc949d7c7509e6557n;
const K_MUL = 0x9ddfea08eb382d69n;

const mul = (a: bigint, b: bigint) => (a * b) & MASK;
const add = (a: bigint, b: bigint) => (a + b) & MASK;
const sub = (a: bigint, b: bigint) => (a - b) & MASK;

function rotate(v: bigint, shift: number): bigint {
  if (shift === 0) return v;
  const s = BigInt(shift);
  return ((v >> s) | (v << (64n - s))) & MASK;
}

const shiftMix = (v: bigint) => v ^ (v >> 47n);

function hashLen16(u: bigint, v: bigint): bigint {
  let a = mul(u ^ v, K_MUL);
  a ^= a >> 47n;
  let b = mul(v ^ a, K_MUL);
  b ^= b >> 47n;
  return mul(b, K_MUL);
}

function hashLen0to16(s: Buffer, at: number, len: number): bigint {
  if (len > 8) {
    const a = s.readBigUInt64LE(at);
    const b = s.readBigUInt64LE(at + len - 8);
    return hashLen16(a, rotate(add(b, BigInt(len)), len)) ^ b;
  }
  if (len >= 4) {
    const a = BigInt(s.readUInt32LE(at));
    return hashLen16(add(BigInt(len), a << 3n), BigInt(s.readUInt32LE(at + len - 4)));
  }
  if (len > 0) {
    const y = BigInt((s[at] + (s[at + (len >> 1)] << 8)) >>> 0);
    const z = BigInt((len + (s[at + len - 1] << 2)) >>> 0);
    return mul(shiftMix(mul(y, K2) ^ mul(z, K3)), K2);
  }
  return K2;
}

type Pair = [bigint, bigint];

/** A 16-byte hash of s[at..at+32) and two seeds ("weak", as CityHash calls it). */
function weakHashLen32WithSeeds(s: Buffer, at: number, seedA: bigint, seedB: bigint): Pair {
  const w = s.readBigUInt64LE(at);
  const x = s.readBigUInt64LE(at + 8);
  const y = s.readBigUInt64LE(at + 16);
  const z = s.readBigUInt64LE(at + 24);
  let a = add(seedA, w);
  let b = rotate(add(add(seedB, a), z), 21);
  const c = a;
  a = add(add(a, x), y);
  b = add(b, rotate(a, 44));
  return [add(a, z), add(b, c)];
}

function cityMurmur(s: Buffer, at: number, len: number, seed: Pair): Pair {
  let [a, b] = seed;
  let c: bigint;
  let d: bigint;
  if (len <= 16) {
    a = mul(shiftMix(mul(a, K1)), K1);
    c = add(mul(b, K1), hashLen0to16(s, at, len));
    d = shiftMix(add(a, len >= 8 ? s.readBigUInt64LE(at) : c));
  } else {
    c = hashLen16(add(s.readBigUInt64LE(at + len - 8), K1), a);
    d = hashLen16(add(b, BigInt(len)), add(c, s.readBigUInt64LE(at + len - 16)));
    a = add(a, d);
    for (let l = len - 16, p = at; l > 0; l -= 16, p += 16) {
      a ^= mul(shiftMix(mul(s.readBigUInt64LE(p), K1)), K1);
      a = mul(a, K1);
      b ^= a;
      c ^= mul(shiftMix(mul(s.readBigUInt64LE(p + 8), K1)), K1);
      c = mul(c, K1);
      d ^= c;
    }
  }
  a = hashLen16(a, c);
  b = hashLen16(d, b);
  return [a ^ b, hashLen16(b, a)];
}

function cityHash128WithSeed(s: Buffer, at: number, len: number, seed: Pair): Pair {
  if (len < 128) return cityMurmur(s, at, len, seed);
  let [x, y] = seed;
  let z = mul(BigInt(len), K1);
  const v0 = add(mul(rotate(y ^ K1, 49), K1), s.readBigUInt64LE(at));
  let v: Pair = [v0, add(mul(rotate(v0, 42), K1), s.readBigUInt64LE(at + 8))];
  let w: Pair = [
    add(mul(rotate(add(y, z), 35), K1), x),
    mul(rotate(add(x, s.readBigUInt64LE(at + 88)), 53), K1),
  ];
  let p = at;
  do {
    for (let half = 0; half < 2; half++) {
      x = mul(rotate(add(add(add(x, y), v[0]), s.readBigUInt64LE(p + 16)), 37), K1);
      y = mul(rotate(add(add(y, v[1]), s.readBigUInt64LE(p + 48)), 42), K1);
      x ^= w[1];
      y ^= v[0];
      z = rotate(z ^ w[0], 33);
      v = weakHashLen32WithSeeds(s, p, mul(v[1], K1), add(x, w[0]));
      w = weakHashLen32WithSeeds(s, p + 32, add(z, w[1]), y);
      [z, x] = [x, z];
      p += 64;
    }
    len -= 128;
  } while (len >= 128);
  y = add(y, add(mul(rotate(w[0], 37), K0), z));
  x = add(x, mul(rotate(add(v[0], z), 49), K0));
  // Up to four 32-byte chunks from the end of the input.
  for (let tailDone = 0; tailDone < len;) {
    tailDone += 32;
    y = add(mul(rotate(sub(y, x), 42), K0), v[1]);
    w[0] = add(w[0], s.readBigUInt64LE(p + len - tailDone + 16));
    x = add(mul(rotate(x, 49), K0), w[0]);
    w[0] = add(w[0], v[0]);
    v = weakHashLen32WithSeeds(s, p + len - tailDone, v[0], v[1]);
  }
  x = hashLen16(x, v[0]);
  y = hashLen16(y, w[0]);
  return [add(hashLen16(add(x, v[1]), w[1]), y), hashLen16(add(x, w[1]), add(y, v[1]))];
}

/** ClickHouse's CityHash128 of `data` as [low, high] 64-bit halves. */
export function cityHash128(data: Uint8Array): Pair {
  const s = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const len = s.length;
  if (len >= 16)
    return cityHash128WithSeed(s, 16, len - 16, [s.readBigUInt64LE(0) ^ K3, s.readBigUInt64LE(8)]);
  if (len >= 8)
    return cityHash128WithSeed(s, 0, 0, [
      s.readBigUInt64LE(0) ^ mul(BigInt(len), K0),
      s.readBigUInt64LE(len - 8) ^ K1,
    ]);
  return cityHash128WithSeed(s, 0, len, [K0, K1]);
}

/** The 16 checksum bytes ClickHouse writes before a compressed block (low half first, LE). */
export function blockChecksum(block: Uint8Array): Buffer {
  const [low, high] = cityHash128(block);
  const out = Buffer.alloc(16);
  out.writeBigUInt64LE(low, 0);
  out.writeBigUInt64LE(high, 8);
  return out;
}
