/**
 * Delivers one encoded batch: INSERT with the batch token, retried with capped exponential
 * backoff on anything retriable (network, 5xx, timeouts, a server that is down); when ClickHouse
 * rejects the data, the culprit rows are isolated (isolate.ts) and the rest stored; then the
 * batch's dead letters (unparseable lines and rejected rows) go to the `<table>_dlq` table under the
 * batch's dead-letter token and/or to the dead-letter topic. It only returns once everything is
 * durable, or throws AbortError when the batch was abandoned (partition revoked, shutdown).
 */
import type { InsertGate } from '../delivery/flow-control';
import type { DeadLetter, InsertFormat, MessageInput } from '../encode/batch-io';
import type { ClickHouseSink, InsertTarget } from './clickhouse-sink';
import {
  encodeDeadLetterRows,
  deadLetterMessages,
  type DeadLetterRecord,
  type DeadLetterMessage,
} from './dead-letter';
import { isolateRejectedRows, SystemicRejectionError, type RangeOutcome } from './isolate';
import { errorClass, errorReason, UNKNOWN_ERROR_ATTEMPTS } from './retry';
import {
  AbortError,
  backoffMs,
  DEFAULT_BACKOFF,
  sleepOrAbort as sleep,
  type BackoffPolicy,
} from '../../../common/src/timing';
import { BodyPool } from '../delivery/body-pool';
import { rowBoundaries, rowSources } from './row-lines';
import { planRegroup, writeRegrouped } from './regroup';
import { deadLetterToken, keyGroupToken, rowRangeToken } from './token';
import { stageCpu } from '../../../common/src/stage-cpu';

/** One cut and encoded batch, immutable while it is delivered (retries send the same bytes). */
export interface BatchJob {
  topic: string;
  partition: number;
  firstOffset: number;
  lastOffset: number;
  ingestMs: number;
  token: string;
  /** Encoded rows (owned by the job), in `format`. */
  body: Buffer;
  rows: number;
  /** Body format; default TabSeparated. */
  format?: InsertFormat;
  /** RowBinary: where each row starts plus the end (rows + 1 entries); TSV rows are found at LFs. */
  rowStarts?: Uint32Array;
  messages: readonly MessageInput[];
  /** Lines the parser refused. */
  parseDeadLetters: readonly DeadLetter[];
  /** Blank lines skipped by the encoder (counted in a metric once the batch is stored). */
  blankLines?: number;
  /** Each row's partition key, when known: a batch spanning many partitions is regrouped by key. */
  partitionKeys?: Float64Array;
}

/** Where each row of the job's body starts, plus the end: the encoder's index, or LFs for TSV. */
export function rowStartsOf(job: BatchJob): Uint32Array {
  if (job.rowStarts) return job.rowStarts;
  if (job.format === 'RowBinary') throw new Error('RowBinary batch without a row index');
  return rowBoundaries(job.body);
}

/** What a delivered batch amounted to. */
export interface DeliveryResult {
  rowsInserted: number;
  deadLetters: DeadLetterRecord[];
  /** True when the server reported the batch as already stored (a deduplicated retry). */
  deduplicated: boolean;
  /** Row indices of the payload ClickHouse rejected (dead-lettered; not in the table, nor in the digest). */
  rejectedRows: number[];
  /** The exact rows inserted into the DLQ table (sealed into the dead-letter chain), if any. */
  deadLetterBody?: Buffer;
}

/** Sends dead-letter messages to the dead-letter topic (kafkajs producer adapter). */
export type DeadLetterProducer = (messages: DeadLetterMessage[]) => Promise<void>;

/** Hooks for metrics and logs; all optional. */
export interface DeliveryObserver {
  insertDone?(target: InsertTarget, seconds: number): void;
  insertFailed?(
    kind: 'retriable' | 'rejected' | 'systemic' | 'dead_letter_topic',
    err: unknown,
    job: BatchJob,
    attempt: number,
  ): void;
}

/** No gating (unit tests, callers without slots). */
const OPEN_GATE: InsertGate = {
  acquire: async () => () => undefined,
  failed: () => undefined,
  succeeded: () => undefined,
};

/** Delivers batches through one sink, dead-letter table and dead-letter topic. */
export class BatchDelivery {
  private readonly gates = new WeakMap<BatchJob, InsertGate>();
  /** Buffers for regrouped bodies (held for one storeRows call). */
  private readonly bodies = new BodyPool();

  /** `producer` is undefined when no dead-letter topic is configured. */
  constructor(
    private readonly sink: ClickHouseSink,
    private readonly producer: DeadLetterProducer | undefined,
    private readonly pipeline: string,
    private readonly observer: DeliveryObserver = {},
    private readonly backoff: BackoffPolicy = DEFAULT_BACKOFF,
  ) {}

