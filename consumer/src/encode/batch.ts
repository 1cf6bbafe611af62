/**
 * The worker's hot path: Kafka message values -> lines -> parsed records -> one TabSeparated
 * payload for one INSERT. Deterministic: the bytes depend only on the messages, the ingest time
 * passed in (also the reference for year inference) and the configuration, so re-encoding a
 * journaled batch after a crash yields a byte-identical INSERT. Nothing here throws on data.
 */
import { isUtf8 } from 'node:buffer';
import {
  LINE_NO_SPECIALS,
  LINE_SAME_MESSAGE,
  LINE_UTF8_VALID,
  LineParser,
  ParserOptions,
} from '../parse/parser';
import { compilePartitionKey, type PartitionKeyInput, type RowKeyFn } from './partition-key';
import { EMPTY_LINE, ENCODE_ERROR, EXPIRED_TIMESTAMP, TOO_MANY_LINES } from '../parse/reasons';
import { createTimeZone } from '../parse/timezone';
import { ColumnInput, ColumnPlan, compileColumnPlan, PlannedColumn } from './column-plan';
import type { IdentityStats } from './identity-stats';
import { needsEscape } from './tsv-output';
import { TsvRowWriter } from './tsv-writer';
import { RowBinaryRowWriter } from './rowbinary-writer';
import { EscapeScanner } from './escape-scanner';
import type { EncodedBatch, InsertFormat, MessageInput } from './batch-io';

export { senderHeader } from './batch-io';
export type { DeadLetter, EncodedBatch, InsertFormat, MessageInput } from './batch-io';

/** Parser settings plus the column plan inputs (the worker config's parser and columns sections). */
export interface BatchEncoderOptions {
  parser: Omit<ParserOptions, 'collectFields'>;
  columns: readonly ColumnInput[];
  staticFields?: Readonly<Record<string, string>>;
  /**
   * Rows whose clock is older than ingest time minus this (the table's delete TTL) are
   * dead-lettered as `expired_timestamp`: ClickHouse applies the TTL at insert and would drop them
   * without a word. 0 or absent: no check.
   */
  retainMs?: number;
  /** Initial output buffer size; it grows as needed and is reused. Default 4 MiB. */
  initialBufferBytes?: number;
  /** Identity coverage counters fed with every parsed record (worker metrics, ParserCoverage). */
  identity?: IdentityStats;
  /** Most non-blank lines taken from one message; the rest is dead-lettered as one `too_many_lines` record. */
  maxLinesPerMessage?: number;
  /** The table's partition key: each row's key is computed so batches can be split by it. */
  partitionKey?: PartitionKeyInput;
  /** Body format; default TabSeparated. */
  format?: InsertFormat;
}

const MISSING_PREFIX = 'missing_field:';

/** Parses and encodes batches of Kafka messages for one pipeline configuration. */
export class BatchEncoder {
  /** The compiled columns; `plan.names` is the INSERT column list. */
  readonly plan: ColumnPlan;
  private readonly parser: LineParser;
  private readonly writer: TsvRowWriter | RowBinaryRowWriter;
  readonly format: InsertFormat;
  private readonly scanner: EscapeScanner;
  private readonly topics = new Map<string, Buffer>();
  private readonly retainMs: number;
  private oldestKeptMs = -Infinity;
  private readonly identity: IdentityStats | undefined;
  private readonly rowKey: RowKeyFn | null;
  private readonly maxLinesPerMessage: number;
  private keys = new Float64Array(0);
  private ingestMs = 0;
  /** The topic of the previous message: its bytes and escape check are kept while it repeats. */
  private lastTopic = '';

