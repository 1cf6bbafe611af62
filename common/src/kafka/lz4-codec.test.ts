import { CompressionCodecs, CompressionTypes } from 'kafkajs';
import { LZ4_ASYNC_THRESHOLD_BYTES, lz4Codec, registerLz4Codec } from './lz4-codec';

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

describe('registerLz4Codec', () => {
  it('makes kafkajs resolve LZ4 to this codec', () => {
    registerLz4Codec();
    registerLz4Codec();
    expect(CompressionCodecs[CompressionTypes.LZ4]()).toBe(lz4Codec);
  });
});
