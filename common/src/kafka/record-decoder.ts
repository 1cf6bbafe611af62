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
 */
/* eslint-disable @typescript-eslint/no-require-imports */
import { RecordBatchDecodeError, type RecordBatchDecodeFailure } from './batch-bound';

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
const LOG_APPEND_TIME = 1;
const CREATE_TIME = 0;

/** Set on the stand-in record of an undecodable batch (a symbol: no producer can forge it). */
export const BATCH_NOT_DECODABLE = Symbol('logpipeline.batchNotDecodable');

/** What BATCH_NOT_DECODABLE carries: the cause and the batch's offset range. */
export interface BatchNotDecodable {
  kind: RecordBatchDecodeFailure;
  message: string;
  firstOffset: string;
  lastOffset: string;
}

let useFast = true;
let installed: boolean | undefined;

/**
 * Puts the fast decoder in place of kafkajs's (idempotent; `enabled=false` switches back to the
 * original for A/B runs). True when the fast decoder is (or can be switched) in use.
 */
export function installFastRecordDecoder(enabled = true): boolean {
  useFast = enabled;
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
      ? decodeRecordBatch(fetchDecoder, lookupCodecByAttributes, errors.KafkaJSPartialMessageError)
      : original(fetchDecoder)) satisfies BatchDecoder;
  return (installed = true);
}

/** The original decoder's batch header, then the records by `decodeRecords` (same output). */
export async function decodeRecordBatch(
  fetchDecoder: KafkaDecoder,
  lookupCodec: (attributes: number) => Codec,
  PartialError: new (m: string) => Error,
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

/** The one record that stands for a batch whose records could not be decompressed. */
function standIn(compressed: Buffer, err: unknown, ctx: BatchContext): Record<string | symbol, unknown> {
  const lastOffset = (BigInt(ctx.firstOffset) + BigInt(Math.max(0, ctx.lastOffsetDelta))).toString();
  const cause: BatchNotDecodable = {
    kind: err instanceof RecordBatchDecodeError ? err.kind : 'corrupt',
    message: (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').slice(0, 200),
    firstOffset: ctx.firstOffset,
    lastOffset,
  };
  return {
    magicByte: ctx.magicByte,
    attributes: 0,
    timestamp: ctx.firstTimestamp,
    offset: lastOffset,
    key: null,
    value: compressed,
    headers: NO_HEADERS,
    isControlRecord: false,
    batchContext: ctx,
    [BATCH_NOT_DECODABLE]: cause,
  };
}

/** The fields of a batch every record refers to (kafkajs's `batchContext`). */
interface BatchContext {
  firstOffset: string;
  firstTimestamp: string;
  maxTimestamp: string;
  lastOffsetDelta: number;
  timestampType: number;
  isControlBatch: boolean;
  magicByte: number;
}

/** `count` records from `b` at `pos`, each exactly as kafkajs's record v0 decoder returns it. */
export function decodeRecords(b: Buffer, pos: number, count: number, ctx: BatchContext): unknown[] {
  const out = new Array<unknown>(count);
  const baseOffset = Number(ctx.firstOffset);
  const offsetsSafe = Number.isSafeInteger(baseOffset + Math.max(0, ctx.lastOffsetDelta));
  const baseTimestamp = Number(ctx.firstTimestamp);
  const appendTime = ctx.timestampType === LOG_APPEND_TIME && ctx.maxTimestamp ? ctx.maxTimestamp : null;
  const r = { pos };
  for (let i = 0; i < count; i++) {
    const recordLength = varInt(b, r);
    const end = r.pos + recordLength;
    const attributes = b.readInt8(r.pos++);
    const timestampDelta = varLong(b, r);
    const timestamp =
      appendTime ??
      (Number.isSafeInteger(baseTimestamp + timestampDelta)
        ? String(baseTimestamp + timestampDelta)
        : (BigInt(ctx.firstTimestamp) + BigInt(timestampDelta)).toString());
    const offsetDelta = varInt(b, r);
    const offset = offsetsSafe
      ? String(baseOffset + offsetDelta)
      : (BigInt(ctx.firstOffset) + BigInt(offsetDelta)).toString();
    const key = varBytes(b, r);
    const value = varBytes(b, r);
    const headers = readHeaders(b, r);
    out[i] = {
      magicByte: ctx.magicByte,
      attributes,
      timestamp,
      offset,
      key,
      value,
      headers,
      isControlRecord: ctx.isControlBatch,
      batchContext: ctx,
    };
    r.pos = end;
  }
  return out;
}

/** Zigzag varint (32-bit), as kafkajs's Decoder.readVarInt. */
function varInt(b: Buffer, r: { pos: number }): number {
  let byte: number;
  let result = 0;
  let shift = 0;
  do {
    byte = b[r.pos++];
    result += (byte & 0x7f) << shift;
    shift += 7;
  } while (byte >= 0x80);
  return (result >>> 1) ^ -(result & 1);
}

/** Zigzag varlong as a number (exact below 2^53; record deltas are far smaller). */
function varLong(b: Buffer, r: { pos: number }): number {
  let byte: number;
  let result = 0;
  let scale = 1;
  do {
    byte = b[r.pos++];
    result += (byte & 0x7f) * scale;
    scale *= 128;
  } while (byte >= 0x80);
  return result % 2 === 0 ? result / 2 : -(result + 1) / 2;
}

function varBytes(b: Buffer, r: { pos: number }): Buffer | null {
  const n = varInt(b, r);
  if (n === -1) return null;
  const start = r.pos;
  r.pos += n;
  return b.subarray(start, start + n);
}

/** The headers of every record without any: one frozen object instead of one per message. */
const NO_HEADERS: Record<string, never> = Object.freeze({});

/** Headers folded as kafkajs folds them: a repeated key becomes an array of its values. */
function readHeaders(b: Buffer, r: { pos: number }): Record<string, Buffer | null | Array<Buffer | null>> {
  const count = varInt(b, r);
  if (count <= 0) return NO_HEADERS;
  const headers: Record<string, Buffer | null | Array<Buffer | null>> = {};
  for (let i = 0; i < count; i++) {
    const keyLength = varInt(b, r);
    let key: string | null = null;
    if (keyLength !== -1) {
      key = b.toString('utf8', r.pos, r.pos + keyLength);
      r.pos += keyLength;
    }
    const value = varBytes(b, r);
    const k = String(key);
    const prev = headers[k];
    headers[k] = prev === undefined ? value : Array.isArray(prev) ? prev.concat([value]) : [prev, value];
  }
  return headers;
}
