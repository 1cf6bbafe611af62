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
import { SECRET_ENV, type WorkerConfig } from '../../../common/src/worker-config';
import { DLQ_COLUMNS } from '../../../common/src/tables';
import type { CanonicalColumn } from '../../../common/src/integrity/canonical-ops';
import { ChainState, type SealedBatch, type SealInput } from './chain-state';
import { loadSigningKey, type UnlinkedRange } from '../../../common/src/integrity/checkpoint';
import { Checkpointer, type CheckpointResult } from './checkpointer';
import { insertLink, restorePartitions, type IntegrityTarget } from './link-store';
import type { TsaClientAuth } from '../../../common/src/integrity/tsa-request';

/** TSA credentials from the worker's LP_TSA_* env (set from the TSA Secret); empty values count as absent. */
export function tsaAuthFromEnv(env: NodeJS.ProcessEnv): TsaClientAuth {
  const get = (name: string) => env[name] || undefined;
  return {
    username: get(SECRET_ENV.tsaUsername),
    password: get(SECRET_ENV.tsaPassword),
    clientCertPem: get(SECRET_ENV.tsaClientCert),
    clientKeyPem: get(SECRET_ENV.tsaClientKey),
    caPem: get(SECRET_ENV.tsaServerCa),
  };
}

export { BatchDigester, digestTsv, type BatchSummary } from '../../../common/src/integrity/canonical';
export type { CanonicalColumn } from '../../../common/src/integrity/canonical-ops';
export { computeLink, GENESIS_LINK, type LinkRecord } from '../../../common/src/integrity/chain';
export type { SealedBatch, SealInput } from './chain-state';
export type { ChainHead } from '../../../common/src/integrity/checkpoint';
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
  /** Credentials of a TSA that requires them (from the TSA Secret via LP_TSA_* env). */
  tsaAuth?: TsaClientAuth;
  warn?: (message: string) => void;
  /**
   * The DLQ table (`<table>_dlq`): dead letters are received lines too, so they get a chain of
   * their own per source partition (table_name = this table in the integrity table, own checkpoints).
   */
  deadLetterTable?: string;
}

/** One chain (data or dead letters): its state, where its links go, its checkpoint writer. */
interface Chain {
  state: ChainState;
  target: IntegrityTarget;
  checkpointer?: Checkpointer;
}

/** The worker-facing integrity API (one per worker process). */
export class IntegrityRecorder {
  readonly state: ChainState;
  readonly checkpointer: Checkpointer | undefined;
  private readonly chains: Chain[];
  private readonly deadLetters: Chain | undefined;

  /** Validates columns and the signing key (throws on configuration errors); no I/O. */
  constructor(private readonly opts: IntegrityRecorderOptions) {
    const data = this.chain(opts.target, opts.columns, opts.timeColumn ?? 'ts');
    this.state = data.state;
    this.checkpointer = data.checkpointer;
    this.chains = [data];
    if (opts.deadLetterTable) {
      const target = { ...opts.target, table: opts.deadLetterTable };
      this.deadLetters = this.chain(target, DLQ_COLUMNS, 'ts', 'offset');
      this.chains.push(this.deadLetters);
    }
  }

  /** The data table's INSERT columns (what a payload's rows hold, in order). */
  get columns(): readonly CanonicalColumn[] {
    return this.opts.columns;
  }

  private chain(
    target: IntegrityTarget,
    columns: readonly CanonicalColumn[],
    timeColumn: string,
    offsetColumn?: string,
  ): Chain {
    const o = this.opts;
    const state = new ChainState({
      pipeline: target.pipeline,
      table: target.table,
      columns,
      timeColumn,
      offsetColumn,
    });
    const checkpointer = o.signingKeyPem
      ? new Checkpointer({
          client: o.client,
          target,
          state,
          key: loadSigningKey(o.signingKeyPem),
          columns,
          timeColumn,
          intervalMs: o.checkpointIntervalMs,
          retentionMs: o.retentionMs,
          tsaUrl: o.tsaUrl,
          tsaAuth: o.tsaAuth,
          warn: o.warn,
        })
      : undefined;
    return { state, target, checkpointer };
  }

  /** True when dead letters are chained too (a DLQ table is configured). */
  get chainsDeadLetters(): boolean {
    return this.deadLetters !== undefined;
  }

  /** True when every chain holds a restored head for the partition. */
  owns(partition: number): boolean {
    return this.chains.every((c) => c.state.owns(partition));
  }

  /** Restores the chain heads of newly assigned partitions from ClickHouse and starts checkpointing. */
  async assign(partitions: Iterable<number>): Promise<void> {
    const list = [...partitions];
    for (const c of this.chains) {
      await restorePartitions(this.opts.client, c.state, c.target, list);
      c.checkpointer?.start();
    }
  }

  /** Writes a last checkpoint covering the revoked partitions, then forgets them. */
  async revoke(partitions: Iterable<number>): Promise<void> {
    const list = [...partitions];
    for (const c of this.chains) {
      await c.checkpointer?.checkpointNow().catch(() => undefined);
      c.state.forget(list);
    }
  }

  /** Seals one batch (sync, cheap); returns an error string for an unrestored partition or a malformed payload. */
  seal(input: SealInput): SealedBatch | string {
    return this.state.seal(input);
  }

  /** Seals a batch's dead-letter rows (the DLQ insert's exact payload) into the dead-letter chain. */
  sealDeadLetters(input: SealInput): SealedBatch | string {
    if (!this.deadLetters) return 'no dead-letter table is configured';
    return this.deadLetters.state.seal(input);
  }

  /** Inserts the sealed batch's link (deduplicated by its token); retry on failure like the data insert. */
  async commit(sealed: SealedBatch): Promise<void> {
    await insertLink(this.opts.client, this.opts.target, sealed);
  }

  /** Inserts a sealed dead-letter batch's link. */
  async commitDeadLetters(sealed: SealedBatch): Promise<void> {
    if (this.deadLetters) await insertLink(this.opts.client, this.deadLetters.target, sealed);
  }

  /**
   * Records a batch of the data chain (or the dead-letter chain) stored without its link: the range
   * and cause are signed into that chain's next checkpoint, which is written at once (best effort;
   * the interval retries it). Without a signing key there are no checkpoints to carry it.
   */
  noteUnlinked(chain: 'data' | 'deadLetters', range: UnlinkedRange): void {
    const checkpointer = chain === 'data' ? this.checkpointer : this.deadLetters?.checkpointer;
    if (!checkpointer) return;
    checkpointer.noteUnlinked(range);
    void checkpointer.checkpointNow().catch(() => undefined);
  }

  /** Signs the current heads now (tests, shutdown); null when there was nothing new or no key. */
  async checkpointNow(): Promise<CheckpointResult | null> {
    const [data, ...rest] = this.chains;
    for (const c of rest) await c.checkpointer?.checkpointNow();
    return data.checkpointer ? data.checkpointer.checkpointNow() : null;
  }

  /** Stops the checkpoint timers after a final checkpoint. */
  async stop(): Promise<void> {
    for (const c of this.chains) await c.checkpointer?.stop();
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
      timeColumn: cfg.integrity.timeColumn,
      retentionMs: cfg.clickhouse.retainMs,
      tsaUrl: cfg.integrity.tsaUrl,
      tsaAuth: tsaAuthFromEnv(env),
      warn,
      deadLetterTable: cfg.deadLetter.enabled ? cfg.deadLetter.table : undefined,
    });
  }
}
