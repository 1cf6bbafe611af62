/**
 * LZ4 for kafkajs. kafkajs ships no LZ4 codec; Kafka's record batches carry the LZ4 *frame*
 * format (independent 64 KiB blocks, no content checksum), which is exactly what lz4-napi's
 * frame functions read and write, so the codec is a thin adapter. Reading is synchronous at every
 * size: a record batch decodes in tens of microseconds, and the threadpool hop of the async form
 * cost more CPU than the decoding (single-line intake A/B in bench/e2e-kafka.ts: 836k vs 611k
 * messages per CPU-second; a TypeScript frame decoder measured 568k and was dropped).
 */
import { CompressionCodecs, CompressionTypes } from 'kafkajs';
import { compressFrame, compressFrameSync, decompressFrameSync } from 'lz4-napi';

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
    return decompressFrameSync(buffer);
  },
};

/** Registers the LZ4 codec process-wide in kafkajs (idempotent); call before producing or consuming LZ4. */
export function registerLz4Codec(): void {
  CompressionCodecs[CompressionTypes.LZ4] = () => lz4Codec;
}
