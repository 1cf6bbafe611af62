/**
 * Walks the messages of one fetched partition batch (kafkajs's `batch.messages`) record by record,
 * whether they are kafkajs's message objects or RecordRuns (record-run.ts): the current record's
 * offset as a number, its value, headers and, for the stand-in of an undecodable batch, why. The
 * fields are reused; nothing is allocated per record beyond the value's view.
 */
import type { IHeaders } from 'kafkajs';
import { RecordRun, type RecordHeaders } from './record-run';
import { BATCH_NOT_DECODABLE, NO_HEADERS, type BatchNotDecodable } from './record-wire';

/** The fields of a kafkajs message object the cursor reads. */
interface MessageObject {
  offset: string;
  value: Buffer | null;
  headers?: RecordHeaders;
  [BATCH_NOT_DECODABLE]?: BatchNotDecodable;
}

/** A cursor over a fetched batch's records (next() then read the fields). */
export class FetchCursor {
  /** The current record's offset. */
  offset = 0;
  /** The current record's value (null for a null value). */
  value: Buffer | null = null;
  /** The current record's headers (kafkajs's type; a value may be null on the wire). */
  headers: IHeaders = NO_HEADERS;
  /** Set on the stand-in record of a batch that did not decompress (dead-lettered whole). */
  notDecodable: BatchNotDecodable | undefined = undefined;
  /**
   * The last offset of the last RecordRun read to its end: every record up to it was returned by
   * next() or does not exist (compacted away), so the consumer may resolve through it.
   */
  exhaustedThrough = -1;
  private index = -1;
  private run: RecordRun | undefined = undefined;

  /**
   * `messages`: the batch's messages; `fromOffset`: the fetched offset — records of a run below it
   * are skipped, as kafkajs's Batch drops such message objects.
   */
  constructor(
    private readonly messages: readonly unknown[],
    private readonly fromOffset: number,
  ) {}

  /** Moves to the next record; false after the last. */
  next(): boolean {
    for (;;) {
      const run = this.run;
      if (run !== undefined) {
        if (run.next()) {
          if (run.recordOffset < this.fromOffset) continue;
          this.offset = run.recordOffset;
          this.value = run.value();
          this.headers = run.recordHeaders as IHeaders;
          return true;
        }
        run.close();
        this.exhaustedThrough = run.lastOffset;
        this.run = undefined;
      }
      if (++this.index >= this.messages.length) return false;
      const m = this.messages[this.index];
      if (m instanceof RecordRun) {
        const failed = m.open();
        if (failed === undefined) {
          this.run = m;
          this.notDecodable = undefined;
          continue;
        }
        this.take(failed as unknown as MessageObject);
      } else {
        this.take(m as MessageObject);
      }
      return true;
    }
  }

  private take(m: MessageObject): void {
    this.offset = Number(m.offset);
    this.value = m.value;
    this.headers = (m.headers ?? NO_HEADERS) as IHeaders;
    this.notDecodable = m[BATCH_NOT_DECODABLE];
  }
}
