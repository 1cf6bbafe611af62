/**
 * The worker's tamper-evidence step: after a batch's rows are stored, its link is sealed and
 * inserted, in offset order per partition, before the batch is acknowledged (so offsets are never
 * committed past a batch without its link). Batches of one partition may be delivered
 * concurrently; a ticket taken at cut time (in offset order) makes their links chain in that order.
 */
import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import type { WorkerConfig } from '../../../common/src/worker-config';
import type { PartitionState } from '../delivery/partition-state';
import { IntegrityRecorder, type SealedBatch } from './';
import type { BatchJob } from '../sink/batch-delivery';
import { AbortError, backoffMs, sleepOrAbort as sleep } from '../../../common/src/timing';
import { errorClass, errorReason, UNKNOWN_ERROR_ATTEMPTS } from '../sink/retry';
import { deadLetterToken } from '../sink/token';
import { stageCpu } from '../../../common/src/stage-cpu';

/** A batch's place in its partition's chain; `release` lets the next batch seal (idempotent). */
export interface IntegrityTicket {
  prev: Promise<void>;
  release(): void;
}

/**
 * Attempts of a link insert ClickHouse refuses for its content (a `data` error: the same bytes are
 * refused every time). After them the batch is left unlinked — verify names its range — instead of
 * stalling the partition forever (the retry doctrine: only an unavailable sink waits without limit).
 * The range and ClickHouse's error are signed into the chain's next checkpoint, where the operator
 * reads them into the pipeline's ChainLinked condition and a Warning Event (docs/compliance.md).
 */
export const LINK_DATA_ERROR_ATTEMPTS = 3;

/** Observer for failures that are retried or skipped (metrics, logs). */
export type IntegrityWarn = (message: string, fields: Record<string, unknown>) => void;

/** Orders, seals and stores the links of one worker's batches. */
export class IntegrityStage {
  private readonly tails = new WeakMap<PartitionState, Promise<void>>();
  private readonly restored = new WeakSet<PartitionState>();
  /** The revocation work in progress (final checkpoint, then forgetting the revoked chains). */
  private revoking: Promise<void> = Promise.resolve();

  constructor(
    private readonly recorder: IntegrityRecorder,
    private readonly warn: IntegrityWarn,
  ) {}

  /** Reserves the next place in `state`'s chain; call at cut time, in offset order. */
  reserve(state: PartitionState): IntegrityTicket {
    const prev = this.tails.get(state) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    this.tails.set(state, mine);
    return { prev, release };
  }

  /**
   * Seals the stored batch (without the rows ClickHouse rejected) and inserts its link, retrying
   * until stored or the partition is revoked (AbortError). Always releases the ticket.
   */
  async record(
    state: PartitionState,
    ticket: IntegrityTicket,
    job: BatchJob,
    rejectedRows: readonly number[],
    deadLetterBody?: Buffer,
  ): Promise<void> {
    const signal = state.abort.signal;
    try {
      await ticket.prev;
      if (!state.alive) throw new AbortError();
      // A revocation still running (its final checkpoint may wait on a slow TSA) must finish
      // before this partition's chain head is restored, or it would forget the restored head.
      await this.revoking;
      const sealed = await this.sealRestored(state, job, rejectedRows, signal);
      if (typeof sealed === 'string') {
        // Not retriable (a payload the digest cannot read): verify will report the range as unlinked.
        this.warn('batch left without an integrity link', {
          partition: job.partition,
          first: job.firstOffset,
          err: sealed,
        });
        this.unlinked('data', job, `the batch could not be digested: ${sealed}`);
        return;
      }
      const refused = await this.retry('inserting the integrity link', job, signal, () =>
        this.recorder.commit(sealed),
      );
      if (refused !== undefined) return this.unlinked('data', job, refused);
      if (deadLetterBody && this.recorder.chainsDeadLetters) {
        // Dead letters are received lines too: their own chain per source partition, same order.
        const dl = this.recorder.sealDeadLetters({
          partition: job.partition,
          firstOffset: job.firstOffset,
          lastOffset: job.lastOffset,
          insertedAtMs: job.ingestMs,
          batchToken: deadLetterToken(job.token),
          tsv: deadLetterBody,
        });
        if (typeof dl === 'string') {
          if (!state.alive) throw new AbortError();
          this.warn('dead letters left without an integrity link', { partition: job.partition, err: dl });
          this.unlinked('deadLetters', job, `the dead letters could not be digested: ${dl}`);
          return;
        }
        const dlRefused = await this.retry('inserting the dead-letter link', job, signal, () =>
          this.recorder.commitDeadLetters(dl),
        );
        if (dlRefused !== undefined) this.unlinked('deadLetters', job, dlRefused);
      }
    } finally {
      ticket.release();
    }
  }

