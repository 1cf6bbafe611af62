/**
 * The bound on one Kafka record batch's decompressed size. The broker limits a batch as it is
 * stored, compressed (the topic's max.message.bytes), not what it inflates to: a producer of the
 * topic can write a ~1 KB zstd or gzip batch of zeros that inflates to gigabytes. Every batch
 * reader (codecs.ts, lz4-codec.ts) therefore allocates at most this many bytes for one batch's
 * records and refuses the batch past it (record-decoder.ts turns that into one dead letter).
 */

/** Default bound: 4 x DEFAULT_MAX_VALUE_BYTES (16 MiB), far above a real batch (see setRecordBatchOutputLimit). */
export const DEFAULT_MAX_RECORD_BATCH_BYTES = 64 * 1024 * 1024;

/** How many times the largest accepted message value one decompressed batch may hold. */
export const RECORD_BATCH_VALUE_FACTOR = 4;

let limit = DEFAULT_MAX_RECORD_BATCH_BYTES;

/** The current bound on one batch's decompressed bytes. */
export function recordBatchOutputLimit(): number {
  return limit;
}

/**
 * Sets the bound process-wide (the worker calls it once with recordBatchLimitFor(kafka.maxValueBytes)).
 * A batch holds whole messages and the broker takes at most max.message.bytes compressed; real log
 * batches compress 5-10x, so 4 x the largest decoded value a pipeline accepts leaves room for
 * several maximal messages in one batch while keeping one batch's memory bounded.
 */
export function setRecordBatchOutputLimit(bytes: number): void {
  if (!Number.isSafeInteger(bytes) || bytes <= 0) throw new RangeError(`bad record batch bound ${bytes}`);
  limit = bytes;
}

/** The batch bound that goes with a worker's kafka.maxValueBytes (undefined: the default). */
export function recordBatchLimitFor(maxValueBytes: number | undefined): number {
  return maxValueBytes === undefined
    ? DEFAULT_MAX_RECORD_BATCH_BYTES
    : RECORD_BATCH_VALUE_FACTOR * maxValueBytes;
}

/** Why a record batch did not decode: a metrics label (a closed set). */
export type RecordBatchDecodeFailure = 'too_large' | 'corrupt';

/** A record batch whose records cannot be decompressed; `message` names the codec and the cause. */
export class RecordBatchDecodeError extends Error {
  /** Carries the failure kind (metrics label) next to the message (dead-letter reason). */
  constructor(
    readonly kind: RecordBatchDecodeFailure,
    message: string,
  ) {
    super(message.replace(/\s+/g, ' ').slice(0, 200));
    this.name = 'RecordBatchDecodeError';
  }
}
