/**
 * The read side of `<table>_integrity` rows, shared by the worker (chain recovery) and the
 * operator (verification): which columns to select and how a row becomes a LinkRecord.
 */
import type { LinkRecord } from './chain';

/** SELECT list turning an integrity row into LinkRecord fields (timestamps as epoch ms). */
export const LINK_SELECT =
  'pipeline, table_name, `partition`, first_offset, last_offset, row_count, toUnixTimestamp64Milli(min_ts) AS min_ts_ms, ' +
  'toUnixTimestamp64Milli(max_ts) AS max_ts_ms, batch_digest, prev_link, link, toUnixTimestamp64Milli(inserted_at) AS inserted_at_ms';

/** A row of LINK_SELECT in JSONEachRow form (64-bit integers arrive as strings). */
export interface LinkRow {
  pipeline: string;
  table_name: string;
  partition: number | string;
  first_offset: number | string;
  last_offset: number | string;
  row_count: number | string;
  min_ts_ms: number | string;
  max_ts_ms: number | string;
  batch_digest: string;
  prev_link: string;
  link: string;
  inserted_at_ms: number | string;
}

/** Converts a LINK_SELECT row into a LinkRecord. */
export function linkFromRow(r: LinkRow): LinkRecord {
  return {
    pipeline: r.pipeline,
    table: r.table_name,
    partition: Number(r.partition),
    firstOffset: Number(r.first_offset),
    lastOffset: Number(r.last_offset),
    rowCount: Number(r.row_count),
    minTsMs: Number(r.min_ts_ms),
    maxTsMs: Number(r.max_ts_ms),
    batchDigest: r.batch_digest,
    prevLink: r.prev_link,
    link: r.link,
    insertedAtMs: Number(r.inserted_at_ms),
  };
}
