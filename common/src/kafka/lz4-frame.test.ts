import { compressFrameSync, decompressFrameSync } from 'lz4-napi';
import { decompressLz4Frame } from './lz4-frame';

function logLines(bytes: number): Buffer {
  const out = Buffer.alloc(bytes);
  let pos = 0;
  for (let i = 0; pos < bytes; i++) {
    pos += out.write(
      `<189>date=2026-12-03 time=14:${i % 60} devname="fw${i % 7}" type="traffic" srcip=10.0.${i % 250}.${i % 13} dstport=${(i * 7919) % 65536} action="accept"\n`,
      pos,
    );
  }
  return out;
}

/** Deterministic pseudo-random bytes (incompressible: the encoder stores such blocks raw). */
function noise(bytes: number, seed = 7): Buffer {
  const out = Buffer.alloc(bytes);
  let x = seed;
  for (let i = 0; i < bytes; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

/** A frame header: magic, FLG (version 01 | flags), BD (64 KiB), [content size], HC. */
function header(flags: number, contentSize?: number): Buffer {
  const h = [0x04, 0x22, 0x4d, 0x18, 0x40 | flags, 0x40];
  if (contentSize !== undefined) {
    const size = Buffer.alloc(8);
    size.writeBigUInt64LE(BigInt(contentSize));
    h.push(...size);
  }
  h.push(0x00); // header checksum: not checked (as lz4-napi and kafkajs)
  return Buffer.from(h);
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
}

describe('decompressLz4Frame', () => {
  it.each([0, 1, 15, 16, 300, 70_000, 5 * 1024 * 1024])(
    'decodes what lz4-napi encodes (%i bytes of log lines)',
    (bytes) => {
      const data = logLines(bytes);
      expect(decompressLz4Frame(compressFrameSync(data)).equals(data)).toBe(true);
    },
  );

  it('decodes incompressible data and agrees with lz4-napi’s reader', () => {
    const data = Buffer.concat([noise(200_000), logLines(100_000), noise(3)]);
    const frame = compressFrameSync(data);
    expect(decompressLz4Frame(frame).equals(decompressFrameSync(frame))).toBe(true);
    expect(decompressLz4Frame(frame).equals(data)).toBe(true);
  });

  it('reads stored blocks, block and content checksums, a content size and skippable frames', () => {
    const a = Buffer.from('first block stored as is\n');
    // Compressed block: 5 literals "abcab", then a match of 7 at offset 3 ("cabcabc"), then 5 literals.
    const compressed = Buffer.from([0x53, ...Buffer.from('abcab'), 0x03, 0x00, 0x50, ...Buffer.from('ZZZZZ')]);
    const frame = Buffer.concat([
      Buffer.concat([u32(0x184d2a51), u32(3), Buffer.from([1, 2, 3])]), // skippable frame
      header(0x20 | 0x10 | 0x08 | 0x04, a.length + 17),
      u32(a.length | 0x80000000),
      a,
      u32(0xdeadbeef), // block checksum
      u32(compressed.length),
      compressed,
      u32(0xdeadbeef),
      u32(0), // end mark
      u32(0xcafebabe), // content checksum
    ]);
    expect(decompressLz4Frame(frame).toString()).toBe(`${a.toString()}abcabcabcabcZZZZZ`);
  });

  it('decodes linked blocks whose matches reach into the previous block', () => {
    const first = Buffer.from('0123456789abcdef');
    // Block 2: no literals, a match of 8 at offset 16 (the start of block 1), then literals "!!!!!".
    const second = Buffer.from([0x04, 0x10, 0x00, 0x50, ...Buffer.from('!!!!!')]);
    const frame = Buffer.concat([
      header(0x00), // linked blocks (B.Indep = 0), no checksums
      u32(first.length | 0x80000000),
      first,
      u32(second.length),
      second,
      u32(0),
    ]);
    expect(decompressLz4Frame(frame).toString()).toBe('0123456789abcdef01234567!!!!!');
  });

  it('decodes long literal and match lengths (extension bytes, overlapping repeat)', () => {
    const data = Buffer.concat([noise(600), Buffer.alloc(5000, 0x61), logLines(3000)]);
    expect(decompressLz4Frame(compressFrameSync(data)).equals(data)).toBe(true);
  });

  it('refuses bad magic, another version, dictionary frames and out-of-range matches', () => {
    const good = compressFrameSync(logLines(2000));
    const badMagic = Buffer.from(good);
    badMagic[0] ^= 0xff;
    expect(() => decompressLz4Frame(badMagic)).toThrow(/bad magic/);
    const version = Buffer.from(good);
    version[4] = (version[4] & 0x3f) | 0x80;
    expect(() => decompressLz4Frame(version)).toThrow(/version/);
    const dict = Buffer.from(good);
    dict[4] |= 0x01;
    expect(() => decompressLz4Frame(dict)).toThrow(/dictionary/);
    const farMatch = Buffer.from([0x14, 0x61, 0x05, 0x00, 0x10, 0x62]); // offset 5 after 1 byte
    const frame = Buffer.concat([header(0x20), u32(farMatch.length), farMatch, u32(0)]);
    expect(() => decompressLz4Frame(frame)).toThrow(/offset out of range/);
  });

  it('throws on every truncation of a frame instead of returning short or wrong bytes', () => {
    const data = logLines(3000);
    const frame = compressFrameSync(data);
    for (let cut = 1; cut < frame.length; cut++) {
      expect(() => decompressLz4Frame(frame.subarray(0, cut))).toThrow(RangeError);
    }
  });

  it('never hangs or reads out of bounds on flipped bytes (it throws or returns a buffer)', () => {
    const frame = compressFrameSync(logLines(20_000));
    for (let i = 7; i < frame.length; i += 13) {
      const bad = Buffer.from(frame);
      bad[i] ^= 0x5a;
      try {
        expect(Buffer.isBuffer(decompressLz4Frame(bad))).toBe(true);
      } catch (err) {
        expect(err).toBeInstanceOf(RangeError);
      }
    }
  });
});
