/**
 * LZ4 for kafkajs. kafkajs ships no LZ4 codec; Kafka's record batches carry the LZ4 *frame*
 * format (independent 64 KiB blocks, no content checksum). Compression is lz4-napi's frame writer;
 * decompression is lz4-frame.ts on the event loop (~3x lz4-napi's frame reader per CPU-second on
 * log batches, and no threadpool hop).
 */
import { CompressionCodecs, CompressionTypes } from 'kafkajs';
import { compressFrame, compressFrameSync } from 'lz4-napi';
import { decompressLz4Frame } from './lz4-frame';

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

/** Registers the LZ4 codec process-wide in kafkajs (idempotent); call before producing or consuming LZ4. */
export function registerLz4Codec(): void {
  CompressionCodecs[CompressionTypes.LZ4] = () => lz4Codec;
}
