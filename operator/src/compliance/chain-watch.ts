/**
 * The operator half of "a batch left unlinked says why" (doctrine "Say why"). A worker that stores a
 * batch without its hash-chain link (ClickHouse refused the link insert for its content, or the
 * batch could not be digested) signs the range and the cause into its chain's next checkpoint as
 * `unlinked` (consumer/src/integrity/checkpointer.ts). The workers' logs and metrics are not read by
 * the operator; the checkpoint table is, and it is evidence as well: the gap and its cause are signed.
 *
 * The `ChainLinked` condition (only with spec.integrity.enabled; it does not gate Ready):
 * - False `ChainLinkRefused` while a range noted in the last 7 days has no link at or after its last
 *   offset in its chain and partition: the message names the partition, the offsets and the cause.
 *   It clears (True) as soon as a later batch of that partition is linked again.
 * - True `ChainLinked` otherwise (naming the last range that was left unlinked, if any).
 * - Unknown `ChainNotChecked` when the tables cannot be read.
 * The flip to False is a Warning Event (the status writer's condition flips, deduplicated).
 * Two small reads per pipeline and interval: the window's checkpoints that carry `unlinked`, and
 * only when there are some, the newest linked offset of their partitions.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { ResolvedSpec } from '../api/defaults';
import type { ConditionInput } from '../status/conditions';
import { qualifiedName } from '../../../common/src/sql/identifiers';
import type { UnlinkedRange } from '../../../common/src/integrity/checkpoint';

/** How far back the condition looks for unlinked ranges (the range stays in `verify` for good). */
export const CHAIN_WINDOW_MS = 7 * 86_400_000;
/** How often a pipeline's checkpoints are read (each reconcile reuses the last read until then). */
export const CHAIN_CHECK_MS = 120_000;

/** An unlinked range as signed into a checkpoint, with its chain (the table it links) and time. */
export interface RefusedRange extends UnlinkedRange {
  /** table_name of the chain: the data table, or the dead-letter table. */
  chain: string;
  /** created_at of the checkpoint that signed it, epoch ms. */
  atMs: number;
}

/** The pipeline's name as its workers sign it into checkpoints. */
function pipelineId(spec: ResolvedSpec): string {
  return `${spec.namespace}/${spec.name}`;
}

/** The query for the window's checkpoints that carry unlinked ranges, newest first (pure). */
export function buildRefusalQuery(spec: ResolvedSpec): string {
  const table = qualifiedName(spec.clickhouse.database, spec.integrity.checkpointTable);
  return (
    `SELECT toUnixTimestamp64Milli(created_at) AS at, JSONExtractString(heads, 'table') AS chain, ` +
    `JSONExtractRaw(heads, 'unlinked') AS unlinked FROM ${table} ` +
    `WHERE created_at >= now64(3) - toIntervalMillisecond({window:UInt64}) ` +
    `AND JSONExtractString(heads, 'pipeline') = {pipeline:String} AND JSONHas(heads, 'unlinked') ` +
    'ORDER BY created_at DESC LIMIT 100'
  );
}

/** The query for the newest linked offset per chain and partition at or past `min` (pure). */
export function buildLastLinkedQuery(spec: ResolvedSpec): string {
  const table = qualifiedName(spec.clickhouse.database, spec.integrity.table);
  return (
    'SELECT table_name AS chain, `partition` AS p, max(last_offset) AS last ' +
    `FROM ${table} WHERE pipeline = {pipeline:String} AND table_name IN {chains:Array(String)} ` +
    'AND `partition` IN {partitions:Array(UInt32)} AND last_offset >= {min:UInt64} ' +
    'GROUP BY table_name, `partition`'
  );
}

/** The checkpoints' rows as ranges, newest first; malformed notes are skipped (pure). */
export function refusedRanges(
  rows: Array<{ at: string | number; chain: string; unlinked: string }>,
): RefusedRange[] {
  const out: RefusedRange[] = [];
  for (const row of rows) {
    let notes: unknown;
    try {
      notes = JSON.parse(row.unlinked);
    } catch {
      continue;
    }
    if (!Array.isArray(notes)) continue;
    for (const n of [...notes].reverse() as Array<Partial<UnlinkedRange>>) {
      if (typeof n?.partition !== 'number' || typeof n.first_offset !== 'number') continue;
      if (typeof n.last_offset !== 'number' || typeof n.reason !== 'string') continue;
      out.push({ ...(n as UnlinkedRange), chain: row.chain, atMs: Number(row.at) });
    }
  }
  return out;
}

/** The ranges with no link at or after their last offset in their chain and partition (pure). */
export function openRanges(
  ranges: readonly RefusedRange[],
  lastLinked: ReadonlyMap<string, number>,
): RefusedRange[] {
  return ranges.filter((r) => (lastLinked.get(`${r.chain}|${r.partition}`) ?? -1) < r.last_offset);
}

