/**
 * The checkpoint pass of `verify`: each stored checkpoint must be canonical JSON signed by the
 * trusted Ed25519 key, describe this table, carry the created_at of its row, and — when a TSA CA
 * is given — hold a valid RFC 3161 token for its SHA-256 whose genTime agrees with created_at (a
 * checkpoint written later and back-dated would be timestamped late).
 */
import type { KeyObject, X509Certificate } from 'node:crypto';
import type { CanonicalColumn } from '../../../common/src/integrity/canonical-ops';
import {
  checkpointDigest,
  checkpointId,
  verifyCheckpoint,
  type CheckpointPayload,
} from '../../../common/src/integrity/checkpoint';
import { verifyTimeStampToken } from '../../../common/src/integrity/timestamp-token';
import type { FindingSink } from './verify-report';

/** One row of buildCheckpointsQuery. */
export interface CheckpointRow {
  created_at_ms: number | string;
  heads: string;
  signature: string;
  public_key: string;
  tsa_token: string;
}

/** What to check checkpoints against. */
export interface CheckpointPassOptions {
  database: string;
  table: string;
  pipeline?: string;
  publicKey?: KeyObject;
  tsaCAs?: X509Certificate[];
  /** Checkpoints without a token are findings (default: notices). */
  requireTimestamps?: boolean;
  /** Largest accepted |genTime − created_at|. Default 10 minutes. */
  tsaToleranceMs?: number;
}

/** Counters of the pass, and the canonical column list the newest valid checkpoint signed. */
export interface CheckpointPassResult {
  checkpoints: number;
  verified: number;
  timestamps: number;
  columns?: CanonicalColumn[];
  /** Every distinct column list a valid checkpoint signed, oldest first (the table grew columns). */
  columnSets: CanonicalColumn[][];
  timeColumn?: string;
  /** The longest retention a trusted checkpoint signed (v2), in ms. */
  signedRetentionMs?: number;
  /** The longest checkpoint interval a trusted checkpoint signed (v2), in ms. */
  intervalMs?: number;
  /** Every checkpoint id seen (trusted or not): a `prev` naming one of them is present. */
  ids: Set<string>;
  /** Trusted v2 checkpoints' `prev` links, with their creation times (the chain to check). */
  prevs: Array<{ prev: string; createdAtMs: number }>;
  /** Creation times of trusted v2 checkpoints, ascending (for the gap check). */
  times: number[];
}

/** Runs the checkpoint pass. */
export async function checkCheckpoints(
  rows: AsyncIterable<CheckpointRow>,
  opts: CheckpointPassOptions,
  sink: FindingSink,
): Promise<CheckpointPassResult> {
  const result: CheckpointPassResult = {
    checkpoints: 0,
    verified: 0,
    timestamps: 0,
    columnSets: [],
    ids: new Set(),
    prevs: [],
    times: [],
  };
  let untokened = 0;
  for await (const row of rows) {
    result.checkpoints++;
    const at = Number(row.created_at_ms);
    const bad = (detail: string) => sink.finding({ kind: 'checkpoint-invalid', checkpointAtMs: at, detail });
    const payload = checkSignature(row, at, opts, bad);
    if (payload && opts.publicKey) result.verified++;
    result.ids.add(checkpointId(row.heads));
    if (payload) {
      result.columns = payload.columns;
      const names = payload.columns.map((c) => c.name).join('\t');
      if (!result.columnSets.some((s) => s.map((c) => c.name).join('\t') === names))
        result.columnSets.push(payload.columns);
      result.timeColumn = payload.time_column;
      if (payload.v === 2) noteV2(result, payload);
      noteUnlinked(payload, at, sink);
    }
    if (!opts.tsaCAs) continue;
    if (row.tsa_token === '') {
      untokened++;
      if (opts.requireTimestamps)
        sink.finding({
          kind: 'timestamp-invalid',
          checkpointAtMs: at,
          detail: 'checkpoint has no RFC 3161 timestamp token',
        });
      continue;
    }
    if (checkToken(row, at, opts, sink)) result.timestamps++;
  }
  if (!opts.publicKey && result.checkpoints > 0)
    sink.notice({
      kind: 'info',
      detail: `${result.checkpoints} checkpoint signatures not checked: no --public-key given`,
    });
  if (untokened > 0 && !opts.requireTimestamps)
    sink.notice({
      kind: 'info',
      detail: `${untokened} checkpoints carry no timestamp token (TSA unavailable when they were written)`,
    });
  return result;
}

