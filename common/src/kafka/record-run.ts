/**
 * One Kafka record batch as the worker takes it, instead of one kafkajs object per record. kafkajs
 * decodes a fetch response whole: every record becomes an object with a string offset, a string
 * timestamp, key/value Buffers and headers, and every compressed batch is decompressed at once — a
 * catching-up worker held the decoded backlog of a whole 64 MiB fetch (a 400k-line single-line
 * backlog peaked at 626–653 MiB) before its in-flight budget could say stop.
 *
 * A RecordRun stands in the fetched record list for its whole batch (it carries the batch's last
 * offset and control flag, which is all kafkajs's Batch and runner read of a message), keeps the
 * batch's bytes as fetched, decompresses them only when the worker reaches the batch (open()), and
 * is then read record by record with next() into reused fields: numbers for offsets, a view of the
 * value, no per-record object. Where kafkajs's own message objects are needed (aborted transactions:
 * fetch-batch.ts), expand() returns exactly what the record decoder returns for the batch.
 */
import type { SyncBatchReader } from './codecs';
import { decodeRecords, NO_HEADERS, readHeaders, standIn, varInt, type BatchContext } from './record-wire';

/** Headers of a record as kafkajs folds them (a repeated key becomes an array). */
export type RecordHeaders = Record<string, Buffer | null | Array<Buffer | null>>;

const EMPTY = Buffer.alloc(0);

/** A record batch read lazily: decompressed at open(), records read in place by next(). */
export class RecordRun {
  /** The batch's last offset as text: what kafkajs's Batch and runner read as a message offset. */
  readonly offset: string;
  /** True for a control batch (transaction markers): kafkajs's Batch hides it from eachBatch. */
  readonly isControlRecord: boolean;
  /** The batch's last offset (first offset + last offset delta), a safe integer. */
  readonly lastOffset: number;
  /** After next(): the current record's offset. */
  recordOffset = 0;
  /** After next(): the current record's headers (one shared empty object when it has none). */
  recordHeaders: RecordHeaders = NO_HEADERS;
  private readonly baseOffset: number;
  private source: Buffer;
  private plain: Buffer | undefined;
  private start: number;
  private pos = 0;
  private index = 0;
  private valueStart = -1;
  private valueEnd = -1;
  private failed: Record<string | symbol, unknown> | undefined;
  private readonly cursor = { pos: 0 };

  /**
   * `source` holds the batch's records from `start` (uncompressed, `read` undefined) or is the
   * compressed records payload `read` decompresses; `count` is the batch header's record count.
   */
  constructor(
    readonly context: BatchContext,
    readonly count: number,
    source: Buffer,
    start: number,
    private readonly read: SyncBatchReader | undefined,
  ) {
    this.baseOffset = Number(context.firstOffset);
    this.lastOffset = this.baseOffset + Math.max(0, context.lastOffsetDelta);
    this.offset = String(this.lastOffset);
    this.isControlRecord = context.isControlBatch;
    this.source = source;
    this.start = start;
  }

  /**
   * Decompresses the batch (once). Returns undefined when its records can be read, else the one
   * stand-in record of an undecodable batch (record-wire.ts standIn: the compressed bytes as its
   * value at the batch's last offset, BATCH_NOT_DECODABLE naming the cause) — never throws.
   */
  open(): Record<string | symbol, unknown> | undefined {
    if (this.plain !== undefined || this.failed !== undefined) return this.failed;
    if (this.read === undefined) {
      this.plain = this.source;
    } else {
      try {
        this.plain = this.read(this.source);
        this.start = 0;
        this.source = EMPTY; // the fetch response need not stay pinned by this batch
      } catch (err) {
        return (this.failed = standIn(this.source, err, this.context));
      }
    }
    this.pos = this.start;
    this.index = 0;
    return undefined;
  }

  /** Reads the next record into recordOffset / value() / recordHeaders; false after the last. */
  next(): boolean {
    const b = this.plain;
    if (b === undefined || this.index >= this.count) return false;
    const r = this.cursor;
    r.pos = this.pos;
    const length = varInt(b, r);
    const end = r.pos + length;
    if (length < 0 || end > b.length) throw new RangeError('record batch: record past the end of the batch');
    r.pos++; // attributes
    while (b[r.pos++] >= 0x80); // timestamp delta (varlong): not used by the worker
    this.recordOffset = this.baseOffset + varInt(b, r);
    const keyLength = varInt(b, r);
    if (keyLength > 0) r.pos += keyLength;
    const valueLength = varInt(b, r);
    this.valueStart = valueLength < 0 ? -1 : r.pos;
    this.valueEnd = r.pos + Math.max(0, valueLength);
    r.pos = this.valueEnd;
    this.recordHeaders = b[r.pos] === 0 ? NO_HEADERS : readHeaders(b, r);
    this.pos = end;
    this.index++;
    return true;
  }

  /** The current record's value: a view of the batch's bytes (null for a null value). */
  value(): Buffer | null {
    return this.valueStart < 0 ? null : this.plain!.subarray(this.valueStart, this.valueEnd);
  }

  /** Drops this run's hold on the decompressed bytes (values taken keep their own views). */
  close(): void {
    this.plain = EMPTY;
    this.index = this.count;
  }

  /** kafkajs's record objects of the batch, exactly as the record decoder returns them. */
  expand(): unknown[] {
    const failed = this.open();
    if (failed !== undefined) return [failed];
    return decodeRecords(this.plain!, this.start, this.count, this.context);
  }
}
