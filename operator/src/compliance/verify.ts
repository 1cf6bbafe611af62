/**
 * `logpipeline verify`, the engine: re-derives every batch digest of a time window from the rows
 * ClickHouse holds and checks the hash chain and the signed checkpoints (docs/compliance.md,
 * "Verification"). Three streamed passes — checkpoints, links (+ signed heads), rows — each with
 * bounded memory on both sides (the server sorts with external sorting; this process keeps one
 * block of rows and the links it spans).
 *
 * The ClickHouse reads of each pass are in verify-sources.ts.
 */
import type { KeyObject, X509Certificate } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import type { CanonicalColumn } from '../../../common/src/integrity/canonical-ops';
import { buildCanonicalRowsQuery, type TimeWindow } from './canonical-sql';
import { lineBlocks } from './line-stream';
import { checkCheckpoints, type CheckpointPassResult } from './verify-checkpoints';
import { checkCheckpointGaps, checkCheckpointPrevs } from './verify-chain';
import { checkLinks } from './verify-links';
import * as Q from './verify-queries';
import { FindingSink, type VerifyReport } from './verify-report';
import { LinkQueue } from './verify-link-queue';
import { RowChecker, type ColumnProjections, type RowPassStats } from './verify-rows';
import { chainSource, checkpoints, firstLine, linkPassSource, links, stream } from './verify-sources';
import { describeTable, type TableDescription } from './verify-table';

/** What to verify and against which trust anchors. */
export interface VerifyOptions {
  database: string;
  table: string;
  /** Defaults `<table>_integrity` / `<table>_checkpoints`. */
  integrityTable?: string;
  checkpointTable?: string;
  pipeline?: string;
  /** Requested window on the time column (epoch ms); both undefined = everything. */
  window: TimeWindow;
  publicKey?: KeyObject;
  tsaCAs?: X509Certificate[];
  requireTimestamps?: boolean;
  /** Overrides the retention (default: the longest of the signed retentions and the table's TTL). */
  retentionMs?: number;
  /** A partition's oldest link inserted later than horizon + this lost younger history. Default 1 day. */
  expirySlackMs?: number;
  /** Overrides the canonical column list (otherwise: the signed checkpoint's, else the table's). */
  columns?: string[];
  timeColumn?: string;
  nowMs?: number;
  /** Checkpoints created up to this long after the window's last link are checked too. Default 1 h. */
  checkpointSlackMs?: number;
}

interface Hull {
  window: TimeWindow;
  links: number;
  pipelines: number;
  insertedFromMs?: number;
  insertedToMs?: number;
}

/** Widens the window until every batch intersecting it lies wholly inside (batches are checked whole). */
async function expandWindow(
  client: ClickHouseClient,
  t: Q.IntegrityTables,
  requested: TimeWindow,
): Promise<Hull> {
  let w = requested;
  for (let i = 0; i < 16; i++) {
    const [lo, hi, count, pipelines, insLo, insHi] = (await firstLine(client, Q.buildHullQuery(t, w))).map(
      Number,
    );
    if (!count) return { window: w, links: 0, pipelines: 0 };
    const next = {
      fromMs: w.fromMs === undefined ? undefined : Math.min(w.fromMs, lo),
      toMs: w.toMs === undefined ? undefined : Math.max(w.toMs, hi),
    };
    if (next.fromMs === w.fromMs && next.toMs === w.toMs)
      return { window: w, links: count, pipelines, insertedFromMs: insLo, insertedToMs: insHi };
    w = next;
  }
  throw new Error('time window did not converge while widening it to whole batches');
}

function canonicalColumns(
  desc: TableDescription,
  override: string[] | undefined,
  signed: CanonicalColumn[] | undefined,
): CanonicalColumn[] {
  if (!override) return signed ?? desc.columns;
  return override.map((name) => {
    const c = desc.columns.find((x) => x.name === name);
    if (!c) throw new Error(`--columns names ${name}, which the table does not have`);
    return c;
  });
}

