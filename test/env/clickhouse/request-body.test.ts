import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { IncomingMessage } from 'node:http';
import { decodeCompressedBlocks, requestBody } from './request-body';

const data = Buffer.from('INSERT INTO t FORMAT RowBinary\n\x00\n\n\x01binary\n\n'.repeat(500), 'latin1');

// eslint-disable-next-line @typescript-eslint/no-require-imports
const lz4 = require('lz4-napi') as { compressFrameSync(b: Buffer): Buffer; compressSync(b: Buffer): Buffer };

function fakeRequest(body: Buffer, encoding?: string): IncomingMessage {
  const r = Readable.from([body.subarray(0, 7), body.subarray(7)]) as unknown as IncomingMessage;
  (r as { headers: Record<string, string> }).headers = encoding ? { 'content-encoding': encoding } : {};
  return r;
}

async function read(s: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of s) parts.push(p as Buffer);
  return Buffer.concat(parts);
}

/** One ClickHouse compressed block (checksum left zero: not verified by the prototype). */
function block(method: number, payload: Buffer, raw: number): Buffer {
  const h = Buffer.alloc(25);
  h[16] = method;
  h.writeUInt32LE(payload.length + 9, 17);
  h.writeUInt32LE(raw, 21);
  return Buffer.concat([h, payload]);
}

// A zstd frame of `data`, made once (the compressor is asynchronous).
let zstdFrame: Buffer;
beforeAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const zstd = require('@mongodb-js/zstd') as { compress(b: Buffer): Promise<Buffer> };
  zstdFrame = await zstd.compress(data);
});

describe('request bodies', () => {
  it.each([
    ['gzip', zlib.gzipSync(data)],
    ['deflate', zlib.deflateSync(data)],
    ['br', zlib.brotliCompressSync(data)],
    ['lz4', lz4.compressFrameSync(data)],
    ['identity', data],
  ])('decodes Content-Encoding %s', async (enc, body) => {
    expect(await read(requestBody(fakeRequest(body, enc)))).toEqual(data);
  });

  it('decodes Content-Encoding zstd', async () => {
    expect(await read(requestBody(fakeRequest(zstdFrame, 'zstd')))).toEqual(data);
  });

  it('answers a corrupt body with CANNOT_DECOMPRESS', async () => {
    await expect(read(requestBody(fakeRequest(Buffer.from('not lz4 at all'), 'lz4')))).rejects.toThrow(
      /Cannot decompress/,
    );
  });

  it('refuses unknown encodings', () => {
    expect(() => requestBody(fakeRequest(data, 'xz'))).toThrow(/not supported/);
  });

  it('decodes decompress=1 compressed blocks (LZ4, none)', async () => {
    const lz = lz4.compressSync(data).subarray(4); // drop lz4-napi's size prefix: a raw LZ4 block
    const body = Buffer.concat([block(0x82, lz, data.length), block(0x02, data, data.length)]);
    expect(await decodeCompressedBlocks(body)).toEqual(Buffer.concat([data, data]));
    expect(await read(requestBody(fakeRequest(zlib.gzipSync(body), 'gzip'), true))).toEqual(
      Buffer.concat([data, data]),
    );
    await expect(decodeCompressedBlocks(body.subarray(0, 30))).rejects.toThrow(/exceeds the body|truncated/);
  });
});
