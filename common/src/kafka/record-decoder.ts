/**
 * A faster drop-in for kafkajs's record-batch decoder (magic v2), installed before the first fetch.
 * kafkajs decodes every record through a new Decoder over a copy-free slice of the record, two
 * BigInt-backed Long additions turned into strings (offset, timestamp) and a header array folded
 * with object spreads; for one-line messages that is most of the client's CPU. This decoder reads
 * the same wire format straight off the batch buffer with plain number arithmetic (BigInt only past
 * 2^53) and returns exactly kafkajs's shape (same fields, strings, Buffers, header merging), so
 * everything above it — Batch filtering, offsets, pause, commits — is unchanged.
 *
 * It replaces the module `kafkajs/src/protocol/recordBatch/v0/decoder` in the require cache, which
 * only works while the fetch response decoder that captures it is not loaded yet; otherwise the
 * original stays and install reports false. kafkajs is pinned in package.json: its internal paths
 * are not a public API, so a test compares this decoder with the original on real batches.
 *
 * A compressed batch that does not decompress (corrupt, or inflating past batch-bound.ts's bound)
 * must not throw: kafkajs would fail the whole fetch response (every partition of that broker) and
 * fetch the same batch again forever. It becomes ONE stand-in record instead, at the batch's last
 * offset, with the compressed bytes as its value and BATCH_NOT_DECODABLE naming the cause, which
 * the worker dead-letters whole and commits past like any message.
 *
 * In run mode (the worker only) a batch becomes ONE RecordRun instead of its records
 * (record-run.ts): left compressed until the worker takes it, read without per-record objects.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
import { syncBatchReader } from './codecs';
import { RecordRun } from './record-run';
import { decodeRecords, LOG_APPEND_TIME, standIn, type BatchContext } from './record-wire';

type KafkaDecoder = {
  buffer: Buffer;
  offset: number;
  readInt8(): number;
  readInt16(): number;
  readInt32(): number;
  readInt64(): { toString(): string };
  readAll(): Buffer;
  slice(size: number): KafkaDecoder;
  forward(size: number): void;
};
type Codec = { decompress(b: Buffer): Promise<Buffer> } | null;
type BatchDecoder = (fetchDecoder: KafkaDecoder) => Promise<Record<string, unknown>>;

const BATCH_DECODER = 'kafkajs/src/protocol/recordBatch/v0/decoder';
const FETCH_MESSAGES_DECODER = 'kafkajs/src/protocol/requests/fetch/v4/decodeMessages';
const TIMESTAMP_TYPE_FLAG_MASK = 0x8;
const TRANSACTIONAL_FLAG_MASK = 0x10;
const CONTROL_FLAG_MASK = 0x20;
const CREATE_TIME = 0;

export { BATCH_NOT_DECODABLE, type BatchNotDecodable } from './record-wire';

let useFast = true;
let useRuns = false;
let installed: boolean | undefined;

/**
 * Puts the fast decoder in place of kafkajs's (idempotent; `enabled=false` switches back to the
 * original for A/B runs). True when the fast decoder is (or can be switched) in use. With `runs`
 * every batch it can (safe offsets; no codec or one of ours) becomes ONE RecordRun (record-run.ts)
 * in the record list, decompressed only when taken: only for a process whose every consumer reads
 * runs (the worker: fetch-batch.ts and the worker's eachBatch know them).
 */
export function installFastRecordDecoder(enabled = true, options: { runs?: boolean } = {}): boolean {
  useFast = enabled;
  useRuns = options.runs === true;
  if (installed !== undefined) return installed;
  const batchPath = require.resolve(BATCH_DECODER);
  if (require.cache[require.resolve(FETCH_MESSAGES_DECODER)]) return (installed = false);
  const original = require(batchPath) as BatchDecoder;
  const cached = require.cache[batchPath];
  if (!cached) return (installed = false);
  const errors = require('kafkajs/src/errors') as { KafkaJSPartialMessageError: new (m: string) => Error };
  const { lookupCodecByAttributes } = require('kafkajs/src/protocol/message/compression') as {
    lookupCodecByAttributes(attributes: number): Codec;
  };
  cached.exports = ((fetchDecoder: KafkaDecoder) =>
    useFast
      ? decodeRecordBatch(fetchDecoder, lookupCodecByAttributes, errors.KafkaJSPartialMessageError, useRuns)
      : original(fetchDecoder)) satisfies BatchDecoder;
  return (installed = true);
}

