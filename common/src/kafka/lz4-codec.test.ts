import { CompressionCodecs, CompressionTypes } from 'kafkajs';
import { compressFrameSync, compressSync, decompressFrameSync } from 'lz4-napi';
import {
  decompressLz4Frame,
  firstBound,
  LZ4_ASYNC_THRESHOLD_BYTES,
  lz4Codec,
  registerLz4Codec,
} from './lz4-codec';
import { recordBatchOutputLimit, setRecordBatchOutputLimit } from './batch-bound';

// Made by Kafka 4.4.0's own org.apache.kafka.common.compress.Lz4BlockOutputStream (64 KiB blocks,
// no block checksum: what producers and the broker write into record batches) from 8 lines
// "<134>Jan  2 03:04:05 fw1 kernel: DROP SRC=198.51.100.<i> DST=192.0.2.1 PROTO=TCP\n".
const JAVA_FRAME_HEX =
  '04224d186040827d000000ff403c3133343e4a616e2020322030333a30343a303520667731206b65726e656c3a2044524f5020' +
  '5352433d3139382e35312e3130302e30204453543d3139322e302e322e312050524f544f3d5443500a4f00221f314f003b1f32' +
  '4f003b1f334f003b1f344f003b1f354f003b1f364f003b1f374f0001503d5443500a00000000';

function javaFrameText(): string {
  let text = '';
  for (let i = 0; i < 8; i++)
    text += `<134>Jan  2 03:04:05 fw1 kernel: DROP SRC=198.51.100.${i} DST=192.0.2.1 PROTO=TCP\n`;
  return text;
}

function logLines(bytes: number): Buffer {
  const out = Buffer.alloc(bytes);
  let pos = 0;
  for (let i = 0; pos < bytes; i++) {
    pos += out.write(`<134>fw${i % 7} DROP SRC=198.51.100.${i % 250} SPT=${(i * 7919) % 65536}\n`, pos);
  }
  return out;
}

describe('lz4Codec', () => {
  it('round-trips a payload below the async threshold', async () => {
    const data = logLines(1000);
    const frame = await lz4Codec.compress({ buffer: data });
    expect(frame.length).toBeLessThan(data.length);
    expect((await lz4Codec.decompress(frame)).equals(data)).toBe(true);
  });

  it('round-trips multi-block payloads above the async threshold', async () => {
    const data = logLines(LZ4_ASYNC_THRESHOLD_BYTES * 20);
    const frame = await lz4Codec.compress({ buffer: data });
    expect(frame.length).toBeGreaterThan(LZ4_ASYNC_THRESHOLD_BYTES / 4);
    expect((await lz4Codec.decompress(frame)).equals(data)).toBe(true);
  });

  it('round-trips an empty payload', async () => {
    const frame = await lz4Codec.compress({ buffer: Buffer.alloc(0) });
    expect((await lz4Codec.decompress(frame)).length).toBe(0);
  });

  it('writes frames Kafka accepts: LZ4 frame magic, version 1, independent blocks, 64 KiB max block', async () => {
    const frame = await lz4Codec.compress({ buffer: logLines(5000) });
    expect(frame.readUInt32LE(0)).toBe(0x184d2204);
    const flg = frame[4];
    expect(flg >> 6).toBe(1);
    expect(flg & 0x20).toBe(0x20);
    expect((frame[5] >> 4) & 0x07).toBe(4);
  });

  it('decodes a frame written by Kafka’s Java LZ4 encoder', async () => {
    const out = await lz4Codec.decompress(Buffer.from(JAVA_FRAME_HEX, 'hex'));
    expect(out.toString('utf8')).toBe(javaFrameText());
  });

  it('rejects a corrupted frame instead of returning garbage', async () => {
    const frame = Buffer.from(JAVA_FRAME_HEX, 'hex');
    frame[0] ^= 0xff;
    await expect(lz4Codec.decompress(frame)).rejects.toThrow();
  });
});