/**
 * The column lists a batch may have been hashed over when the table grew columns (ADD COLUMN):
 * the primary list first, then every other signed list and the table's own, when all of them are
 * stored columns and carry the line column (rows of a message are then streamed in one order for
 * all). Undefined when there is only one list, or when --columns chose one.
 */
export function columnAlternatives(
  desc: Pick<TableDescription, 'columns' | 'hasLine' | 'lineColumn'>,
  primary: readonly CanonicalColumn[],
  signedSets: ReadonlyArray<readonly CanonicalColumn[]>,
  override: boolean,
): { stream: CanonicalColumn[]; projections: number[][] } | undefined {
  if (override || !desc.hasLine) return undefined;
  const key = (cols: readonly CanonicalColumn[]) => cols.map((c) => c.name).join('\t');
  const stored = new Map(desc.columns.map((c, i) => [c.name, i]));
  const lists: Array<readonly CanonicalColumn[]> = [primary];
  for (const set of [...signedSets].reverse().concat([desc.columns]))
    if (!lists.some((l) => key(l) === key(set))) lists.push(set);
  const usable = lists.filter(
    (l) => l.every((c) => stored.has(c.name)) && l.some((c) => c.name === desc.lineColumn),
  );
  if (usable.length < 2 || usable[0] !== primary) return undefined;
  return { stream: desc.columns, projections: usable.map((l) => l.map((c) => stored.get(c.name)!)) };
}

/** Default integrity/checkpoint tables: `<table>_…`, or the data table's for its `<base>_dlq` chain. */
export function integrityTables(opts: VerifyOptions): Q.IntegrityTables {
  const base = opts.table.endsWith('_dlq') ? opts.table.slice(0, -4) : opts.table;
  return {
    database: opts.database,
    table: opts.table,
    integrityTable: opts.integrityTable ?? `${base}_integrity`,
    checkpointTable: opts.checkpointTable ?? `${base}_checkpoints`,
    pipeline: opts.pipeline,
  };
}

/** The row pass: streams canonical rows and merges them with a second read of the links. */
async function rowPass(
  client: ClickHouseClient,
  t: Q.IntegrityTables,
  rowsQuery: string,
  window: TimeWindow,
  sink: FindingSink,
  horizonMs: number | undefined,
  projections?: ColumnProjections,
): Promise<RowPassStats & { seconds: number; peakRss: number }> {
  const started = Date.now();
  let peakRss = process.memoryUsage.rss();
  const checker = new RowChecker(
    new LinkQueue(links(client, Q.buildLinksQuery(t, window))),
    sink,
    horizonMs,
    projections,
  );
  for await (const block of lineBlocks(await stream(client, rowsQuery))) {
    await checker.feed(block);
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }
  await checker.finish();
  return { ...checker.stats, seconds: Math.max(1, Date.now() - started) / 1000, peakRss };
}

/**
 * The row pass over the signed columns (or, when the table grew columns, every list a batch may
 * have been hashed over), noting how many batches were verified over another list.
 */
async function verifyRows(
  client: ClickHouseClient,
  t: Q.IntegrityTables,
  desc: TableDescription,
  columns: CanonicalColumn[],
  cp: Pick<CheckpointPassResult, 'columnSets' | 'timeColumn'>,
  opts: VerifyOptions,
  window: TimeWindow,
  sink: FindingSink,
  horizonMs: number | undefined,
): Promise<RowPassStats & { seconds: number; peakRss: number }> {
  const timeColumn = opts.timeColumn ?? cp.timeColumn ?? 'ts';
  const alt = columnAlternatives(desc, columns, cp.columnSets, opts.columns !== undefined);
  const rowsQuery = buildCanonicalRowsQuery({
    database: t.database,
    table: t.table,
    columns: alt?.stream ?? columns,
    timeColumn,
    window,
    // Signed columns decide: the worker sorted a message's rows when it wrote no line column.
    hasLine: desc.hasLine && columns.some((c) => c.name === desc.lineColumn),
    partitionColumn: desc.partitionColumn,
    offsetColumn: desc.offsetColumn,
    lineColumn: desc.lineColumn,
  });
  const rows = await rowPass(client, t, rowsQuery, window, sink, horizonMs, alt?.projections);
  if (rows.batchesVerifiedWithOtherColumns > 0)
    sink.notice({
      kind: 'info',
      detail: `${rows.batchesVerifiedWithOtherColumns} batches were written before or after a column change and verified over the columns they were written with (columns added later are not covered for them)`,
    });
  return rows;
}