  /** Compiles parser and columns; throws on invalid configuration. */
  constructor(options: BatchEncoderOptions) {
    const tz = createTimeZone(options.parser.timezone);
    const empty = { columns: [], names: [], needsFields: false };
    this.format = options.format ?? 'TabSeparated';
    const binary = this.format === 'RowBinary';
    this.scanner = new EscapeScanner(binary);
    const scratch = new TsvRowWriter(empty, tz, 256);
    const binScratch = new RowBinaryRowWriter(empty, tz, 256);
    this.plan = compileColumnPlan(options.columns, options.staticFields ?? {}, (col, value) =>
      encodeStatic(binary ? binScratch : scratch, col, value),
    );
    this.parser = new LineParser({ ...options.parser, collectFields: this.plan.needsFields });
    const bytes = options.initialBufferBytes ?? 4 << 20;
    this.writer = binary
      ? new RowBinaryRowWriter(this.plan, tz, bytes)
      : new TsvRowWriter(this.plan, tz, bytes);
    this.retainMs = options.retainMs ?? 0;
    this.identity = options.identity;
    this.rowKey = compilePartitionKey(options.partitionKey, options.columns);
    this.maxLinesPerMessage = Math.max(1, options.maxLinesPerMessage ?? Number.MAX_SAFE_INTEGER);
  }

  /**
   * Encodes the lines of messages[from, to) with ingest time `ingestTimeMs` (epoch ms, fixed per
   * batch). The same messages and ingest time always give the same bytes.
   */
  encode(
    messages: readonly MessageInput[],
    ingestTimeMs: number,
    from = 0,
    to = messages.length,
  ): EncodedBatch {
    const writer = this.writer;
    if (writer instanceof RowBinaryRowWriter) writer.out.reset();
    else writer.out.pos = 0;
    writer.row.ingestTimeMs = ingestTimeMs;
    this.parser.setReferenceTime(ingestTimeMs);
    this.oldestKeptMs = this.retainMs > 0 ? ingestTimeMs - this.retainMs : -Infinity;
    const result: EncodedBatch = { data: writer.out.buf, rows: 0, lines: 0, deadLetters: [], blankLines: 0 };
    this.ingestMs = ingestTimeMs;
    for (let m = from; m < to; m++) this.encodeMessage(messages[m], m, result);
    result.data = writer.out.buf.subarray(0, writer.out.pos);
    if (writer instanceof RowBinaryRowWriter) result.rowStarts = writer.out.rowIndex();
    if (this.rowKey) result.partitionKeys = this.keys.slice(0, result.rows);
    return result;
  }

  /** Bytes of the reused output buffer (the largest body encode() can return without growing). */
  get outputCapacity(): number {
    return this.writer.out.buf.length;
  }

  /**
   * Hands the output buffer holding the last encode() result to the caller and continues with
   * `next` (any size; it grows as needed): a large body changes owner instead of being copied.
   */
  swapOutput(next: Buffer): Buffer {
    const whole = this.writer.out.buf;
    this.writer.out.buf = next;
    return whole;
  }

  private encodeMessage(msg: MessageInput, index: number, result: EncodedBatch): void {
    const value = msg.value ?? EMPTY;
    const writer = this.writer;
    this.stampSource(msg);
    const len = value.length;
    if (msg.undecodable !== undefined) {
      result.lines++;
      this.deadLetter(result, msg.undecodable, msg, value, 0, len, index, 0);
      return;
    }
    if (len === 0) {
      result.lines++;
      result.blankLines++;
      return;
    }
    const utf8 = isUtf8(value);
    this.scanner.reset(value);
    let pos = 0;
    let lineIndex = 0;
    // Blank lines cost nothing downstream, so only the others count against the cap.
    let taken = 0;
    while (pos < len) {
      if (taken >= this.maxLinesPerMessage) {
        result.lines++;
        this.deadLetter(result, TOO_MANY_LINES, msg, value, pos, len, index, lineIndex);
        return;
      }
      const nl = value.indexOf(10, pos);
      const end = nl < 0 ? len : nl;
      const lineEnd = end > pos && value[end - 1] === 13 ? end - 1 : end;
      const mark = writer.out.pos;
      try {
        if (this.encodeLine(msg, value, pos, lineEnd, utf8, index, lineIndex, result)) taken++;
      } catch {
        taken++;
        // Per-line isolation: whatever one line throws, only that line is dead-lettered.
        writer.out.pos = mark;
        if (writer instanceof RowBinaryRowWriter) writer.out.dropRowsFrom(mark);
        this.deadLetter(result, ENCODE_ERROR, msg, value, pos, lineEnd, index, lineIndex);
      }
      lineIndex++;
      pos = end + 1;
    }
  }

