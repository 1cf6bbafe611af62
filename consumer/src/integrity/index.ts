/**
 * Tamper evidence for the worker, in one object: restore chain heads for assigned partitions,
 * seal each inserted batch into a link, insert the link exactly once, and write signed (optionally
 * timestamped) checkpoints. The worker's calls, per docs/compliance.md ("Worker integration"):
 *
 *   const integrity = IntegrityRecorder.fromWorkerConfig(cfg, client, process.env);   // start
 *   await integrity.assign(partitions);          // on every assignment, before sealing
 *   const sealed = integrity.seal({ partition, firstOffset, lastOffset, insertedAtMs, batchToken, tsv });
 *   await sink.insert('data', tsv, batchToken);  // the data rows (unchanged)
 *   await integrity.commit(sealed);              // the link, before committing offsets
 *   await integrity.revoke(partitions);          // on revocation;  await integrity.stop() on shutdown
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { SECRET_ENV, type WorkerConfig } from '../config';
import type { CanonicalColumn } from './canonical';
import { ChainState, type SealedBatch, type SealInput } from './chain-state';
import { loadSigningKey } from './checkpoint';
import { Checkpointer, type CheckpointResult } from './checkpointer';
import { insertLink, restorePartitions, type IntegrityTarget } from './link-store';

export { BatchDigester, digestTsv, type BatchSummary, type CanonicalColumn } from './canonical';
export { computeLink, GENESIS_LINK, type LinkRecord } from './chain';
export type { ChainHead, SealedBatch, SealInput } from './chain-state';
export type { IntegrityTarget } from './link-store';

/** Everything the recorder needs; `signingKeyPem` absent means chain only, no checkpoints. */
export interface IntegrityRecorderOptions {
  client: ClickHouseClient;
  target: IntegrityTarget;
  columns: readonly CanonicalColumn[];
  timeColumn?: string;
  signingKeyPem?: string;
  checkpointIntervalMs: number;
  /** The table's delete-after retention, signed into every checkpoint. */
  retentionMs?: number;
  tsaUrl?: string;
  warn?: (message: string) => void;
}

/** The worker-facing integrity API (one per worker process). */
export class IntegrityRecorder {
  readonly state: ChainState;
  readonly checkpointer: Checkpointer | undefined;

  /** Validates columns and the signing key (throws on configuration errors); no I/O. */
  constructor(private readonly opts: IntegrityRecorderOptions) {
    const timeColumn = opts.timeColumn ?? 'ts';
    this.state = new ChainState({
      pipeline: opts.target.pipeline,
      table: opts.target.table,
      columns: opts.columns,
      timeColumn,
    });
    if (opts.signingKeyPem) {
      this.checkpointer = new Checkpointer({
        client: opts.client,
        target: opts.target,
        state: this.state,
        key: loadSigningKey(opts.signingKeyPem),
        columns: opts.columns,
        timeColumn,
        intervalMs: opts.checkpointIntervalMs,
        retentionMs: opts.retentionMs,
        tsaUrl: opts.tsaUrl,
        warn: opts.warn,
      });
    }
  }

  /** Builds the recorder from the worker config; the signing key PEM comes from LP_INTEGRITY_SIGNING_KEY. */
  static fromWorkerConfig(
    cfg: WorkerConfig,
    client: ClickHouseClient,
    env: NodeJS.ProcessEnv,
    warn?: (m: string) => void,
  ): IntegrityRecorder {
    return new IntegrityRecorder({
      client,
      target: {
        database: cfg.clickhouse.database,
        integrityTable: cfg.integrity.table,
        checkpointTable: cfg.integrity.checkpointTable,
        pipeline: `${cfg.pipeline.namespace}/${cfg.pipeline.name}`,
        table: cfg.clickhouse.table,
      },
      columns: cfg.clickhouse.columns.map((c) => ({ name: c.name, type: c.type, source: c.source })),
      signingKeyPem: env[SECRET_ENV.signingKey] || undefined,
      checkpointIntervalMs: cfg.integrity.checkpointIntervalMs,
      retentionMs: cfg.clickhouse.retainMs,
      tsaUrl: cfg.integrity.tsaUrl,
      warn,
    });
  }

  /** Restores the chain heads of newly assigned partitions from ClickHouse and starts checkpointing. */
  async assign(partitions: Iterable<number>): Promise<void> {
    await restorePartitions(this.opts.client, this.state, this.opts.target, partitions);
    this.checkpointer?.start();
  }

  /** Writes a last checkpoint covering the revoked partitions, then forgets them. */
  async revoke(partitions: Iterable<number>): Promise<void> {
    await this.checkpointer?.checkpointNow().catch(() => undefined);
    this.state.forget(partitions);
  }

  /** Seals one batch (sync, cheap); returns an error string for an unrestored partition or a malformed payload. */
  seal(input: SealInput): SealedBatch | string {
    return this.state.seal(input);
  }

  /** Inserts the sealed batch's link (deduplicated by its token); retry on failure like the data insert. */
  async commit(sealed: SealedBatch): Promise<void> {
    await insertLink(this.opts.client, this.opts.target, sealed);
  }

  /** Signs the current heads now (tests, shutdown); null when there was nothing new or no key. */
  async checkpointNow(): Promise<CheckpointResult | null> {
    return this.checkpointer ? this.checkpointer.checkpointNow() : null;
  }

  /** Stops the checkpoint timer after a final checkpoint. */
  async stop(): Promise<void> {
    await this.checkpointer?.stop();
  }
}
