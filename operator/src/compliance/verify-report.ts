/**
 * What `logpipeline verify` found, as data (the `--output json` document) and as text. Findings
 * are evidence of tampering or breakage and make the exit code non-zero; notices (TTL expiry,
 * unchecked parts) explain without accusing.
 */

/** Kinds of findings (tampering evidence). */
export type FindingKind =
  /** A batch's rows are all present but their digest differs. */
  | 'modified'
  /** Rows of a batch are missing (before the retention horizon). */
  | 'deleted'
  /** A batch has more rows than its link counts. */
  | 'extra-rows'
  /** Rows whose offsets no link covers. */
  | 'uncovered-rows'
  /** A link's stored hash does not match its fields. */
  | 'link-modified'
  /** A link's prev_link does not match the link before it (a link was removed or altered). */
  | 'chain-break'
  /** Two links cover overlapping offsets. */
  | 'overlap'
  /** A checkpoint fails its signature, names an unknown key, or is not canonical. */
  | 'checkpoint-invalid'
  /** A signed head names a link that is missing or different. */
  | 'checkpoint-head-mismatch'
  /** A checkpoint's RFC 3161 token fails verification, or is missing when one is required. */
  | 'timestamp-invalid'
  /** A checkpoint names a predecessor that is not stored (checkpoints deleted). */
  | 'checkpoint-missing'
  /** No checkpoint for longer than twice the signed interval while batches were inserted. */
  | 'checkpoint-gap'
  /** The oldest stored link of a partition is younger than the horizon: history before it was deleted. */
  | 'history-deleted';

/** One finding or notice about a batch range or a checkpoint. */
export interface Finding {
  /** A FindingKind, or for notices `expired` (TTL) / `info` (parts not checked). */
  kind: FindingKind | 'expired' | 'info';
  partition?: number;
  firstOffset?: number;
  lastOffset?: number;
  expectedRows?: number;
  foundRows?: number;
  /** Checkpoint creation time (checkpoint findings). */
  checkpointAtMs?: number;
  detail: string;
}

/** Throughput and memory of a run. */
export interface VerifyStats {
  rowsRead: number;
  /** Canonical bytes streamed from the server. */
  bytesRead: number;
  links: number;
  batchesVerified: number;
  checkpoints: number;
  checkpointsVerified: number;
  timestampsVerified: number;
  elapsedMs: number;
  rowsPerSecond: number;
  megabytesPerSecond: number;
  peakRssMB: number;
}

/** The verification result. */
export interface VerifyReport {
  database: string;
  table: string;
  /** The window checked (expanded so every batch intersecting the request is whole), epoch ms. */
  window: { fromMs?: number; toMs?: number; requestedFromMs?: number; requestedToMs?: number };
  retentionMs?: number;
  horizonMs?: number;
  columns: string[];
  findings: Finding[];
  /** Expired batches and other explanations that are not evidence of tampering. */
  notices: Finding[];
  /** Findings beyond the retained cap (counted, not listed). */
  findingsDropped: number;
  stats: VerifyStats;
  ok: boolean;
}

/** Collects findings and notices with a cap so a badly damaged table cannot exhaust memory. */
export class FindingSink {
  readonly findings: Finding[] = [];
  readonly notices: Finding[] = [];
  dropped = 0;

  /** `cap` bounds each list. */
  constructor(private readonly cap = 10_000) {}

  /** Records a finding (tampering evidence). */
  finding(f: Finding): void {
    if (this.findings.length < this.cap) this.findings.push(f);
    else this.dropped++;
  }

  /** Records a notice (expired data, unchecked parts). */
  notice(f: Finding): void {
    if (this.notices.length < this.cap) this.notices.push(f);
    else this.dropped++;
  }

  /** Number of findings including dropped ones. */
  get total(): number {
    return this.findings.length + this.dropped;
  }
}

const iso = (ms: number | undefined): string => (ms === undefined ? '-' : new Date(ms).toISOString());

function range(f: Finding): string {
  if (f.partition === undefined)
    return f.checkpointAtMs !== undefined ? `checkpoint ${iso(f.checkpointAtMs)}` : '';
  const offsets = f.firstOffset === undefined ? '' : ` offsets ${f.firstOffset}..${f.lastOffset}`;
  return `partition ${f.partition}${offsets}`;
}

function line(f: Finding): string {
  const rows =
    f.expectedRows !== undefined || f.foundRows !== undefined
      ? ` (rows expected ${f.expectedRows ?? '-'}, found ${f.foundRows ?? '-'})`
      : '';
  return `  ${f.kind.padEnd(24)} ${range(f)}${rows}: ${f.detail}`;
}

/** Human-readable report. */
export function formatReport(r: VerifyReport): string {
  const s = r.stats;
  const out = [
    `${r.ok ? 'OK' : 'TAMPERING DETECTED'}: ${r.database}.${r.table}, ` +
      (r.window.fromMs === undefined && r.window.toMs === undefined
        ? 'all rows'
        : `window ${iso(r.window.fromMs)} .. ${iso(r.window.toMs)}`),
    `  ${s.batchesVerified}/${s.links} batches verified, ${s.rowsRead} rows, ${s.checkpointsVerified}/${s.checkpoints} checkpoints, ` +
      `${s.timestampsVerified} timestamps`,
    `  ${(s.elapsedMs / 1000).toFixed(2)} s, ${Math.round(s.rowsPerSecond)} rows/s, ${s.megabytesPerSecond.toFixed(1)} MB/s, peak RSS ${s.peakRssMB} MB`,
  ];
  if (r.horizonMs !== undefined) out.push(`  retention horizon ${iso(r.horizonMs)}`);
  if (r.findings.length > 0)
    out.push(`findings (${r.findings.length + r.findingsDropped}):`, ...r.findings.map(line));
  if (r.findingsDropped > 0) out.push(`  … ${r.findingsDropped} more not listed`);
  if (r.notices.length > 0) out.push(`notices (${r.notices.length}):`, ...r.notices.map(line));
  return out.join('\n') + '\n';
}