/** xxHash32 (seed 0) of a few bytes: the frame header checksum is its second byte. */
function xxh32(b: Buffer): number {
  const P1 = 2654435761,
    P2 = 2246822519,
    P3 = 3266489917,
    P4 = 668265263,
    P5 = 374761393;
  const rotl = (x: number, r: number) => ((x << r) | (x >>> (32 - r))) >>> 0;
  let h = (P5 + b.length) >>> 0;
  let i = 0;
  for (; i + 4 <= b.length; i += 4)
    h = Math.imul(rotl((h + Math.imul(b.readUInt32LE(i), P3)) >>> 0, 17), P4) >>> 0;
  for (; i < b.length; i++) h = Math.imul(rotl((h + Math.imul(b[i], P5)) >>> 0, 11), P1) >>> 0;
  h = Math.imul(h ^ (h >>> 15), P2) >>> 0;
  h = Math.imul(h ^ (h >>> 13), P3) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

/** Rewrites a frame's header checksum after its descriptor changed. */
function withHeaderChecksum(f: Buffer): Buffer {
  const end = 6 + ((f[4] & 0x08) !== 0 ? 8 : 0);
  f[end] = (xxh32(f.subarray(4, end)) >>> 8) & 0xff;
  return f;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
}

/**
 * A frame as Kafka's Java client and librdkafka write it: 64 KiB blocks, each compressed alone
 * (or stored when `stored(i)`), with the optional checksums and content size the format allows.
 */
function frame(
  data: Buffer,
  o: { flags?: number; stored?: (i: number) => boolean; contentSize?: boolean; bd?: number } = {},
): Buffer {
  const flags = (o.flags ?? 0) | (o.contentSize ? 0x08 : 0);
  const parts: Buffer[] = [Buffer.from([0x04, 0x22, 0x4d, 0x18, 0x40 | 0x20 | flags, o.bd ?? 0x40])];
  if (o.contentSize) {
    const size = Buffer.alloc(8);
    size.writeBigUInt64LE(BigInt(data.length));
    parts.push(size);
  }
  parts.push(Buffer.from([0x00]));
  for (let i = 0, pos = 0; pos < data.length; i++, pos += 64 << 10) {
    const chunk = data.subarray(pos, pos + (64 << 10));
    if (o.stored?.(i)) parts.push(u32(chunk.length | 0x80000000), chunk);
    else {
      const block = compressSync(chunk).subarray(4); // lz4-napi prefixes the size: drop it
      parts.push(u32(block.length), block);
    }
    if (flags & 0x10) parts.push(u32(0xdeadbeef));
  }
  parts.push(u32(0));
  if (flags & 0x04) parts.push(u32(0xcafebabe));
  return withHeaderChecksum(Buffer.concat(parts));
}

describe('decompressLz4Frame (block by block)', () => {
  it('equals lz4-napi’s frame reader on its own frames of every size', () => {
    for (const bytes of [0, 1, 300, 70_000, 300_000, 5 * 1024 * 1024]) {
      const data = logLines(bytes);
      const f = compressFrameSync(data);
      expect(decompressLz4Frame(f).equals(data)).toBe(true);
      expect(decompressLz4Frame(f).equals(decompressFrameSync(f))).toBe(true);
    }
  });

  it('reads multi-block frames with stored blocks and a content size', () => {
    const data = Buffer.concat([
      logLines(200_000),
      Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7919) & 255)),
    ]);
    for (const o of [{}, { stored: (i: number) => i % 2 === 1 }, { contentSize: true, stored: () => true }]) {
      const f = frame(data, o);
      expect(decompressLz4Frame(f).equals(data)).toBe(true);
      expect(decompressFrameSync(f).equals(data)).toBe(true);
    }
  });

  it('leaves checksummed frames to the frame reader, which verifies them', () => {
    // frame() writes dummy checksums: the frame reader must see and refuse them.
    const data = logLines(100_000);
    expect(() => decompressLz4Frame(frame(data, { flags: 0x10 }))).toThrow(/BlockChecksum/);
    expect(() => decompressLz4Frame(frame(data, { flags: 0x04 }))).toThrow(/Checksum/);
  });

  it('hands linked blocks and concatenated frames to the frame reader (which checks their header)', () => {
    const data = logLines(100_000);
    const linked = frame(data);
    linked[4] &= ~0x20; // independent blocks flag off: the frame reader decodes (these blocks are independent anyway)
    withHeaderChecksum(linked);
    expect(decompressLz4Frame(linked).equals(data)).toBe(true);
    const two = Buffer.concat([compressFrameSync(data), compressFrameSync(data)]);
    expect(decompressLz4Frame(two).equals(decompressFrameSync(two))).toBe(true);
    const badChecksum = frame(data);
    badChecksum[4] &= ~0x20;
    badChecksum[6] ^= 0xff;
    expect(() => decompressLz4Frame(badChecksum)).toThrow(/Checksum/);
  });

  it('leaves the compressed bytes as they were, decoded or refused (they may become a dead letter)', () => {
    const f = frame(logLines(300_000), { stored: (i: number) => i === 1 });
    const before = Buffer.from(f);
    decompressLz4Frame(f);
    expect(f.equals(before)).toBe(true);
    const corrupt = Buffer.from(f);
    corrupt[40] ^= 0xff;
    corrupt[41] ^= 0xff;
    const corruptBefore = Buffer.from(corrupt);
    try {
      decompressLz4Frame(corrupt);
    } catch {
      /* refused or not: the bytes must be unchanged either way */
    }
    expect(corrupt.equals(corruptBefore)).toBe(true);
  });

  it('throws on every truncation and on a block larger than the frame allows', () => {
    const f = frame(logLines(150_000));
    // Cut inside the blocks (a cut end mark is the frame reader's call, as before this codec).
    for (let cut = 1; cut < f.length - 4; cut += 97) {
      const cutFrame = Buffer.from(f.subarray(0, cut));
      expect(() => decompressLz4Frame(cutFrame)).toThrow();
      expect(cutFrame.equals(f.subarray(0, cut))).toBe(true);
    }
    // A 64 KiB frame whose block inflates past 64 KiB: refused, never a larger buffer.
    const big = Buffer.alloc(200_000, 0x61);
    const oversized = Buffer.concat([
      Buffer.from([0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x00]),
      (() => {
        const b = compressSync(big).subarray(4);
        return Buffer.concat([u32(b.length), b]);
      })(),
      u32(0),
    ]);
    expect(() => decompressLz4Frame(oversized)).toThrow();
  });
});