/** Records what a trusted v2 checkpoint signed: its chain link, interval and retention. */
function noteV2(result: CheckpointPassResult, payload: CheckpointPayload): void {
  if (payload.prev !== undefined) result.prevs.push({ prev: payload.prev, createdAtMs: payload.created_at });
  result.times.push(payload.created_at);
  if (payload.interval_ms !== undefined)
    result.intervalMs = Math.max(result.intervalMs ?? 0, payload.interval_ms);
  if (payload.retention_ms !== undefined)
    result.signedRetentionMs = Math.max(result.signedRetentionMs ?? 0, payload.retention_ms);
}

/**
 * A checkpoint's signed note of ranges its writer stored without a link, and why (the chain's
 * findings name the same ranges as breaks): a notice, so the report says the cause next to them.
 */
function noteUnlinked(payload: CheckpointPayload, at: number, sink: FindingSink): void {
  for (const u of payload.unlinked ?? []) {
    sink.notice({
      kind: 'info',
      partition: u.partition,
      firstOffset: u.first_offset,
      lastOffset: u.last_offset,
      checkpointAtMs: at,
      detail: `the worker signed that it stored these offsets without an integrity link: ${u.reason}`,
    });
  }
}

/** Verifies signature and content; returns the payload when it can be trusted (or when no key is given, parsed). */
function checkSignature(
  row: CheckpointRow,
  at: number,
  opts: CheckpointPassOptions,
  bad: (d: string) => void,
): CheckpointPayload | undefined {
  let payload: CheckpointPayload | undefined;
  if (opts.publicKey) {
    const v = verifyCheckpoint(row.heads, row.signature, opts.publicKey);
    if (v.problem) {
      const why = {
        malformed: 'heads are not a checkpoint document',
        'not-canonical': 'heads are not canonical JSON (altered)',
        'unknown-key': 'signed by another key than --public-key',
        'bad-signature': 'signature does not verify',
      };
      bad(why[v.problem]);
      return undefined;
    }
    payload = v.payload;
  } else {
    try {
      payload = JSON.parse(row.heads) as CheckpointPayload;
    } catch {
      bad('heads are not JSON');
      return undefined;
    }
  }
  if (!payload) return undefined;
  if (
    payload.table !== opts.table ||
    payload.database !== opts.database ||
    (opts.pipeline !== undefined && payload.pipeline !== opts.pipeline)
  ) {
    bad(`checkpoint describes ${payload.pipeline} ${payload.database}.${payload.table}, not this table`);
    return undefined;
  }
  if (payload.created_at !== at) {
    bad(
      `row created_at ${new Date(at).toISOString()} differs from the signed ${new Date(payload.created_at).toISOString()}`,
    );
    return undefined;
  }
  return payload;
}

function checkToken(row: CheckpointRow, at: number, opts: CheckpointPassOptions, sink: FindingSink): boolean {
  const v = verifyTimeStampToken(
    Buffer.from(row.tsa_token, 'base64'),
    checkpointDigest(row.heads),
    opts.tsaCAs ?? [],
  );
  if (v.problem) {
    sink.finding({ kind: 'timestamp-invalid', checkpointAtMs: at, detail: v.problem });
    return false;
  }
  const skew = (v.info?.genTimeMs ?? at) - at;
  if (Math.abs(skew) > (opts.tsaToleranceMs ?? 600_000)) {
    sink.finding({
      kind: 'timestamp-invalid',
      checkpointAtMs: at,
      detail: `timestamped ${Math.round(skew / 1000)} s from its claimed creation time (back-dated?)`,
    });
    return false;
  }
  return true;
}
