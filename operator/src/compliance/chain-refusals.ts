/**
 * What the ChainLinked condition reads (operator/src/compliance/chain-watch.ts), as queries and
 * pure functions: the operator half of "a batch left unlinked says why" (doctrine "Say why"). A
 * worker that stores a batch without its hash-chain link (ClickHouse refused the link insert for
 * its content, or the batch could not be digested) signs the range and the cause into its chain's
 * next checkpoint as `unlinked` (the worker's checkpoint writer, see docs/compliance.md). The
 * workers' logs and metrics are not read by the operator; the checkpoint table is, and it is
 * evidence as well: the gap and its cause are signed.
 *
 * The `ChainLinked` condition (only with spec.integrity.enabled; it does not gate Ready):
 * - False `ChainLinkRefused` while a range noted in the last 7 days has no link at or after its last
 *   offset in its chain and partition: the message names the partition, the offsets and the cause.
 *   It clears (True) as soon as a later batch of that partition is linked again.
 * - True `ChainLinked` otherwise (naming the last range that was left unlinked, if any).
 * - Unknown `ChainNotChecked` when the tables cannot be read.
 * The flip to False is a Warning Event (the status writer's condition flips, deduplicated).
 * Reads: the window's checkpoints that carry `unlinked` (one UNION ALL query per server and round
 * for every pipeline on it), and only for a pipeline that has some, the newest linked offset of those
 * partitions.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { ResolvedSpec } from '../api/defaults';
import type { ConditionInput } from '../status/conditions';
import { qualifiedName } from '../../../common/src/sql/identifiers';
import type { UnlinkedRange } from '../../../common/src/integrity/checkpoint';

/** How far back the condition looks for unlinked ranges (the range stays in `verify` for good). */
export const CHAIN_WINDOW_MS = 7 * 86_400_000;

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

type RefusalRow = { i?: number | string; at: string; chain: string; unlinked: string };

/** One query over several pipelines' checkpoint tables, branch `i` tagged with its index (pure). */
export function buildBatchedRefusalQuery(specs: readonly ResolvedSpec[]): string {
  return specs
    .map((spec, i) => {
      const one = buildRefusalQuery(spec).replace('{pipeline:String}', `{p${i}:String}`);
      return `SELECT ${i} AS i, * FROM (${one})`;
    })
    .join(' UNION ALL ');
}

/** The parameters of buildBatchedRefusalQuery (pure). */
export function batchedRefusalParams(
  specs: readonly ResolvedSpec[],
  windowMs: number,
): Record<string, unknown> {
  const params: Record<string, unknown> = { window: windowMs };
  specs.forEach((spec, i) => (params[`p${i}`] = pipelineId(spec)));
  return params;
}

/** The newest linked offset per chain and partition of `ranges` (one query; only when there are ranges). */
async function lastLinked(
  client: ClickHouseClient,
  spec: ResolvedSpec,
  ranges: readonly RefusedRange[],
): Promise<Map<string, number>> {
  const rs = await client.query({
    query: buildLastLinkedQuery(spec),
    query_params: {
      pipeline: pipelineId(spec),
      chains: [...new Set(ranges.map((r) => r.chain))],
      partitions: [...new Set(ranges.map((r) => r.partition))],
      min: Math.min(...ranges.map((r) => r.last_offset)),
    },
    format: 'JSONEachRow',
  });
  const rows = await rs.json<{ chain: string; p: number; last: string }>();
  return new Map(rows.map((r) => [`${r.chain}|${r.p}`, Number(r.last)]));
}

/** The ChainLinked condition of one pipeline from its checkpoint rows (reads its links when needed). */
async function conditionFrom(
  client: ClickHouseClient,
  spec: ResolvedSpec,
  rows: RefusalRow[],
): Promise<ConditionInput> {
  const ranges = refusedRanges(rows);
  const open = ranges.length === 0 ? [] : openRanges(ranges, await lastLinked(client, spec, ranges));
  return chainLinkedCondition(spec, ranges, open);
}

/** Unknown `ChainNotChecked` with the read's error. */
export function notChecked(err: unknown): ConditionInput {
  const reason = err instanceof Error ? err.message : String(err);
  return {
    type: 'ChainLinked',
    status: 'Unknown',
    reason: 'ChainNotChecked',
    message: `the checkpoints could not be read: ${reason}`,
  };
}

/** Most checkpoint tables one batched query reads. */
const BATCH = 100;

/**
 * The ChainLinked condition of each of `specs` on one server (index-aligned): one UNION ALL query per
 * 100 pipelines; a failing batch (a table not created yet) falls back to one query per pipeline, so
 * one pipeline's problem never hides another's condition. Never throws.
 */
export async function readChainConditions(
  client: ClickHouseClient,
  specs: readonly ResolvedSpec[],
  windowMs = CHAIN_WINDOW_MS,
): Promise<ConditionInput[]> {
  const out: ConditionInput[] = [];
  for (let start = 0; start < specs.length; start += BATCH) {
    const chunk = specs.slice(start, start + BATCH);
    let rows: RefusalRow[] | undefined;
    try {
      const rs = await client.query({
        query: buildBatchedRefusalQuery(chunk),
        query_params: batchedRefusalParams(chunk, windowMs),
        format: 'JSONEachRow',
      });
      rows = await rs.json<RefusalRow>();
    } catch {
      rows = undefined;
    }
    for (const [i, spec] of chunk.entries()) {
      try {
        const mine = rows
          ? rows.filter((r) => Number(r.i) === i)
          : await readRefusalRows(client, spec, windowMs);
        out.push(await conditionFrom(client, spec, mine));
      } catch (err) {
        out.push(notChecked(err));
      }
    }
  }
  return out;
}

/** One pipeline's checkpoint rows that carry unlinked ranges. */
async function readRefusalRows(
  client: ClickHouseClient,
  spec: ResolvedSpec,
  windowMs: number,
): Promise<RefusalRow[]> {
  const rs = await client.query({
    query: buildRefusalQuery(spec),
    query_params: { window: windowMs, pipeline: pipelineId(spec) },
    format: 'JSONEachRow',
  });
  return rs.json<RefusalRow>();
}
