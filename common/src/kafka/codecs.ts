/**
 * Every Kafka compression codec, registered in kafkajs in ONE place. kafkajs ships only gzip; a
 * relay (rsyslog omkafka, Fluent Bit, Vector, kcat: all librdkafka) may produce snappy, lz4 or zstd
 * into a topic with `compression.type: producer`, and the broker then stores the batches as they
 * came. A worker missing a codec crashes on the first such batch, so the worker, the operator and
 * every test or demo client call `registerKafkaCodecs()` before connecting.
 *
 * zstd is Node's own (node:zlib has zstd since 23.8; the project runs on Node 26), synchronous:
 * a record batch is at most a few MiB, and the threadpool hop of the async form cost about twice
 * the CPU per byte in an A/B on log batches while the prebuilt `@mongodb-js/zstd` binding measured
 * the same as the built-in. snappy is the prebuilt N-API package `snappy` (napi-rs, nothing
 * downloaded or compiled at install); lz4 is lz4-codec.ts (lz4-napi, native). Every codec reads
 * synchronously (gzip replaces kafkajs's own threadpool unzip): warm, on a 124 KB batch of
 * FortiGate lines, the async forms cost snappy 190 vs 45 µs CPU and gzip 360 vs 150 µs.
 *
 * Every reader is bounded (recordBatchOutputLimit): any producer of a topic can write a small batch
 * that inflates without limit, so no codec allocates more than the bound for one batch's records.
 */
import * as zlib from 'node:zlib';
import { CompressionCodecs, CompressionTypes } from 'kafkajs';
import { promisify } from 'node:util';
import { compressSync as snappyCompressSync, uncompressSync as snappyUncompressSync } from 'snappy';
import { decompressLz4Frame, lz4Codec, type KafkaJsCodec } from './lz4-codec';
import { RecordBatchDecodeError, recordBatchOutputLimit } from './batch-bound';
import { fixKafkaRequestQueueTimer } from './request-queue-timer';
import { assembleKafkaResponses } from './response-assembly';

/**
 * Java clients (xerial snappy-java) frame snappy as a 16-byte header then length-prefixed blocks;
 * librdkafka and kafkajs write one raw snappy block. Both occur on one topic; both must decode.
 */
const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER_BYTES = 16;

/** True when `buffer` starts with the xerial snappy-java stream header. */
export function isXerialSnappy(buffer: Buffer): boolean {
  return buffer.length >= XERIAL_HEADER_BYTES && buffer.subarray(0, 8).equals(XERIAL_MAGIC);
}

function snappyRead(buffer: Buffer): Buffer {
  const max = recordBatchOutputLimit();
  if (!isXerialSnappy(buffer)) return snappyBlock(buffer, max);
  const blocks: Buffer[] = [];
  let pos = XERIAL_HEADER_BYTES;
  let total = 0;
  while (pos + 4 <= buffer.length) {
    const size = buffer.readUInt32BE(pos);
    pos += 4;
    if (pos + size > buffer.length)
      throw new RecordBatchDecodeError('corrupt', 'snappy: truncated xerial block');
    const block = snappyBlock(buffer.subarray(pos, pos + size), max - total);
    blocks.push(block);
    total += block.length;
    pos += size;
  }
  return blocks.length === 1 ? blocks[0] : Buffer.concat(blocks, total);
}

/** One raw snappy block, its uncompressed-length preamble judged before the decoder allocates it. */
function snappyBlock(block: Buffer, max: number): Buffer {
  const claimed = snappyPreamble(block);
  if (claimed > max) throw new RecordBatchDecodeError('too_large', `snappy: exceeds ${max} bytes`);
  return snappyUncompressSync(block) as Buffer;
}

/** The uncompressed length a raw snappy block starts with (a little-endian base-128 varint). */
export function snappyPreamble(block: Buffer): number {
  let result = 0;
  for (let i = 0, scale = 1; i < 5; i++, scale *= 128) {
    if (i >= block.length) break;
    result += (block[i] & 0x7f) * scale;
    if (block[i] < 0x80) return result;
  }
  throw new RecordBatchDecodeError('corrupt', 'snappy: bad length preamble');
}

/** Snappy as Kafka uses it: writes raw blocks (what librdkafka writes), reads raw and xerial. */
export const snappyCodec: KafkaJsCodec = {
  async compress(encoder) {
    return snappyCompressSync(encoder.buffer);
  },
  async decompress(buffer) {
    return snappyRead(buffer);
  },
};

