/**
 * The records of a Kafka RecordBatch (magic v2) read straight off a buffer: kafkajs's record shape
 * (record-decoder.ts, for every consumer) and the zigzag varints and headers that RecordRun
 * (record-run.ts, the worker's per-batch form without per-record objects) shares with it.
 */
import { RecordBatchDecodeError, type RecordBatchDecodeFailure } from './batch-bound';

/** kafkajs's timestampType of a batch stamped by the broker. */
export const LOG_APPEND_TIME = 1;

/** Set on the stand-in record of an undecodable batch (a symbol: no producer can forge it). */
export const BATCH_NOT_DECODABLE = Symbol('logpipeline.batchNotDecodable');

/** What BATCH_NOT_DECODABLE carries: the cause and the batch's offset range. */
export interface BatchNotDecodable {
  kind: RecordBatchDecodeFailure;
  message: string;
  firstOffset: string;
  lastOffset: string;
}

/** The fields of a batch every record refers to (kafkajs's `batchContext`). */
export interface BatchContext {
  firstOffset: string;
  firstTimestamp: string;
  maxTimestamp: string;
  lastOffsetDelta: number;
  timestampType: number;
  isControlBatch: boolean;
  magicByte: number;
}

/** The one record that stands for a batch whose records could not be decompressed. */
export function standIn(
  compressed: Buffer,
  err: unknown,
  ctx: BatchContext,
): Record<string | symbol, unknown> {
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
export function varInt(b: Buffer, r: { pos: number }): number {
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

export function varBytes(b: Buffer, r: { pos: number }): Buffer | null {
  const n = varInt(b, r);
  if (n === -1) return null;
  const start = r.pos;
  r.pos += n;
  return b.subarray(start, start + n);
}

/** The headers of every record without any: one frozen object instead of one per message. */
export const NO_HEADERS: Record<string, never> = Object.freeze({});

/** Headers folded as kafkajs folds them: a repeated key becomes an array of its values. */
export function readHeaders(
  b: Buffer,
  r: { pos: number },
): Record<string, Buffer | null | Array<Buffer | null>> {
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