describe('decompressLz4Frame (first bound from the last ratio)', () => {
  /** A frame of 4 MiB blocks (what lz4-napi's frame writer, and so our producer, writes). */
  const bigBlocks = (data: Buffer) => {
    const f = compressFrameSync(data);
    expect((f[5] >> 4) & 7).toBe(7);
    return f;
  };

  it('decodes blocks far more compressible than the last one (first bound too small, retried)', () => {
    const text = logLines(300_000);
    expect(decompressLz4Frame(bigBlocks(text)).equals(text)).toBe(true);
    expect(firstBound(1000, 4 << 20)).toBeLessThan(20_000); // log text: a tight first bound
    const flat = Buffer.alloc(3 << 20, 0x61); // ~250:1
    expect(decompressLz4Frame(bigBlocks(flat)).equals(flat)).toBe(true);
    // The ratio followed the flat block; a text block decodes as well afterwards.
    expect(firstBound(1000, 4 << 20)).toBeGreaterThan(200_000);
    expect(decompressLz4Frame(bigBlocks(text)).equals(text)).toBe(true);
    expect(decompressLz4Frame(bigBlocks(flat)).equals(flat)).toBe(true);
  });

  it('never gives a bound beyond the room left', () => {
    expect(firstBound(1 << 20, 65_536)).toBe(65_536);
    expect(firstBound(0, 10)).toBe(10);
  });

  it('still refuses a block past the batch bound as too large, and a corrupt one as corrupt', () => {
    const saved = recordBatchOutputLimit();
    const text = logLines(300_000);
    decompressLz4Frame(bigBlocks(text)); // ratio of text: the first attempt is tight
    try {
      setRecordBatchOutputLimit(200_000);
      expect(() => decompressLz4Frame(bigBlocks(text))).toThrow(/exceeds 200000 bytes/);
    } finally {
      setRecordBatchOutputLimit(saved);
    }
    const corrupt = bigBlocks(text);
    corrupt.fill(0xff, 40, 60);
    expect(() => decompressLz4Frame(corrupt)).toThrow(/lz4: /);
    expect(() => decompressLz4Frame(corrupt)).not.toThrow(/exceeds/);
  });
});

describe('registerLz4Codec', () => {
  it('makes kafkajs resolve LZ4 to this codec', () => {
    registerLz4Codec();
    registerLz4Codec();
    expect(CompressionCodecs[CompressionTypes.LZ4]()).toBe(lz4Codec);
  });
});
