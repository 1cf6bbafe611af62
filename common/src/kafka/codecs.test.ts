import { CompressionCodecs, CompressionTypes } from 'kafkajs';
import { compressSync } from 'snappy';
import { gzipSync } from 'node:zlib';
import { gzipCodec, isXerialSnappy, registerKafkaCodecs, snappyCodec, zstdCodec } from './codecs';
import { lz4Codec } from './lz4-codec';

function logLines(count: number): Buffer {
  let text = '';
  for (let i = 0; i < count; i++) text += `<134>fw${i % 7} DROP SRC=198.51.100.${i % 250} SPT=${i}\n`;
  return Buffer.from(text);
}

/** A snappy-java (xerial) stream: header, then length-prefixed raw blocks. */
function xerial(blocks: Buffer[]): Buffer {
  const header = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00, 0, 0, 0, 1, 0, 0, 0, 1]);
  const parts: Buffer[] = [header];
  for (const b of blocks) {
    const c = compressSync(b);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(c.length);
    parts.push(len, c);
  }
  return Buffer.concat(parts);
}

describe('kafka codecs', () => {
  it('registers gzip, snappy, lz4 and zstd in kafkajs', () => {
    const builtInGzip = CompressionCodecs[CompressionTypes.GZIP];
    registerKafkaCodecs();
    expect(CompressionCodecs[CompressionTypes.GZIP]()).toBe(gzipCodec);
    CompressionCodecs[CompressionTypes.GZIP] = builtInGzip;
    registerKafkaCodecs();
    expect(CompressionCodecs[CompressionTypes.Snappy]()).toBe(snappyCodec);
    expect(CompressionCodecs[CompressionTypes.LZ4]()).toBe(lz4Codec);
    expect(CompressionCodecs[CompressionTypes.ZSTD]()).toBe(zstdCodec);
  });

  it('reads gzip as kafkajs’s own codec writes it (and a plain gzip member)', async () => {
    const data = logLines(2000);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const builtIn = require('kafkajs/src/protocol/message/compression/gzip') as typeof gzipCodec;
    expect((await gzipCodec.decompress(await builtIn.compress({ buffer: data }))).equals(data)).toBe(true);
    expect((await gzipCodec.decompress(gzipSync(data))).equals(data)).toBe(true);
    await expect(gzipCodec.decompress(Buffer.from('not gzip'))).rejects.toThrow();
  });

  it.each([
    ['gzip', gzipCodec],
    ['snappy', snappyCodec],
    ['zstd', zstdCodec],
  ])('%s round-trips payloads (empty, small, large)', async (_name, codec) => {
    for (const data of [Buffer.alloc(0), logLines(10), logLines(50_000)]) {
      const packed = await codec.compress({ buffer: data });
      if (data.length > 1000) expect(packed.length).toBeLessThan(data.length / 2);
      expect((await codec.decompress(packed)).equals(data)).toBe(true);
    }
  });

  it('writes standard zstd frames (magic 0xFD2FB528)', async () => {
    const frame = await zstdCodec.compress({ buffer: logLines(100) });
    expect(frame.readUInt32LE(0)).toBe(0xfd2fb528);
  });

  it('reads the xerial framing of Java producers as well as raw snappy blocks', async () => {
    const a = logLines(300);
    const b = logLines(7);
    const framed = xerial([a, b]);
    expect(isXerialSnappy(framed)).toBe(true);
    expect((await snappyCodec.decompress(framed)).equals(Buffer.concat([a, b]))).toBe(true);
    const raw = await snappyCodec.compress({ buffer: a });
    expect(isXerialSnappy(raw)).toBe(false);
    expect((await snappyCodec.decompress(raw)).equals(a)).toBe(true);
  });

  it('refuses a truncated xerial block', async () => {
    const framed = xerial([logLines(50)]);
    await expect(snappyCodec.decompress(framed.subarray(0, framed.length - 3))).rejects.toThrow(/truncated/);
  });
});
