/**
 * Writes signed checkpoints of the chain heads every `checkpointIntervalMs`: canonical JSON of the
 * owned partitions' heads, an Ed25519 signature, optionally an RFC 3161 token for its SHA-256, one
 * row in `<table>_checkpoints`. A checkpoint whose heads did not move since the previous one is
 * skipped. A TSA outage never blocks the pipeline: the checkpoint is stored without a token and the
 * failure is counted (verify reports checkpoints without tokens when asked to check them).
 * Ranges left without a link (noteUnlinked) are signed into the next checkpoint as `unlinked`, with
 * their cause: the operator's ChainLinked condition reads them there.
 */

/** Most unlinked ranges one checkpoint carries (the newest; a refusing table refuses every batch). */
export const MAX_UNLINKED_NOTES = 20;
import { CHECKPOINT_COLUMNS } from '../../../common/src/tables';
import { createHash, type KeyObject } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { quoteIdentifier } from '../../../common/src/sql/identifiers';
import type { CanonicalColumn } from '../../../common/src/integrity/canonical-ops';
import { msText, tsvText } from '../../../common/src/integrity/chain';
import type { ChainState } from './chain-state';
import {
  buildCheckpointPayload,
  canonicalJson,
  checkpointDigest,
  checkpointId,
  GENESIS_CHECKPOINT,
  keyFingerprint,
  signCheckpoint,
  type UnlinkedRange,
} from '../../../common/src/integrity/checkpoint';
import { qualified, type IntegrityTarget } from './link-store';
import { requestTimeStamp, type TsaClientAuth } from '../../../common/src/integrity/tsa-request';

/** Settings of the checkpoint writer. */
export interface CheckpointerOptions {
  client: ClickHouseClient;
  target: IntegrityTarget;
  state: ChainState;
  key: KeyObject;
  columns: readonly CanonicalColumn[];
  timeColumn: string;
  intervalMs: number;
  /** The retention in force (delete-after), signed into each checkpoint. */
  retentionMs?: number;
  tsaUrl?: string;
  tsaTimeoutMs?: number;
  tsaAuth?: TsaClientAuth;
  now?: () => number;
  /** Called with a one-line message on TSA or insert failures (never with secrets). */
  warn?: (message: string) => void;
}

/** What one checkpoint attempt did. */
export interface CheckpointResult {
  createdAtMs: number;
  heads: number;
  timestamped: boolean;
  text: string;
}

/** Counters for metrics. */
export interface CheckpointerStats {
  written: number;
  skippedUnchanged: number;
  tsaFailures: number;
  insertFailures: number;
}

/** Periodic signer of chain heads. */
export class Checkpointer {
  readonly stats: CheckpointerStats = { written: 0, skippedUnchanged: 0, tsaFailures: 0, insertFailures: 0 };
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private lastHeads = '';
  /** Id of the last checkpoint of this chain; undefined: read it from the table before the next write. */
  private prevId: string | undefined;
  /** Ranges left without a link since the last stored checkpoint. */
  private unlinked: UnlinkedRange[] = [];

  /** Creates the writer (no I/O until start() or checkpointNow()). */
  constructor(private readonly opts: CheckpointerOptions) {}

  /** Starts the interval timer (unref'd: it never keeps the process alive). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.checkpointNow().catch(() => undefined), this.opts.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and writes a last checkpoint (call on shutdown and before revoking partitions). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.checkpointNow().catch(() => undefined);
  }

  /** Records a range left without a link; the next checkpoint signs it (the newest 20 are kept). */
  noteUnlinked(range: UnlinkedRange): void {
    this.unlinked.push(range);
    if (this.unlinked.length > MAX_UNLINKED_NOTES) this.unlinked.shift();
  }

  /** Signs and stores the current heads now (serialised with the timer); null when nothing moved. */
  checkpointNow(): Promise<CheckpointResult | null> {
    const next = this.running.then(() => this.write());
    this.running = next.catch(() => undefined);
    return next;
  }

  private async write(): Promise<CheckpointResult | null> {
    const o = this.opts;
    const heads = o.state.heads();
    const headsKey = JSON.stringify(heads);
    const notes = [...this.unlinked];
    if (heads.length === 0 || (headsKey === this.lastHeads && notes.length === 0)) {
      this.stats.skippedUnchanged++;
      return null;
    }
    const prev = this.prevId ?? (await this.latestId());
    const createdAtMs = (o.now ?? Date.now)();
    const payload = {
      ...buildCheckpointPayload({
        ...o.target,
        createdAtMs,
        key: o.key,
        columns: o.columns,
        timeColumn: o.timeColumn,
        heads,
        prev,
        intervalMs: o.intervalMs,
        retentionMs: o.retentionMs,
      }),
      ...(notes.length > 0 ? { unlinked: notes } : {}),
    };
    const text = canonicalJson(payload);
    const signature = signCheckpoint(text, o.key);
    const token = await this.timestamp(text);
    const row = [
      msText(createdAtMs),
      text,
      signature,
      keyFingerprint(o.key),
      token?.toString('base64') ?? '',
    ];
    try {
      await o.client.insert({
        table: qualified(o.target, 'checkpointTable'),
        columns: CHECKPOINT_COLUMNS.map((c) => quoteIdentifier(c.name)) as [string, ...string[]],
        values: Readable.from([Buffer.from(row.map(tsvText).join('\t') + '\n', 'utf8')], {
          objectMode: false,
        }),
        format: 'TabSeparated',
        clickhouse_settings: {
          insert_deduplication_token: `checkpoint/${createHash('sha256').update(text).digest('hex')}`,
          insert_deduplicate: 1,
        },
      });
    } catch (err) {
      // The row may have landed anyway (timeout): re-read the chain's tail before the next one.
      this.prevId = undefined;
      this.stats.insertFailures++;
      o.warn?.(`checkpoint insert failed: ${(err as Error).message}`);
      throw err;
    }
    this.lastHeads = headsKey;
    // Notes taken while this one was written wait for the next.
    this.unlinked = this.unlinked.filter((n) => !notes.includes(n));
    this.prevId = checkpointId(text);
    this.stats.written++;
    return { createdAtMs, heads: heads.length, timestamped: token !== undefined, text };
  }

  /** Id of the newest stored checkpoint of this pipeline and table, or GENESIS_CHECKPOINT. */
  private async latestId(): Promise<string> {
    const o = this.opts;
    const rs = await o.client.query({
      query:
        `SELECT heads FROM ${qualified(o.target, 'checkpointTable')} ` +
        "WHERE JSONExtractString(heads, 'pipeline') = {pipeline:String} AND JSONExtractString(heads, 'table') = {table:String} " +
        'ORDER BY created_at DESC LIMIT 1',
      query_params: { pipeline: o.target.pipeline, table: o.target.table },
      format: 'JSONEachRow',
    });
    const rows = await rs.json<{ heads: string }>();
    return rows.length > 0 ? checkpointId(rows[0].heads) : GENESIS_CHECKPOINT;
  }

  private async timestamp(text: string): Promise<Buffer | undefined> {
    const o = this.opts;
    if (!o.tsaUrl) return undefined;
    try {
      return (await requestTimeStamp(o.tsaUrl, checkpointDigest(text), o.tsaTimeoutMs, o.tsaAuth)).token;
    } catch (err) {
      this.stats.tsaFailures++;
      o.warn?.(`timestamp request failed, checkpoint stored without a token: ${(err as Error).message}`);
      return undefined;
    }
  }
}
