/**
 * Dead letters: lines the parser could not turn into rows and rows ClickHouse refused, kept with
 * the reason, the original bytes and where they came from. They go to the `<table>_dlq` table
 * (TabSeparated, written with the batch's deterministic token so a retried batch stores them once)
 * and/or to a Kafka topic (key `<partition>:<offset>`, reason and source in headers, value = the
 * original line). Encoding here is pure; the writers live in the batch delivery.
 */
import { columnNames, DLQ_COLUMNS } from '../../../common/src/tables';
import { TsvOutput } from '../encode/tsv-output';

/** One dead-lettered line. */
export interface DeadLetterRecord {
  reason: string;
  line: Buffer;
  topic: string;
  partition: number;
  offset: number;
  /** Index of the line inside its Kafka message (0 for single-line messages). */
  lineIndex: number;
}

/** Column list of the `<table>_dlq` contract (common/src/tables.ts), in insert order. */
export const DLQ_TABLE_COLUMNS: readonly string[] = columnNames(DLQ_COLUMNS);

/**
 * Encodes dead letters as TabSeparated rows for the DLQ table; `ts` is the batch's ingest time
 * (fixed at cut, so the bytes are identical on every retry).
 */
export function encodeDeadLetterRows(
  records: readonly DeadLetterRecord[],
  ingestMs: number,
  out = new TsvOutput(64 * 1024),
): Buffer {
  out.pos = 0;
  for (const r of records) {
    out.epochSeconds(ingestMs, 3);
    out.ensure(1);
    out.byte(9);
    // ClickHouse messages quote the data, so reasons may hold any UTF-8.
    const reason = Buffer.from(r.reason, 'utf8');
    out.escaped(reason, 0, reason.length);
    out.ensure(1);
    out.byte(9);
    out.escaped(r.line, 0, r.line.length);
    out.ensure(1);
    out.byte(9);
    const topic = Buffer.from(r.topic, 'utf8');
    out.escaped(topic, 0, topic.length);
    out.ensure(1);
    out.byte(9);
    out.uint(r.partition);
    out.ensure(1);
    out.byte(9);
    out.uint(r.offset);
    out.ensure(1);
    out.byte(10);
  }
  return Buffer.from(out.buf.subarray(0, out.pos));
}

/** A Kafka message for the dead-letter topic (kafkajs `Message` shape). */
export interface DeadLetterMessage {
  key: string;
  value: Buffer;
  headers: Record<string, string>;
}

/** Builds the dead-letter topic messages of a batch, in line order. */
export function deadLetterMessages(
  records: readonly DeadLetterRecord[],
  pipeline: string,
): DeadLetterMessage[] {
  return records.map((r) => ({
    key: `${r.partition}:${r.offset}`,
    value: r.line,
    headers: {
      reason: r.reason,
      source_topic: r.topic,
      source_partition: String(r.partition),
      source_offset: String(r.offset),
      line_index: String(r.lineIndex),
      pipeline,
    },
  }));
}

/** Bytes a record costs beyond its key and value (record framing and header names). */
const RECORD_OVERHEAD_BYTES = 64;

function recordBytes(m: DeadLetterMessage): number {
  let n = RECORD_OVERHEAD_BYTES + m.key.length + m.value.length;
  for (const [k, v] of Object.entries(m.headers)) n += k.length + v.length + 8;
  return n;
}

/**
 * Splits dead-letter messages into sends of at most `maxBytes` (uncompressed, so the compressed
 * record batch the broker checks against the topic's max.message.bytes is smaller still). A record
 * alone over the limit is truncated to fit, with header `truncated_from_bytes` (the full line is in
 * the dead-letter table). Pure.
 */
export function chunkDeadLetterMessages(
  messages: readonly DeadLetterMessage[],
  maxBytes: number,
): DeadLetterMessage[][] {
  const chunks: DeadLetterMessage[][] = [];
  let chunk: DeadLetterMessage[] = [];
  let bytes = 0;
  for (let m of messages) {
    let size = recordBytes(m);
    if (size > maxBytes) {
      const headers = { ...m.headers, truncated_from_bytes: String(m.value.length) };
      const room = Math.max(0, m.value.length - (size - maxBytes) - 48);
      m = { key: m.key, value: m.value.subarray(0, room), headers };
      size = recordBytes(m);
    }
    if (chunk.length > 0 && bytes + size > maxBytes) {
      chunks.push(chunk);
      chunk = [];
      bytes = 0;
    }
    chunk.push(m);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/**
 * Metrics label for a reason: parser codes as they are, ClickHouse messages as
 * `clickhouse_rejected`, codec errors of undecodable values as `value_not_decodable` (of whole
 * record batches as `record_batch_not_decodable`).
 */
export function reasonLabel(reason: string): string {
  if (reason.startsWith('clickhouse:')) return 'clickhouse_rejected';
  if (reason.startsWith('record batch not decodable:')) return 'record_batch_not_decodable';
  return reason.startsWith('value not decodable:') ? 'value_not_decodable' : reason;
}