  /**
   * Seals the batch on a restored chain head: the head is restored when this state has not done
   * so yet, and again whenever the recorder does not hold it (never sealed unlinked). Returns an
   * error string only for a payload the digest cannot read.
   */
  private async sealRestored(
    state: PartitionState,
    job: BatchJob,
    rejectedRows: readonly number[],
    signal: AbortSignal,
  ): Promise<SealedBatch | string> {
    for (;;) {
      if (!this.restored.has(state) || !this.recorder.owns(job.partition)) {
        await this.retry('restoring the chain head', job, signal, () =>
          this.recorder.assign([job.partition]),
        );
        this.restored.add(state);
      }
      if (!state.alive) throw new AbortError();
      // Nothing awaits between the ownership check and seal(): the head cannot vanish in between.
      if (!this.recorder.owns(job.partition)) continue;
      const cpu = process.cpuUsage();
      try {
        return this.seal(job, rejectedRows);
      } finally {
        stageCpu.add('integrity', cpu);
      }
    }
  }

  /** Digests the batch's rows (without the rejected ones) into the partition's next link. */
  private seal(job: BatchJob, rejectedRows: readonly number[]): SealedBatch | string {
    // RowBinary rows are canonicalised directly (the same canonical rows their TSV text gives).
    return this.recorder.seal({
      partition: job.partition,
      firstOffset: job.firstOffset,
      lastOffset: job.lastOffset,
      insertedAtMs: job.ingestMs,
      batchToken: job.token,
      tsv: job.body,
      format: job.format === 'RowBinary' ? 'RowBinary' : 'TabSeparated',
      skipRows: rejectedRows,
    });
  }

  /**
   * Writes a final checkpoint and forgets the chains of revoked partitions only (never those kept
   * or re-assigned); later seals wait for it. Best effort: a failed checkpoint is retried by the
   * next owner's checkpoints, which sign the same heads.
   */
  revoke(partitions: number[]): Promise<void> {
    const next = this.revoking.then(() => this.recorder.revoke(partitions)).catch(() => undefined);
    this.revoking = next;
    return next;
  }

  /** Hands a range left without a link to the recorder (signed into the chain's next checkpoint). */
  private unlinked(chain: 'data' | 'deadLetters', job: BatchJob, reason: string): void {
    this.recorder.noteUnlinked(chain, {
      partition: job.partition,
      first_offset: job.firstOffset,
      last_offset: job.lastOffset,
      reason,
    });
  }

  /** Final checkpoint and timer stop on shutdown. */
  async stop(): Promise<void> {
    await this.recorder.stop().catch(() => undefined);
  }

  /**
   * Runs `fn` until it succeeds (undefined) or the partition is revoked (AbortError); an error
   * ClickHouse gives for the content (`data`, or `unknown` past its attempts) ends it after bounded
   * attempts with the cause as one line (`ClickHouse refused … N times: <error>`).
   */
  private async retry(
    what: string,
    job: BatchJob,
    signal: AbortSignal,
    fn: () => Promise<void>,
  ): Promise<string | undefined> {
    for (let attempt = 0; ; attempt++) {
      if (signal.aborted) throw new AbortError();
      try {
        await fn();
        return undefined;
      } catch (err) {
        const cls = errorClass(err);
        const limit =
          cls === 'data' ? LINK_DATA_ERROR_ATTEMPTS : cls === 'unknown' ? UNKNOWN_ERROR_ATTEMPTS : Infinity;
        if (attempt + 1 >= limit) {
          this.warn(`${what} refused; batch left without an integrity link`, {
            partition: job.partition,
            first: job.firstOffset,
            attempts: attempt + 1,
            err: errorReason(err),
          });
          return `ClickHouse refused ${what.replace(/^inserting /, '')} ${attempt + 1} times: ${errorReason(err, 300)}`;
        }
        this.warn(`${what} failed; retrying`, {
          partition: job.partition,
          first: job.firstOffset,
          attempt,
          err: errorReason(err),
        });
        await sleep(backoffMs(attempt), signal);
      }
    }
  }
}

/** Builds the stage from the worker config with its own ClickHouse client (same server and user). */
export function createIntegrityStage(
  cfg: WorkerConfig,
  credentials: { username?: string; password?: string },
  warn: IntegrityWarn,
): { stage: IntegrityStage; close(): Promise<void> } {
  const client = createClient({
    url: cfg.clickhouse.url,
    username: credentials.username,
    password: credentials.password,
    database: cfg.clickhouse.database,
    log: { level: ClickHouseLogLevel.OFF },
  });
  const recorder = IntegrityRecorder.fromWorkerConfig(cfg, client, process.env, (m) => warn(m, {}));
  return { stage: new IntegrityStage(recorder, warn), close: () => client.close() };
}
