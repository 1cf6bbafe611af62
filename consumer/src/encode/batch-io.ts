/**
 * What goes into and comes out of the batch encoder (batch.ts): the message fields it reads,
 * the sender header, and the encoded batch with its dead letters. Kept apart so the sink and
 * delivery layers read the contract without the encoder's hot path.
 */
import { SENDER_HEADER } from '../../../common/src/ingest-config';

/** Body formats the encoder writes (the INSERT's FORMAT). */
export type InsertFormat = 'TabSeparated' | 'RowBinary';

/** The parts of a Kafka message the encoder reads (kafkajs messages fit after adding topic/partition). */
export interface MessageInput {
  value: Buffer | null;
  topic: string;
  partition: number;
  /** Kafka offset (kafkajs gives strings). */
  offset: string | number;
  /** The message's SENDER_HEADER (the syslog receiver's sending device), when it has one. */
  sender?: Buffer;
  /**
   * Set when the value's content-encoding could not be decoded (worker-values.ts): the dead-letter
   * reason. The message is then dead-lettered whole (`value` = the bytes as sent), never parsed.
   */
  undecodable?: string;
}

/** Kafka message headers as kafkajs hands them (values are Buffers when read from a broker). */
type Headers = Record<string, Buffer | string | (Buffer | string)[] | undefined> | undefined;

/** The SENDER_HEADER value of a consumed message as bytes, or undefined when it has none. */
export function senderHeader(headers: Headers): Buffer | undefined {
  let v = headers?.[SENDER_HEADER];
  if (Array.isArray(v)) v = v[0];
  if (v === undefined) return undefined;
  return typeof v === 'string' ? Buffer.from(v, 'latin1') : v;
}

/** A line that did not become a row, with where it came from and why. */
export interface DeadLetter {
  reason: string;
  /** The line's bytes: a view into the message value (copy it if the value is released). */
  line: Buffer;
  messageIndex: number;
  lineIndex: number;
  topic: string;
  partition: number;
  offset: string;
}

/** Result of encoding one batch. */
export interface EncodedBatch {
  /** TSV rows; a view into the encoder's reused buffer, valid until the next encode call. */
  data: Buffer;
  rows: number;
  lines: number;
  deadLetters: DeadLetter[];
  /** RowBinary: byte offset of each row plus the end (rows + 1 entries); TSV bodies are cut at LFs instead. */
  rowStarts?: Uint32Array;
  /** Blank lines (empty or only spaces/tabs, and empty messages): counted, never stored nor dead-lettered. */
  blankLines: number;
  /** Partition key of each row (rows entries, owned by the result) when the encoder knows the table's key. */
  partitionKeys?: Float64Array;
}
