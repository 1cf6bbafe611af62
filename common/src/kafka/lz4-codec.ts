/**
 * LZ4 for kafkajs. kafkajs ships no LZ4 codec; Kafka's record batches carry the LZ4 *frame*
 * format (independent 64 KiB blocks, no content checksum), which is exactly what lz4-napi's
 * frame functions read and write. Reading is synchronous at every size (the threadpool hop of the
 * async form cost more CPU than the decoding) and goes block by block: lz4-napi's frame reader
 * measured ~300 MB/s on 124 KB log batches in a process that allocates as the worker does, its
 * block reader 1.4–2.8 GB/s on the same blocks (a TypeScript decoder 0.6–1.1 GB/s). So the frame
 * header and block sizes are read here and each independent block goes to the block reader; linked
 * blocks, checksums, dictionaries and anything unexpected go to the frame reader (as before).
 * Neither reader decodes past the batch bound (batch-bound.ts): the block reader is given what is
 * left of it as each block's size bound; before the frame reader (which takes no bound) runs, the
 * most the frame can decode to (blocks x its maximum block size) is judged against it.
 */
import { CompressionCodecs, CompressionTypes } from 'kafkajs';
import { compressFrame, compressFrameSync, decompressFrameSync, uncompressSync } from 'lz4-napi';
import { RecordBatchDecodeError, recordBatchOutputLimit } from './batch-bound';

/**
 * Payloads at least this large are compressed on libuv's threadpool so the event loop keeps
 * working meanwhile; below it the threadpool hop costs more than the compression.
 */
export const LZ4_ASYNC_THRESHOLD_BYTES = 64 * 1024;

/** The shape kafkajs expects from a compression codec (its typings say only `any`). */
export interface KafkaJsCodec {
  compress(encoder: { buffer: Buffer }): Promise<Buffer>;
  decompress(buffer: Buffer): Promise<Buffer>;
}

/** Compresses/decompresses whole Kafka record-batch payloads as LZ4 frames. */
export const lz4Codec: KafkaJsCodec = {
  async compress(encoder) {
    const data = encoder.buffer;
    return data.length >= LZ4_ASYNC_THRESHOLD_BYTES ? compressFrame(data) : compressFrameSync(data);
  },
  async decompress(buffer) {
    return decompressLz4Frame(buffer);
  },
};

const FRAME_MAGIC = 0x184d2204;
const FLG_VERSION_01 = 0x40;
const FLG_INDEPENDENT = 0x20;
const FLG_BLOCK_CHECKSUM = 0x10;
const FLG_CONTENT_SIZE = 0x08;
const FLG_CONTENT_CHECKSUM = 0x04;
const FLG_DICT_ID = 0x01;
const BLOCK_UNCOMPRESSED = 0x80000000;
/** Block maximum sizes by the BD byte's 3-bit id (4: 64 KiB … 7: 4 MiB). */
const MAX_BLOCK_BYTES = [0, 0, 0, 0, 64 << 10, 256 << 10, 1 << 20, 4 << 20];

/**
 * One LZ4 frame's content: independent blocks without checksums through lz4-napi's block reader
 * (each given the frame's maximum block size as its size bound), every other shape through its
 * frame reader.
 */
