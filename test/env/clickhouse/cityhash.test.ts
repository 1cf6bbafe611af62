import { blockChecksum, cityHash128 } from './cityhash';

/**
 * Reference values from clickhouse-cityhash 1.0.2.6 (PyPI; ClickHouse's own CityHash v1.0.2 as a C
 * extension): CityHash128 of bytes (i * 31 + 7) & 255 for i < length, as [first, second] in hex.
 * The lengths cover every branch: 0, 1-3, 4-8, 9-16, CityMurmur (< 128), the 128-byte loop and
 * its 1-4 chunk tails.
 */
const VECTORS: [number, string, string][] = [
  [0, '3df09dfc64c09a2b', '3cb540c392e51e29'],
  [3, 'e407deda7bb0f294', '0a3a0d146e27f1bd'],
  [8, 'f5a4ca47208136a0', '3dd4575b3d46e5ab'],
  [15, 'd956065c63d9ab15', '9623caadd0037b73'],
  [16, '3f3a3275564b7f48', 'b48a2a7a16bac60b'],
  [17, 'aee34bf68bb2e0a2', 'e0d6910555f00b87'],
  [64, 'e225cf33b373dc02', '8d252ce5152d6d96'],
  [127, 'c244dc8a06ce8c41', 'f30e2cf6b33629a6'],
  [128, 'ba863c0c70f32346', '24b156fc6f3c170a'],
  [129, '238598064c8ee2f1', '6c89b9263ef7410b'],
  [255, 'c87d0f456f6a514b', 'f35b13ec94eb8a52'],
  [256, 'b1cfa883f958dcfa', '39f0dfb3be182292'],
  [1000, '597ff4957972ad7e', '7f39a4abd7c010e1'],
];

function input(length: number): Buffer {
  return Buffer.from(Array.from({ length }, (_, i) => (i * 31 + 7) & 255));
}

describe('cityHash128 (v1.0.2)', () => {
  it.each(VECTORS)('length %i', (length, first, second) => {
    const [a, b] = cityHash128(input(length));
    expect([a.toString(16).padStart(16, '0'), b.toString(16).padStart(16, '0')]).toEqual([first, second]);
  });

  it('writes the checksum as the first half then the second, little-endian', () => {
    const [first, second] = VECTORS.find(([n]) => n === 256)!.slice(1) as string[];
    const sum = blockChecksum(input(256));
    expect(sum.readBigUInt64LE(0).toString(16).padStart(16, '0')).toBe(first);
    expect(sum.readBigUInt64LE(8).toString(16).padStart(16, '0')).toBe(second);
  });
});