/** "partition 0 offsets 10–19" (dead letters named as such). */
function describeRange(spec: ResolvedSpec, r: RefusedRange): string {
  const what = r.chain === spec.clickhouse.table ? '' : `dead letters (${r.chain}) of `;
  return `${what}partition ${r.partition} offsets ${r.first_offset}–${r.last_offset}`;
}

/** The ChainLinked condition from the window's ranges and those still open (pure). */
export function chainLinkedCondition(
  spec: ResolvedSpec,
  ranges: readonly RefusedRange[],
  open: readonly RefusedRange[],
): ConditionInput {
  const base = { type: 'ChainLinked' as const };
  if (open.length > 0) {
    const newest = open[0];
    const more = open.length > 1 ? ` (${open.length} ranges without a link; newest shown)` : '';
    return {
      ...base,
      status: 'False',
      reason: 'ChainLinkRefused',
      message:
        `${describeRange(spec, newest)} stored without an integrity link${more}: ${newest.reason}; ` +
        '`logpipeline verify` reports the range; clears once a later batch of the partition is linked',
    };
  }
  if (ranges.length > 0) {
    const last = ranges[0];
    return {
      ...base,
      status: 'True',
      reason: 'ChainLinked',
      message:
        `links are stored again after ${describeRange(spec, last)} was left unlinked ` +
        `(${new Date(last.atMs).toISOString()}: ${last.reason}); \`logpipeline verify\` reports that range`,
    };
  }
  return {
    ...base,
    status: 'True',
    reason: 'ChainLinked',
    message: 'no batch was left without its integrity link in the last 7 days (signed checkpoints)',
  };
}

/** Reads the window's unlinked ranges and those still open. */
export async function readChainLinks(
  client: ClickHouseClient,
  spec: ResolvedSpec,
  windowMs = CHAIN_WINDOW_MS,
): Promise<{ ranges: RefusedRange[]; open: RefusedRange[] }> {
  const pipeline = pipelineId(spec);
  const rs = await client.query({
    query: buildRefusalQuery(spec),
    query_params: { window: windowMs, pipeline },
    format: 'JSONEachRow',
  });
  const ranges = refusedRanges(await rs.json<{ at: string; chain: string; unlinked: string }>());
  if (ranges.length === 0) return { ranges, open: [] };
  const linked = await client.query({
    query: buildLastLinkedQuery(spec),
    query_params: {
      pipeline,
      chains: [...new Set(ranges.map((r) => r.chain))],
      partitions: [...new Set(ranges.map((r) => r.partition))],
      min: Math.min(...ranges.map((r) => r.last_offset)),
    },
    format: 'JSONEachRow',
  });
  const rows = await linked.json<{ chain: string; p: number; last: string }>();
  const lastLinked = new Map(rows.map((r) => [`${r.chain}|${r.p}`, Number(r.last)]));
  return { ranges, open: openRanges(ranges, lastLinked) };
}

/** Options of ChainWatch (tests shorten the interval). */
export interface ChainWatchOptions {
  intervalMs?: number;
  windowMs?: number;
  now?: () => number;
}

/** The ChainLinked condition of every pipeline with integrity, read at most once per interval. */
export class ChainWatch {
  private readonly last = new Map<string, { atMs: number; condition: ConditionInput }>();

  constructor(private readonly opts: ChainWatchOptions = {}) {}

  /**
   * The condition of the pipeline `key` (its uid) and when to look again; undefined without
   * integrity. `connect` gives its ClickHouse client (called only when a read is due). Never throws.
   */
  async evaluate(
    spec: ResolvedSpec,
    key: string,
    connect: () => Promise<ClickHouseClient>,
  ): Promise<{ condition: ConditionInput; requeueAfterMs: number } | undefined> {
    if (!spec.integrity.enabled) {
      this.last.delete(key);
      return undefined;
    }
    const interval = this.opts.intervalMs ?? CHAIN_CHECK_MS;
    const now = (this.opts.now ?? Date.now)();
    const cached = this.last.get(key);
    if (cached && now - cached.atMs < interval)
      return { condition: cached.condition, requeueAfterMs: cached.atMs + interval - now };
    let condition: ConditionInput;
    try {
      const { ranges, open } = await readChainLinks(await connect(), spec, this.opts.windowMs);
      condition = chainLinkedCondition(spec, ranges, open);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      condition = {
        type: 'ChainLinked',
        status: 'Unknown',
        reason: 'ChainNotChecked',
        message: `the checkpoints could not be read: ${reason}`,
      };
    }
    this.last.set(key, { atMs: now, condition });
    return { condition, requeueAfterMs: interval };
  }
}