/**
 * The original decoder's batch header, then the records by `decodeRecords` (same output), or with
 * `runs` (where the batch allows it) one RecordRun for all of them.
 */
export async function decodeRecordBatch(
  fetchDecoder: KafkaDecoder,
  lookupCodec: (attributes: number) => Codec,
  PartialError: new (m: string) => Error,
  runs = false,
): Promise<Record<string, unknown>> {
  const firstOffset = fetchDecoder.readInt64().toString();
  const length = fetchDecoder.readInt32();
  const decoder = fetchDecoder.slice(length);
  fetchDecoder.forward(length);
  const remainingBytes = Buffer.byteLength(decoder.buffer);
  if (remainingBytes < length) {
    throw new PartialError(
      `Tried to decode a partial record batch: remainingBytes(${remainingBytes}) < recordBatchLength(${length})`,
    );
  }
  const partitionLeaderEpoch = decoder.readInt32();
  const magicByte = decoder.readInt8();
  decoder.readInt32(); // CRC: not validated (as kafkajs)
  const attributes = decoder.readInt16();
  const lastOffsetDelta = decoder.readInt32();
  const firstTimestamp = decoder.readInt64().toString();
  const maxTimestamp = decoder.readInt64().toString();
  const producerId = decoder.readInt64().toString();
  const producerEpoch = decoder.readInt16();
  const firstSequence = decoder.readInt32();
  const recordContext = {
    firstOffset,
    firstTimestamp,
    partitionLeaderEpoch,
    inTransaction: (attributes & TRANSACTIONAL_FLAG_MASK) > 0,
    isControlBatch: (attributes & CONTROL_FLAG_MASK) > 0,
    lastOffsetDelta,
    producerId,
    producerEpoch,
    firstSequence,
    maxTimestamp,
    timestampType: (attributes & TIMESTAMP_TYPE_FLAG_MASK) > 0 ? LOG_APPEND_TIME : CREATE_TIME,
  };
  const codec = lookupCodec(attributes);
  const batchContext = { ...recordContext, magicByte };
  if (runs) {
    const run = recordRun(decoder, attributes, codec !== null, batchContext);
    if (run) return { ...recordContext, records: run.count > 0 ? [run] : [] };
  }
  let records: unknown[];
  if (!codec) {
    const count = decoder.readInt32();
    records = count === -1 ? [] : decodeRecords(decoder.buffer, decoder.offset, count, batchContext);
  } else {
    const count = decoder.readInt32();
    const compressed = decoder.readAll();
    if (count <= 0) records = [];
    else {
      let plain: Buffer | undefined;
      try {
        plain = await codec.decompress(compressed);
      } catch (err) {
        records = [standIn(compressed, err, batchContext)];
      }
      if (plain) records = decodeRecords(plain, 0, count, batchContext);
    }
  }
  return { ...recordContext, records: records! };
}

/** The batch as one RecordRun, when its offsets are safe numbers and its codec reads synchronously. */
function recordRun(
  decoder: KafkaDecoder,
  attributes: number,
  compressed: boolean,
  ctx: BatchContext,
): RecordRun | undefined {
  const base = Number(ctx.firstOffset);
  if (!Number.isSafeInteger(base) || !Number.isSafeInteger(base + Math.max(0, ctx.lastOffsetDelta))) return;
  const read = compressed ? syncBatchReader(attributes) : undefined;
  if (compressed && read === undefined) return;
  const count = Math.max(0, decoder.readInt32());
  if (!compressed) return new RecordRun(ctx, count, decoder.buffer, decoder.offset, undefined);
  return new RecordRun(ctx, count, decoder.readAll(), 0, read);
}