export function decompressLz4Frame(src: Buffer): Buffer {
  const max = recordBatchOutputLimit();
  const blocks = independentBlocks(src);
  if (blocks) return decodeBlocks(src, blocks, max);
  // The frame reader takes no bound: judge the most its blocks can decode to before it runs.
  if (lz4OutputBound(src) > max) throw new RecordBatchDecodeError('too_large', `lz4: exceeds ${max} bytes`);
  try {
    return decompressFrameSync(src);
  } catch (err) {
    throw new RecordBatchDecodeError('corrupt', `lz4: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Independent blocks through the block reader, each bounded by what is left of `max`. */
function decodeBlocks(
  src: Buffer,
  blocks: { maxBytes: number; list: Array<[number, number, boolean]> },
  max: number,
): Buffer {
  const out: Buffer[] = [];
  let total = 0;
  for (const [start, end, compressed] of blocks.list) {
    const room = Math.min(blocks.maxBytes, max - total);
    let part: Buffer;
    if (!compressed) {
      if (end - start > room) throw new RecordBatchDecodeError('too_large', `lz4: exceeds ${max} bytes`);
      part = src.subarray(start, end);
    } else {
      if (room <= 0) throw new RecordBatchDecodeError('too_large', `lz4: exceeds ${max} bytes`);
      part = decodeBlock(src, start, end, room, room < blocks.maxBytes, max);
    }
    out.push(part);
    total += part.length;
  }
  return out.length === 1 ? out[0] : Buffer.concat(out, total);
}

/**
 * Decoded bytes per compressed byte seen last (log blocks: ~4-8). The block reader reserves its
 * whole output bound for every block, and Kafka producers' frames say 4 MiB blocks: reserving
 * 4 MiB for a 250 KB block measured 20-30 % slower decoding (16 MiB: 3x), so a block is first
 * tried with a bound from this ratio and only retried with the frame's bound when that is too small.
 */
let decodedPerCompressed = 8;

/** Output bound of a block's first attempt: the last ratio with headroom, within `room`. */
export function firstBound(compressedBytes: number, room: number): number {
  return Math.min(room, Math.ceil(compressedBytes * decodedPerCompressed * 1.25) + 4096);
}

/**
 * One compressed block [start, end) of `src` through the block reader: first with firstBound(),
 * then (only if that failed) with `room`, so the outcome for any block is that of a call with
 * `room` alone. `short`: room was cut by the batch bound `max` (a failure then means too large).
 */
function decodeBlock(
  src: Buffer,
  start: number,
  end: number,
  room: number,
  short: boolean,
  max: number,
): Buffer {
  const first = firstBound(end - start, room);
  let part: Buffer | undefined;
  let err: unknown;
  try {
    part = uncompressBounded(src, start, end, first);
  } catch (e) {
    err = e;
  }
  if (part === undefined && first < room) {
    try {
      part = uncompressBounded(src, start, end, room);
    } catch (e) {
      err = e;
    }
  }
  if (part === undefined) {
    if (short) throw new RecordBatchDecodeError('too_large', `lz4: exceeds ${max} bytes`);
    throw new RecordBatchDecodeError('corrupt', `lz4: ${err instanceof Error ? err.message : String(err)}`);
  }
  decodedPerCompressed = Math.min(255, Math.max(1, part.length / Math.max(1, end - start)));
  return part;
}

/**
 * lz4-napi's block format is the block preceded by its output bound (little-endian u32); the
 * reader reserves that bound and fails a block that would decode past it. The frame's own 4-byte
 * block size sits right before the block: it is overwritten with the bound for the (synchronous)
 * call and put back, rather than copying every block behind a new prefix.
 */
function uncompressBounded(src: Buffer, start: number, end: number, bound: number): Buffer {
  const word = src.readUInt32LE(start - 4);
  src.writeUInt32LE(bound, start - 4);
  try {
    return uncompressSync(src.subarray(start - 4, end)) as Buffer;
  } finally {
    src.writeUInt32LE(word, start - 4);
  }
}

/** The blocks of a single frame of independent, unchecksummed blocks, or undefined for any other shape. */
function independentBlocks(
  src: Buffer,
): { maxBytes: number; list: Array<[number, number, boolean]> } | undefined {
  if (src.length < 7 || src.readUInt32LE(0) !== FRAME_MAGIC) return undefined;
  const flg = src[4];
  // Checksummed frames too: the frame reader verifies them (Kafka's producers write none; the
  // record batch's CRC-32C, checked by the broker, covers these bytes).
  const other = FLG_DICT_ID | FLG_BLOCK_CHECKSUM | FLG_CONTENT_CHECKSUM;
  if ((flg & 0xc0) !== FLG_VERSION_01 || (flg & FLG_INDEPENDENT) === 0 || (flg & other) !== 0)
    return undefined;
  const maxBytes = MAX_BLOCK_BYTES[(src[5] >> 4) & 7];
  if (!maxBytes) return undefined;
  let pos = 4 + 2 + ((flg & FLG_CONTENT_SIZE) !== 0 ? 8 : 0) + 1;
  const list: Array<[number, number, boolean]> = [];
  for (;;) {
    if (pos + 4 > src.length) return undefined;
    const word = src.readUInt32LE(pos);
    pos += 4;
    if (word === 0) break;
    const size = (word & ~BLOCK_UNCOMPRESSED) >>> 0;
    if (size > maxBytes || pos + size > src.length) return undefined;
    list.push([pos, pos + size, (word & BLOCK_UNCOMPRESSED) === 0]);
    pos += size;
  }
  // Another frame after this one (or stray bytes): the frame reader handles or refuses it.
  return pos === src.length ? { maxBytes, list } : undefined;
}

/**
 * The most bytes the LZ4 frames in `src` can decode to: each block at most its frame's maximum
 * block size. Walks every frame's header and block sizes only; throws on a malformed structure.
 */
export function lz4OutputBound(src: Buffer): number {
  let pos = 0;
  let bound = 0;
  while (pos < src.length) {
    if (pos + 7 > src.length || src.readUInt32LE(pos) !== FRAME_MAGIC)
      throw new RecordBatchDecodeError('corrupt', 'lz4: not an LZ4 frame');
    const flg = src[pos + 4];
    const maxBytes = MAX_BLOCK_BYTES[(src[pos + 5] >> 4) & 7];
    if (!maxBytes) throw new RecordBatchDecodeError('corrupt', 'lz4: bad block maximum size');
    pos += 6 + (flg & FLG_CONTENT_SIZE ? 8 : 0) + (flg & FLG_DICT_ID ? 4 : 0) + 1;
    for (;;) {
      if (pos + 4 > src.length) throw new RecordBatchDecodeError('corrupt', 'lz4: truncated frame');
      const word = src.readUInt32LE(pos);
      pos += 4;
      if (word === 0) break;
      pos += ((word & ~BLOCK_UNCOMPRESSED) >>> 0) + (flg & FLG_BLOCK_CHECKSUM ? 4 : 0);
      bound += maxBytes;
    }
    pos += flg & FLG_CONTENT_CHECKSUM ? 4 : 0;
  }
  return bound;
}

/** Registers the LZ4 codec process-wide in kafkajs (idempotent); call before producing or consuming LZ4. */
export function registerLz4Codec(): void {
  CompressionCodecs[CompressionTypes.LZ4] = () => lz4Codec;
}
