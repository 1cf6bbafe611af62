/**
 * Request body decoding as ClickHouse's HTTP interface does it, for what real clients send:
 *  - `Content-Encoding`: gzip/x-gzip, deflate, br, zstd (zstd frames), lz4 (LZ4 frame format, what
 *    clickhouse-connect sends by default), and identity;
 *  - `decompress=1`: the body is ClickHouse's own compressed-block stream (the native protocol's
 *    framing): per block 16 bytes CityHash128 checksum, 1 byte method (0x82 LZ4, 0x90 ZSTD,
 *    0x02 none), UInt32 LE size of the compressed block including this 9-byte header, UInt32 LE
 *    decompressed size, then the payload. Both layers may be combined (Content-Encoding outermost).
 * Streaming decoders are used where Node has them (gzip, deflate, br, zstd on Node >= 23.8); LZ4
 * frames and compressed blocks are decoded from the buffered body (the test bed caps bodies anyway).
 */
import type { IncomingMessage } from 'node:http';
import { PassThrough, pipeline, Readable } from 'node:stream';
import zlib from 'node:zlib';
import { serverError } from './errors';

/** Largest compressed body buffered for LZ4 frames / compressed blocks. */
export const MAX_BUFFERED_BODY_BYTES = 512 * 1024 * 1024;

const METHOD_NONE = 0x02;
const METHOD_LZ4 = 0x82;
const METHOD_ZSTD = 0x90;
const BLOCK_HEADER = 9;
const CHECKSUM = 16;

type Lz4 = { decompressFrameSync(b: Buffer): Buffer; uncompressSync(b: Uint8Array): Buffer };
type ZstdLib = { decompress(b: Buffer): Promise<Buffer> };

function lz4(): Lz4 {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('lz4-napi') as Lz4;
}

async function zstdDecompress(b: Buffer): Promise<Buffer> {
  const z = zlib as unknown as { zstdDecompressSync?: (b: Buffer) => Buffer };
  if (z.zstdDecompressSync) return z.zstdDecompressSync(b);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('@mongodb-js/zstd') as ZstdLib).decompress(b);
}

async function collect(source: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  let total = 0;
  for await (const p of source) {
    total += p.length;
    if (total > MAX_BUFFERED_BODY_BYTES)
      throw serverError(
        'TOO_MANY_BYTES',
        `compressed request bodies are limited to ${MAX_BUFFERED_BODY_BYTES} bytes by the test bed`,
      );
    parts.push(p);
  }
  return Buffer.concat(parts, total);
}

/** A stream yielding what `produce` returns once the whole `source` has been read. */
function whole(source: Readable, produce: (b: Buffer) => Promise<Buffer> | Buffer): Readable {
  const out = new PassThrough();
  collect(source)
    .then(produce)
    .then((b) => out.end(b))
    .catch((err: unknown) => out.destroy(err as Error));
  return out;
}

/** Checksum check of one compressed block (CityHash128 v1.0.2 of method..end); see PLAN.md. */
export type BlockChecksum = (block: Uint8Array, expected: Uint8Array) => boolean;

/** Decodes a ClickHouse compressed-block stream (decompress=1). */
export async function decodeCompressedBlocks(body: Buffer, verify?: BlockChecksum): Promise<Buffer> {
  const out: Buffer[] = [];
  let pos = 0;
  while (pos < body.length) {
    if (body.length - pos < CHECKSUM + BLOCK_HEADER)
      throw serverError('CANNOT_DECOMPRESS', 'Cannot decompress: truncated compressed block header');
    const method = body[pos + CHECKSUM];
    const size = body.readUInt32LE(pos + CHECKSUM + 1);
    const raw = body.readUInt32LE(pos + CHECKSUM + 5);
    const end = pos + CHECKSUM + size;
    if (size < BLOCK_HEADER || end > body.length)
      throw serverError(
        'CANNOT_DECOMPRESS',
        `Cannot decompress: compressed block of ${size} bytes exceeds the body`,
      );
    if (verify && !verify(body.subarray(pos + CHECKSUM, end), body.subarray(pos, pos + CHECKSUM)))
      throw serverError('CHECKSUM_DOESNT_MATCH', "Checksum doesn't match: corrupted data");
    const payload = body.subarray(pos + CHECKSUM + BLOCK_HEADER, end);
    let block: Buffer;
    if (method === METHOD_NONE) block = Buffer.from(payload);
    else if (method === METHOD_LZ4) {
      // lz4-napi's block API takes the decompressed size as a 4-byte LE prefix.
      const framed = Buffer.allocUnsafe(4 + payload.length);
      framed.writeUInt32LE(raw, 0);
      payload.copy(framed, 4);
      block = lz4().uncompressSync(framed);
    } else if (method === METHOD_ZSTD) block = await zstdDecompress(Buffer.from(payload));
    else
      throw serverError('UNKNOWN_COMPRESSION_METHOD', `Unknown compression method 0x${method.toString(16)}`);
    if (block.length !== raw)
      throw serverError(
        'CANNOT_DECOMPRESS',
        `Cannot decompress: block size ${block.length}, header says ${raw}`,
      );
    out.push(block);
    pos = end;
  }
  return Buffer.concat(out);
}

function decodeError(err: unknown): never {
  throw serverError('CANNOT_DECOMPRESS', `Cannot decompress the request body: ${(err as Error).message}`);
}

/** The request body as plain bytes: Content-Encoding first, then `decompress=1` framing. */
export function requestBody(req: IncomingMessage, decompress = false, verify?: BlockChecksum): Readable {
  const encoding = String(req.headers['content-encoding'] ?? '')
    .toLowerCase()
    .trim();
  let body: Readable = req;
  if (encoding !== '' && encoding !== 'identity') {
    const z = zlib as unknown as { createZstdDecompress?: () => zlib.Gunzip };
    let decoder: Readable;
    let stream: zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined;
    if (encoding === 'gzip' || encoding === 'x-gzip') stream = zlib.createGunzip();
    else if (encoding === 'deflate') stream = zlib.createInflate();
    else if (encoding === 'br') stream = zlib.createBrotliDecompress();
    else if (encoding === 'zstd' && z.createZstdDecompress) stream = z.createZstdDecompress();
    if (stream) {
      pipeline(req, stream, () => undefined);
      decoder = stream;
    } else if (encoding === 'zstd') decoder = whole(req, (b) => zstdDecompress(b).catch(decodeError));
    else if (encoding === 'lz4')
      decoder = whole(req, (b) => {
        try {
          return lz4().decompressFrameSync(b);
        } catch (err) {
          return decodeError(err);
        }
      });
    else
      throw serverError(
        'NOT_IMPLEMENTED',
        `Content-Encoding '${encoding.slice(0, 32)}' is not supported by the test bed (gzip, deflate, br, zstd, lz4)`,
      );
    body = decoder;
  }
  return decompress ? whole(body, (b) => decodeCompressedBlocks(b, verify)) : body;
}