  /**
   * Stores the batch and its dead letters; retries until done or `signal` aborts. Every INSERT
   * attempt holds `gate` (the partition's share of the insert slots) for its duration only.
   */
  async deliver(job: BatchJob, signal: AbortSignal, gate: InsertGate = OPEN_GATE): Promise<DeliveryResult> {
    this.gates.set(job, gate);
    try {
      return await this.deliverGated(job, signal);
    } finally {
      this.gates.delete(job);
    }
  }

  private async deliverGated(job: BatchJob, signal: AbortSignal): Promise<DeliveryResult> {
    const { rejected, deduplicated } = await this.storeRows(job, signal);
    const deadLetters = this.collectDeadLetters(job, rejected);
    // Fixed by the batch (ingest time from the cut): a retry inserts, and seals, the same bytes.
    const deadLetterBody =
      deadLetters.length > 0 && this.sink.hasDeadLetterTable()
        ? encodeDeadLetterRows(deadLetters, job.ingestMs)
        : undefined;
    if (deadLetters.length > 0) await this.storeDeadLetters(job, deadLetters, deadLetterBody, signal);
    return {
      rowsInserted: job.rows - rejected.length,
      deadLetters,
      deduplicated,
      rejectedRows: rejected.map((r) => r.row),
      deadLetterBody,
    };
  }

  /**
   * Inserts the rows: whole under the batch token (no copy) when they span at most 100 partition
   * keys, else regrouped by key (regroup.ts) into ceil(keys / 100) inserts, each under a token
   * named by its key range. Returns rejected rows as indices into job.body, in ascending order.
   */
  private async storeRows(
    job: BatchJob,
    signal: AbortSignal,
  ): Promise<{ rejected: Array<{ row: number; reason: string }>; deduplicated: boolean }> {
    if (job.rows === 0) return { rejected: [], deduplicated: false };
    const plan = job.partitionKeys ? planRegroup(job.partitionKeys, job.rows) : null;
    if (!plan) return this.storeRange(job, job.body, job.rows, job.token, signal, () => rowStartsOf(job));
    const out = this.bodies.alloc(job.body.length);
    try {
      const at = writeRegrouped(job.body, rowStartsOf(job), plan.order, out.bytes);
      const rejected: Array<{ row: number; reason: string }> = [];
      let deduplicated = true;
      for (let g = 0; g + 1 < plan.groups.length; g++) {
        const [from, to] = [plan.groups[g], plan.groups[g + 1]];
        const [lo, hi] = plan.keyRanges[g];
        const body = out.bytes.subarray(at[from], at[to]);
        // The group's own row starts, relative to its body (RowBinary has no delimiter to scan for).
        const starts = () => at.subarray(from, to + 1).map((v) => v - at[from]);
        const group = await this.storeRange(
          job,
          body,
          to - from,
          keyGroupToken(job.token, lo, hi),
          signal,
          starts,
        );
        deduplicated &&= group.deduplicated;
        // Back to the batch's own row numbers: dead letters and the digest are in (offset, line) order.
        for (const r of group.rejected) rejected.push({ row: plan.order[from + r.row], reason: r.reason });
      }
      rejected.sort((a, b) => a.row - b.row);
      return { rejected, deduplicated };
    } finally {
      out.release();
    }
  }

  /**
   * Inserts `body` (`rows` whole rows) under `token`; on a data rejection isolates the culprits
   * (halves under tokens derived from `token`, cut at `rowStarts()`), retrying systemic verdicts.
   * Rejected rows are indices into `body`.
   */
  private async storeRange(
    job: BatchJob,
    body: Buffer,
    rows: number,
    token: string,
    signal: AbortSignal,
    rowStarts: () => Uint32Array,
  ): Promise<{ rejected: Array<{ row: number; reason: string }>; deduplicated: boolean }> {
    let bounds: Uint32Array | undefined;
    for (let attempt = 0; ; attempt++) {
      const first = await this.insertRetrying('data', body, token, job, signal);
      if (first.ok) return { rejected: [], deduplicated: first.writtenRows === 0 };
      this.observer.insertFailed?.('rejected', first.reason, job, attempt);
      try {
        bounds ??= rowStarts();
        const b: Uint32Array = bounds;
        const rejected = await isolateRejectedRows(rows, first.reason, (a, z) =>
          this.insertRetrying('data', body.subarray(b[a], b[z]), rowRangeToken(token, a, z), job, signal),
        );
        return { rejected, deduplicated: false };
      } catch (err) {
        if (!(err instanceof SystemicRejectionError)) throw err;
        // Too many rejected rows to be bad data: a schema or config mismatch. Wait, never dead-letter it all.
        this.observer.insertFailed?.('systemic', err, job, attempt);
        await sleep(backoffMs(attempt + 4, this.backoff), signal);
      }
    }
  }

