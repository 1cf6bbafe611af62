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
import { DEFAULT_MAX_VALUE_BYTES } from '../worker-config';

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
  zstdDecompressSync(buf: Buffer, opts?: { maxOutputLength?: number }): Buffer;
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

/** Why a value did not decode: a metrics label (a closed set, never the codec's own words). */
export type ValueDecodeFailure = 'too_large' | 'corrupt' | 'unknown_encoding';

/** A value whose header names a codec it cannot be decoded with; `message` names codec and cause. */
export class ValueDecodeError extends Error {
  /** Carries the failure kind (metrics label) next to the message (dead-letter reason). */
  constructor(
    readonly kind: ValueDecodeFailure,
    message: string,
  ) {
    super(message);
    this.name = 'ValueDecodeError';
  }
}

/** HTTP's "no encoding" token: a relay copying HTTP headers may set it on plain values. */
const IDENTITY = 'identity';

/**
 * The plain value of a consumed message: decompressed when its header names a codec, else as is.
 * Never allocates more than `maxBytes` for the output (a value inflating past it is refused, not
 * decoded: any producer of the topic could otherwise make the worker allocate without limit).
 * Throws ValueDecodeError for an unknown codec, a corrupt body or one over the bound (the caller
 * dead-letters the message whole).
 */
export function decodeValue(
  value: Buffer,
  headers: Headers,
  maxBytes: number = DEFAULT_MAX_VALUE_BYTES,
): Buffer {
  const encoding = valueEncodingOf(headers);
  if (encoding === undefined || encoding === IDENTITY) return value;
  if (encoding === 'zstd') return decodeZstd(value, maxBytes);
  if (encoding === 'lz4-block') return decodeLz4Block(value, maxBytes);
  throw new ValueDecodeError(
    'unknown_encoding',
    `unknown ${VALUE_ENCODING_HEADER} ${JSON.stringify(encoding.slice(0, 64))}`,
  );
}

function decodeZstd(value: Buffer, maxBytes: number): Buffer {
  try {
    // node:zlib stops and throws ERR_BUFFER_TOO_LARGE once the output passes maxOutputLength.
    return zstd.zstdDecompressSync(value, { maxOutputLength: maxBytes });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
      throw new ValueDecodeError('too_large', `zstd: exceeds ${maxBytes} bytes`);
    throw new ValueDecodeError('corrupt', `zstd: ${codecMessage(err)}`);
  }
}

/** Bytes of the little-endian uncompressed-size prefix of a size-prepended LZ4 block. */
const LZ4_SIZE_PREFIX_BYTES = 4;

function decodeLz4Block(value: Buffer, maxBytes: number): Buffer {
  if (value.length < LZ4_SIZE_PREFIX_BYTES)
    throw new ValueDecodeError('corrupt', `lz4-block: ${value.length} bytes, shorter than the size prefix`);
  // The decoder allocates what the prefix claims: judge the claim before it does.
  const claimed = value.readUInt32LE(0);
  if (claimed > maxBytes)
    throw new ValueDecodeError('too_large', `lz4-block: size prefix ${claimed} exceeds ${maxBytes} bytes`);
  let out: Buffer;
  try {
    out = lz4UncompressSync(value);
  } catch (err) {
    throw new ValueDecodeError('corrupt', `lz4-block: ${codecMessage(err)}`);
  }
  // A truncated block can end on a sequence boundary and decode "successfully" to fewer bytes.
  if (out.length !== claimed)
    throw new ValueDecodeError(
      'corrupt',
      `lz4-block: decoded ${out.length} bytes, size prefix says ${claimed}`,
    );
  return out;
}

/** The codec's own words, one line and short (they become a dead-letter reason). */
function codecMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/\s+/g, ' ').slice(0, 200);
}
