/**
 * ClickHouse I/O of the hash chain: reading a partition's recent links back (chain recovery at
 * start and after a rebalance) and inserting a sealed batch's link with its deduplication token,
 * the same exactly-once discipline as the data rows. Identifiers are validated and quoted; every
 * value travels as a query parameter or in the TSV body.
 */
import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { quoteIdentifier } from '../../../common/src/sql/identifiers';
import { LINK_COLUMNS, linkTsvRow, type LinkRecord } from '../../../common/src/integrity/chain';
import { LINK_SELECT, linkFromRow, type LinkRow } from '../../../common/src/integrity/link-rows';
import type { ChainState, SealedBatch } from './chain-state';

/** Where one pipeline's integrity rows live, and which chain they belong to. */
export interface IntegrityTarget {
  database: string;
  /** `<table>_integrity`. */
  integrityTable: string;
  /** `<table>_checkpoints`. */
  checkpointTable: string;
  /** `namespace/name` of the pipeline (the `pipeline` column). */
  pipeline: string;
  /** The data table (the `table_name` column). */
  table: string;
}

/** Backticked `db`.`table` of the integrity or checkpoint table. */
export function qualified(target: IntegrityTarget, which: 'integrityTable' | 'checkpointTable'): string {
  return `${quoteIdentifier(target.database)}.${quoteIdentifier(target[which])}`;
}

/**
 * The `limit` most recent links of one partition of this pipeline's chain (newest first). The
 * integrity table is ordered by (partition, first_offset), so this reads only the tail.
 */
export async function loadRecentLinks(
  client: ClickHouseClient,
  target: IntegrityTarget,
  partition: number,
  limit = 256,
): Promise<LinkRecord[]> {
  const rs = await client.query({
    query:
      `SELECT ${LINK_SELECT} FROM ${qualified(target, 'integrityTable')} ` +
      'WHERE `partition` = {partition:UInt32} AND pipeline = {pipeline:String} AND table_name = {table:String} ' +
      'ORDER BY first_offset DESC LIMIT {limit:UInt32}',
    query_params: { partition, pipeline: target.pipeline, table: target.table, limit },
    format: 'JSONEachRow',
  });
  const rows = await rs.json<LinkRow>();
  return rows.map(linkFromRow);
}

/**
 * Restores the chain state of newly assigned partitions from ClickHouse (at start and after every
 * rebalance, before the first batch of each partition is sealed).
 */
export async function restorePartitions(
  client: ClickHouseClient,
  state: ChainState,
  target: IntegrityTarget,
  partitions: Iterable<number>,
): Promise<void> {
  for (const p of partitions) state.restore(p, await loadRecentLinks(client, target, p));
}

/**
 * Inserts a sealed batch's link with its deduplication token (a retry or a replayed batch is
 * stored once). Does nothing for an empty batch. Call after the data insert succeeded, before the
 * offsets are committed.
 */
export async function insertLink(
  client: ClickHouseClient,
  target: IntegrityTarget,
  sealed: SealedBatch,
): Promise<void> {
  if (!sealed.record) return;
  await client.insert({
    table: qualified(target, 'integrityTable'),
    columns: LINK_COLUMNS.map((c) => quoteIdentifier(c)) as [string, ...string[]],
    values: Readable.from([Buffer.from(linkTsvRow(sealed.record), 'utf8')], { objectMode: false }),
    format: 'TabSeparated',
    clickhouse_settings: { insert_deduplication_token: sealed.token, insert_deduplicate: 1 },
  });
}