  /** Sets the row's Kafka source columns (topic, partition, offset, sender) from the message. */
  private stampSource(msg: MessageInput): void {
    const row = this.writer.row;
    if (msg.topic !== this.lastTopic || row.topic.length === 0) {
      // Once per topic change (a batch is one partition), not once per message.
      this.lastTopic = msg.topic;
      row.topic = this.topicBytes(msg.topic);
      row.topicClean = !needsEscape(row.topic, 0, row.topic.length);
    }
    row.partition = msg.partition;
    row.offset = typeof msg.offset === 'number' ? msg.offset : Number(msg.offset);
    row.sender = msg.sender ?? EMPTY;
  }

  /** Parses and writes (or dead-letters) one line; false when it is blank (counted only). */
  private encodeLine(
    msg: MessageInput,
    value: Buffer,
    s: number,
    e: number,
    utf8: boolean,
    messageIndex: number,
    lineIndex: number,
    result: EncodedBatch,
  ): boolean {
    result.lines++;
    const flags =
      (utf8 ? LINE_UTF8_VALID : 0) |
      (this.scanner.isClean(s, e) ? LINE_NO_SPECIALS : 0) |
      (lineIndex > 0 ? LINE_SAME_MESSAGE : 0);
    let reason = this.parser.parse(value, s, e, flags);
    // Coverage counts every parsed record, including those refused for a missing required field.
    if (this.identity !== undefined && (reason === null || reason.startsWith(MISSING_PREFIX)))
      this.identity.count(this.parser.record);
    if (reason === null && this.parser.record.timestamp < this.oldestKeptMs) reason = EXPIRED_TIMESTAMP;
    this.writer.row.line = lineIndex;
    if (reason === null) reason = this.writer.writeRow(this.parser.record);
    if (reason === EMPTY_LINE) {
      result.blankLines++;
      return false;
    }
    if (reason === null) {
      if (this.rowKey) this.recordKey(result.rows, this.rowKey(this.parser.record.timestamp, this.ingestMs));
      result.rows++;
    } else this.deadLetter(result, reason, msg, value, s, e, messageIndex, lineIndex);
    return true;
  }

  private recordKey(row: number, key: number): void {
    if (row >= this.keys.length) {
      const grown = new Float64Array(Math.max(1024, this.keys.length * 2));
      grown.set(this.keys);
      this.keys = grown;
    }
    this.keys[row] = key;
  }

  private deadLetter(
    result: EncodedBatch,
    reason: string,
    msg: MessageInput,
    value: Buffer,
    s: number,
    e: number,
    messageIndex: number,
    lineIndex: number,
  ): void {
    result.deadLetters.push({
      reason,
      line: value.subarray(s, e),
      messageIndex,
      lineIndex,
      topic: msg.topic,
      partition: msg.partition,
      offset: String(msg.offset),
    });
  }

  private topicBytes(topic: string): Buffer {
    let b = this.topics.get(topic);
    if (b === undefined) {
      b = Buffer.from(topic, 'utf8');
      this.topics.set(topic, b);
    }
    return b;
  }
}

const EMPTY = Buffer.alloc(0);

/** Validates and encodes a static value for its column (config time); throws when it does not fit. */
function encodeStatic(writer: TsvRowWriter | RowBinaryRowWriter, col: PlannedColumn, value: string): Buffer {
  const b = writer.encodeStatic(col, value);
  if (b === null)
    throw new RangeError(
      `column ${col.name}: static value ${JSON.stringify(value)} is not a valid ${col.type.text}`,
    );
  return b;
}