/** Verifies one table over a window; never throws for findings (they are in the report), only for I/O or usage errors. */
export async function verifyTable(client: ClickHouseClient, opts: VerifyOptions): Promise<VerifyReport> {
  const started = Date.now();
  const t = integrityTables(opts);
  const nowMs = opts.nowMs ?? Date.now();
  const sink = new FindingSink();
  const desc = await describeTable(client, opts.database, opts.table);
  const hull = await expandWindow(client, t, opts.window);
  if (hull.pipelines > 1 && opts.pipeline === undefined)
    throw new Error(`${hull.pipelines} pipelines write ${opts.table}: choose one with --pipeline`);
  const all = opts.window.fromMs === undefined && opts.window.toMs === undefined;
  const slack = opts.checkpointSlackMs ?? 3_600_000;
  const created: TimeWindow =
    all || hull.links === 0
      ? opts.window
      : { fromMs: hull.insertedFromMs, toMs: (hull.insertedToMs ?? 0) + slack };
  const cp = await checkCheckpoints(
    checkpoints(client, Q.buildCheckpointsQuery(t, created)),
    { ...opts, database: t.database, table: t.table },
    sink,
  );
  await checkCheckpointPrevs(cp, chainSource(client, t), sink);
  // With a window, checkpoints after it are not read: only the stretches between those seen count.
  await checkCheckpointGaps(cp, chainSource(client, t), sink, nowMs, all);
  // The horizon is the longest retention ever signed (or in the TTL): a shortened TTL never
  // turns younger deletions into "expired".
  const signed = Number((await firstLine(client, Q.buildSignedRetentionQuery(t)))[0]) || 0;
  const known = Math.max(signed, cp.signedRetentionMs ?? 0, desc.retentionMs ?? 0);
  const retentionMs = opts.retentionMs ?? (known > 0 ? known : undefined);
  const horizonMs = retentionMs === undefined ? undefined : nowMs - retentionMs;
  const columns = canonicalColumns(desc, opts.columns, cp.columns);
  const linkStats = await checkLinks(
    linkPassSource(client, t, hull.window, created),
    sink,
    horizonMs,
    opts.expirySlackMs,
  );
  const rows = await verifyRows(client, t, desc, columns, cp, opts, hull.window, sink, horizonMs);
  return {
    database: t.database,
    table: t.table,
    window: { ...hull.window, requestedFromMs: opts.window.fromMs, requestedToMs: opts.window.toMs },
    retentionMs,
    horizonMs,
    columns: columns.map((c) => c.name),
    findings: sink.findings,
    notices: sink.notices,
    findingsDropped: sink.dropped,
    stats: {
      rowsRead: rows.rows,
      bytesRead: rows.bytes,
      links: linkStats.links,
      batchesVerified: rows.batchesVerified,
      checkpoints: cp.checkpoints,
      checkpointsVerified: cp.verified,
      timestampsVerified: cp.timestamps,
      elapsedMs: Date.now() - started,
      rowsPerSecond: rows.rows / rows.seconds,
      megabytesPerSecond: rows.bytes / 1e6 / rows.seconds,
      peakRssMB: Math.round(rows.peakRss / 1048576),
    },
    ok: sink.total === 0,
  };
}