  /**
   * One INSERT under the retry doctrine (retry.ts): `unavailable` is retried without limit, `data`
   * and `split` return at once (the caller bisects), `unknown` after UNKNOWN_ERROR_ATTEMPTS tries.
   * Throws only AbortError.
   */
  private async insertRetrying(
    target: InsertTarget,
    body: Buffer,
    token: string,
    job: BatchJob,
    signal: AbortSignal,
  ): Promise<RangeOutcome & { writtenRows?: number }> {
    const gate = this.gates.get(job) ?? OPEN_GATE;
    for (let attempt = 0; ; attempt++) {
      if (signal.aborted) throw new AbortError();
      const release = await gate.acquire();
      const started = process.hrtime.bigint();
      try {
        if (signal.aborted) throw new AbortError();
        // Dead letters are always TSV (their own small body); data rows go in the job's format.
        const format = target === 'data' ? job.format : 'TabSeparated';
        // The call's synchronous part (request set-up, first socket write); the rest is async I/O.
        const cpu = process.cpuUsage();
        const pending = this.sink.insert(target, body, token, signal, format);
        stageCpu.add('insertCall', cpu);
        const report = await pending;
        this.observer.insertDone?.(target, Number(process.hrtime.bigint() - started) / 1e9);
        gate.succeeded();
        return { ok: true, writtenRows: report.writtenRows };
      } catch (err) {
        if (signal.aborted || err instanceof AbortError) throw new AbortError();
        const cls = errorClass(err);
        if (cls === 'unavailable') gate.failed();
        else gate.succeeded();
        if (cls === 'data' || cls === 'split' || (cls === 'unknown' && attempt + 1 >= UNKNOWN_ERROR_ATTEMPTS))
          return { ok: false, reason: errorReason(err) };
        this.observer.insertFailed?.('retriable', err, job, attempt);
      } finally {
        release();
      }
      // The backoff is spent without a slot: other partitions' batches use it meanwhile.
      await sleep(backoffMs(attempt, this.backoff), signal);
    }
  }

  /** Parser dead letters plus rejected rows, in line order. */
  private collectDeadLetters(
    job: BatchJob,
    rejected: ReadonlyArray<{ row: number; reason: string }>,
  ): DeadLetterRecord[] {
    const records: Array<DeadLetterRecord & { messageIndex: number }> = job.parseDeadLetters.map((d) => ({
      reason: d.reason,
      line: d.line,
      topic: job.topic,
      partition: job.partition,
      offset: Number(d.offset),
      lineIndex: d.lineIndex,
      messageIndex: d.messageIndex,
    }));
    if (rejected.length > 0) {
      const sources = rowSources(job.messages, job.parseDeadLetters, job.rows);
      const bounds = sources ? undefined : rowStartsOf(job);
      // A TSV row ends in LF (not part of the evidence); a RowBinary row has no terminator.
      const tail = job.format === 'RowBinary' ? 0 : 1;
      for (const r of rejected) {
        const src = sources?.[r.row];
        const msg = src ? job.messages[src.messageIndex] : undefined;
        records.push({
          reason: `clickhouse: ${r.reason}`,
          // Without a row->line map, the encoded row itself is the best evidence available.
          line: src ? src.line : job.body.subarray(bounds![r.row], bounds![r.row + 1] - tail),
          topic: job.topic,
          partition: job.partition,
          offset: msg ? Number(msg.offset) : job.firstOffset,
          lineIndex: src ? src.lineIndex : r.row,
          messageIndex: src ? src.messageIndex : -1,
        });
      }
      records.sort((a, b) => a.messageIndex - b.messageIndex || a.lineIndex - b.lineIndex);
    }
    return records.map(({ messageIndex: _m, ...rest }) => rest);
  }

  private async storeDeadLetters(
    job: BatchJob,
    records: DeadLetterRecord[],
    body: Buffer | undefined,
    signal: AbortSignal,
  ): Promise<void> {
    if (body) {
      for (let attempt = 0; ; attempt++) {
        const outcome = await this.insertRetrying(
          'deadLetter',
          body,
          deadLetterToken(job.token),
          job,
          signal,
        );
        if (outcome.ok) break;
        // The DLQ table takes any bytes; a rejection there is a schema problem: wait for a fix.
        this.observer.insertFailed?.('systemic', outcome.reason, job, attempt);
        await sleep(backoffMs(attempt + 4, this.backoff), signal);
      }
    }
    if (this.producer) {
      const messages = deadLetterMessages(records, this.pipeline);
      for (let attempt = 0; ; attempt++) {
        if (signal.aborted) throw new AbortError();
        try {
          await this.producer(messages);
          break;
        } catch (err) {
          this.observer.insertFailed?.('dead_letter_topic', err, job, attempt);
          await sleep(backoffMs(attempt, this.backoff), signal);
        }
      }
    }
  }
}
