/**
 * Message values as the worker takes them (issue 16): the syslog receiver's packed values arrive
 * compressed (content-encoding header, common/src/kafka/value-codec.ts) and are decoded here, before
 * anything counts or splits them, never past the configured bound. A value that does not decode
 * (corrupt, over the bound, an unknown codec) is hostile or broken input: the message goes to the
 * dead-letter path whole, with its bytes as sent and the reason `value not decodable: <codec error>`,
 * and is counted by kind. It is never parsed (its compressed bytes would be dead-lettered line by
 * line with a misleading parser reason) and never logged per message: a flood of forged headers
 * yields at most one summary line per minute.
 *
 * A whole record batch that did not decompress (corrupt, or inflating past the batch bound:
 * common/src/kafka/batch-bound.ts) arrives as one stand-in message at the batch's last offset
 * (record-decoder.ts): it is dead-lettered the same way, its compressed bytes as the value, with the
 * reason `record batch not decodable: <codec error> (offsets <first>-<last>)`, and committed past.
 */
import type { KafkaMessage } from 'kafkajs';
import type { Logger } from '../../common/src/log';
import { decodeValue, ValueDecodeError, type ValueDecodeFailure } from '../../common/src/kafka/value-codec';
import { DEFAULT_MAX_VALUE_BYTES } from '../../common/src/worker-config';
import { BATCH_NOT_DECODABLE, type BatchNotDecodable } from '../../common/src/kafka/record-decoder';
import type { WorkerMetrics } from './observability/metrics';

/** Prefix of the dead-letter reason of a message whose value did not decode. */
export const VALUE_NOT_DECODABLE = 'value not decodable: ';

/** Prefix of the dead-letter reason of a record batch that did not decompress. */
export const BATCH_NOT_DECODABLE_REASON = 'record batch not decodable: ';

/** Shortest time between two summary log lines about undecodable values. */
export const DECODE_SUMMARY_EVERY_MS = 60_000;

/** Decodes message values within a bound; remembers why the last one failed, if it did. */
export class ValueIntake {
  /** The dead-letter reason of the last `plain()` call, or undefined when its value is usable. */
  failure: string | undefined = undefined;
  private readonly valueSummary: FailureSummary;
  private readonly batchSummary: FailureSummary;

  private readonly maxBytes: number;

  /** `maxBytes`: the largest decoded value accepted (WorkerConfig kafka.maxValueBytes; default 16 MiB). */
  constructor(
    maxBytes: number | undefined,
    private readonly metrics: Pick<WorkerMetrics, 'valueDecodeFailures' | 'batchDecodeFailures'>,
    log: Logger,
    now: () => number = Date.now,
  ) {
    this.maxBytes = maxBytes ?? DEFAULT_MAX_VALUE_BYTES;
    this.valueSummary = new FailureSummary('message values not decodable: dead-lettered whole', log, now);
    this.batchSummary = new FailureSummary('record batches not decodable: dead-lettered whole', log, now);
  }

  /**
   * The message's lines: the decoded value, or the value as sent when it cannot be decoded (then
   * `failure` holds the dead-letter reason until the next call).
   */
  plain(m: Pick<KafkaMessage, 'value' | 'headers' | 'offset'>, partition: number): Buffer {
    const batch = (m as { [BATCH_NOT_DECODABLE]?: BatchNotDecodable })[BATCH_NOT_DECODABLE];
    return this.take(m.value, m.headers, batch, m.offset, partition);
  }

  /** plain() on a record's parts (the worker's FetchCursor fields): no message object needed. */
  take(
    value: Buffer | null,
    headers: KafkaMessage['headers'],
    batch: BatchNotDecodable | undefined,
    offset: string | number,
    partition: number,
  ): Buffer {
    const raw = value ?? EMPTY;
    this.failure = undefined;
    if (batch !== undefined) {
      const reason = `${BATCH_NOT_DECODABLE_REASON}${batch.message} (offsets ${batch.firstOffset}-${batch.lastOffset})`;
      this.failure = reason;
      this.metrics.batchDecodeFailures.inc({ reason: batch.kind });
      this.batchSummary.note(partition, String(offset), reason);
      return raw;
    }
    if (headers === undefined) return raw;
    try {
      return decodeValue(raw, headers, this.maxBytes);
    } catch (err) {
      const kind: ValueDecodeFailure = err instanceof ValueDecodeError ? err.kind : 'corrupt';
      const reason = VALUE_NOT_DECODABLE + (err instanceof Error ? err.message : String(err));
      this.failure = reason;
      this.metrics.valueDecodeFailures.inc({ reason: kind });
      this.valueSummary.note(partition, String(offset), reason);
      return raw;
    }
  }
}

/** Counts failures of one kind; logs a summary at once for the first and then at most once per minute. */
class FailureSummary {
  private unreported = 0;
  private lastSummaryMs = -Infinity;
  private lastFailure = { partition: 0, offset: '', reason: '' };

  constructor(
    private readonly text: string,
    private readonly log: Logger,
    private readonly now: () => number,
  ) {}

  note(partition: number, offset: string, reason: string): void {
    this.unreported++;
    this.lastFailure = { partition, offset, reason };
    const now = this.now();
    if (now - this.lastSummaryMs < DECODE_SUMMARY_EVERY_MS) return;
    this.log.warn(this.text, { messages: this.unreported, last: this.lastFailure });
    this.unreported = 0;
    this.lastSummaryMs = now;
  }
}

const EMPTY = Buffer.alloc(0);
