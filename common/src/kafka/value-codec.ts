/**
 * Compression of one Kafka message VALUE, marked by a header (issue 16). The syslog receiver packs
 * ~1024 lines (~750 KB) into one value; letting kafkajs compress the record batch made it copy each
 * value into its record encoder, checksum the whole batch in JavaScript and compress it again in
 * its own buffers: that, not framing or packing, was the receiver's CPU. The receiver therefore
 * compresses the packed body itself (zstd from node:zlib, or an LZ4 block), sends the record batch
 * uncompressed, and names the codec in VALUE_ENCODING_HEADER; the worker decodes before splitting
 * lines. Messages without the header (every other producer) are passed through untouched, and the
 * batch-level codecs (codecs.ts) still decode whatever relays write.
 */
import zlib from 'node:zlib';
import { compressSync as lz4CompressSync, uncompressSync as lz4UncompressSync } from 'lz4-napi';

/** Header naming the codec of a compressed message value (absent: the value is plain lines). */
export const VALUE_ENCODING_HEADER = 'content-encoding';

/** Codecs the receiver can be configured with (`compression` of spec.ingest.syslog). */
export type ValueEncoding = 'zstd' | 'lz4';

/**
 * The header value of each codec. LZ4 values are one LZ4 *block* after a 4-byte little-endian
 * uncompressed length (lz4_flex's size-prepended block), not the LZ4 frame format: lz4-napi decodes
 * frames ~10x slower than blocks (measured 0.1 M vs 1.3-4.9 M FortiGate lines per CPU-second), and the
 * worker decodes on its event loop. The header says `lz4-block` so no reader mistakes it for a frame.
 */
export const VALUE_ENCODING_NAMES: Record<ValueEncoding, string> = { zstd: 'zstd', lz4: 'lz4-block' };

/** zstd level of packed values: level 1 measured ~1.3x faster than 3 on firewall lines at the same ratio. */
export const ZSTD_VALUE_LEVEL = 1;

/** node:zlib's zstd (Node >= 22.15; the project's @types/node predates it). */
interface ZstdZlib {
  zstdCompressSync(buf: Buffer, opts: { params: Record<number, number> }): Buffer;
  zstdDecompressSync(buf: Buffer): Buffer;
  constants: { ZSTD_c_compressionLevel: number };
}
const zstd = zlib as unknown as ZstdZlib;
const ZSTD_PARAMS = { params: { [zstd.constants.ZSTD_c_compressionLevel]: ZSTD_VALUE_LEVEL } };

/** Compresses one value with `encoding` (a new Buffer; `body` is not kept). */
export function encodeValue(body: Buffer, encoding: ValueEncoding): Buffer {
  return encoding === 'zstd' ? zstd.zstdCompressSync(body, ZSTD_PARAMS) : lz4CompressSync(body);
}

/** Header values as kafkajs hands them (Buffers when read from a broker). */
type Headers = Record<string, Buffer | string | (Buffer | string)[] | undefined> | undefined;

/** The VALUE_ENCODING_HEADER of a consumed message, or undefined when it has none. */
export function valueEncodingOf(headers: Headers): string | undefined {
  let v = headers?.[VALUE_ENCODING_HEADER];
  if (Array.isArray(v)) v = v[0];
  return v === undefined ? undefined : v.toString();
}

/**
 * The plain value of a consumed message: decompressed when its header names a codec, else as is.
 * Throws for an unknown codec or a corrupt body (the caller decides what a bad message becomes).
 */
export function decodeValue(value: Buffer, headers: Headers): Buffer {
  const encoding = valueEncodingOf(headers);
  if (encoding === undefined) return value;
  if (encoding === 'zstd') return zstd.zstdDecompressSync(value);
  if (encoding === 'lz4-block') return lz4UncompressSync(value);
  throw new Error(`unknown ${VALUE_ENCODING_HEADER} ${JSON.stringify(encoding)}`);
}