/** node:zlib's zstd functions (Node >= 23.8; the pinned @types/node predates them). */
const zstd = zlib as unknown as {
  zstdCompressSync(data: Buffer, options: { params: Record<number, number> }): Buffer;
  zstdDecompressSync(data: Buffer, options?: { maxOutputLength?: number }): Buffer;
  constants: { ZSTD_c_compressionLevel: number };
};
const ZSTD_LEVEL_3 = { params: { [zstd.constants.ZSTD_c_compressionLevel]: 3 } };

/** Zstandard frames (level 3, the zstd and librdkafka default), with node:zlib's built-in zstd. */
export const zstdCodec: KafkaJsCodec = {
  async compress(encoder) {
    return zstd.zstdCompressSync(encoder.buffer, ZSTD_LEVEL_3);
  },
  async decompress(buffer) {
    return zstdRead(buffer);
  },
};

function zstdRead(buffer: Buffer): Buffer {
  return bounded('zstd', (max) => zstd.zstdDecompressSync(buffer, { maxOutputLength: max }));
}

const gzipAsync = promisify(zlib.gzip);

/** gzip as kafkajs writes it (on the threadpool), read synchronously. */
export const gzipCodec: KafkaJsCodec = {
  async compress(encoder) {
    return gzipAsync(encoder.buffer);
  },
  async decompress(buffer) {
    return gzipRead(buffer);
  },
};

function gzipRead(buffer: Buffer): Buffer {
  return bounded('gzip', (max) => zlib.unzipSync(buffer, { maxOutputLength: max }));
}

/** Runs a zlib reader with the batch bound as its maxOutputLength; its errors as RecordBatchDecodeError. */
function bounded(codec: string, read: (max: number) => Buffer): Buffer {
  const max = recordBatchOutputLimit();
  try {
    return read(max);
  } catch (err) {
    // node:zlib stops and throws ERR_BUFFER_TOO_LARGE once the output passes maxOutputLength.
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
      throw new RecordBatchDecodeError('too_large', `${codec}: exceeds ${max} bytes`);
    throw new RecordBatchDecodeError(
      'corrupt',
      `${codec}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/** The codecs this process can read and write, by Kafka compression name. */
export const SUPPORTED_COMPRESSION = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;

/**
 * Registers gzip, snappy, lz4 and zstd in kafkajs process-wide, and (every kafkajs user calls this
 * first) replaces kafkajs's perpetual 1 ms request-queue timer (request-queue-timer.ts) and its
 * doubling response assembly (response-assembly.ts). Idempotent.
 */
export function registerKafkaCodecs(): void {
  fixKafkaRequestQueueTimer();
  assembleKafkaResponses();
  CompressionCodecs[CompressionTypes.GZIP] = () => gzipCodec;
  CompressionCodecs[CompressionTypes.Snappy] = () => snappyCodec;
  CompressionCodecs[CompressionTypes.LZ4] = () => lz4Codec;
  CompressionCodecs[CompressionTypes.ZSTD] = () => zstdCodec;
}

/** A codec's reader called directly: the decompressed bytes, or a RecordBatchDecodeError. */
export type SyncBatchReader = (compressed: Buffer) => Buffer;

const SYNC_READERS: ReadonlyArray<[number, KafkaJsCodec, SyncBatchReader]> = [
  [CompressionTypes.GZIP, gzipCodec, gzipRead],
  [CompressionTypes.Snappy, snappyCodec, snappyRead],
  [CompressionTypes.LZ4, lz4Codec, decompressLz4Frame],
  [CompressionTypes.ZSTD, zstdCodec, zstdRead],
];
const CODEC_MASK = 0x07;

/**
 * The synchronous reader of a record batch's codec (by the batch's attributes), when kafkajs reads
 * that codec with ours (registerKafkaCodecs); undefined for another registered codec. It lets a
 * batch be decompressed later, when its records are taken (record-run.ts), without a promise.
 */
export function syncBatchReader(attributes: number): SyncBatchReader | undefined {
  const type = attributes & CODEC_MASK;
  for (const [t, codec, read] of SYNC_READERS) {
    if (t !== type) continue;
    const registered = (CompressionCodecs as Record<number, (() => unknown) | undefined>)[t];
    return registered?.() === codec ? read : undefined;
  }
  return undefined;
}
