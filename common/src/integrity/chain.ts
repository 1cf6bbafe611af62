/**
 * Hash-chain links (docs/compliance.md, "Hash chain"). One link per inserted batch, chained per
 * (pipeline, Kafka partition):
 *
 *   link = SHA-256( "logpipeline-link-v2\n" + prev_link + "\n" + batch_digest + "\n" + pipeline + "\n"
 *                   + table + "\n" + partition + "\n" + first_offset + "\n" + last_offset + "\n"
 *                   + row_count + "\n" + min_ts_ms + "\n" + max_ts_ms + "\n" + inserted_at_ms + "\n" )
 *
 * all numbers in decimal, digests and links as 64 lowercase hex digits; the first link of a
 * partition has prev_link = GENESIS_LINK. Every field is fixed when the batch is cut (inserted_at
 * is the batch's journaled ingest time), so a retried or re-cut batch yields the identical link.
 *
 * Versions: v1 (`logpipeline-link-v1`) recorded the range of a `DateTime` (seconds) time column
 * as seconds × 10^6 instead of epoch ms; v2 records epoch ms for every time column type. The text
 * is otherwise the same. Links are written in the current version; stored v1 links still verify
 * with their own prefix; a v1 link after v2 ones (an older worker during a rolling upgrade) is
 * a verify notice, not a finding (docs/compliance.md).
 */
import { createHash } from 'node:crypto';
import { columnNames, INTEGRITY_COLUMNS } from '../tables';

/** prev_link of the first link of a partition's chain. */
export const GENESIS_LINK = '0'.repeat(64);

/** One row of `<table>_integrity` (numbers as JS numbers; timestamps as epoch ms). */
export interface LinkRecord {
  pipeline: string;
  table: string;
  partition: number;
  firstOffset: number;
  lastOffset: number;
  rowCount: number;
  minTsMs: number;
  maxTsMs: number;
  batchDigest: string;
  prevLink: string;
  link: string;
  insertedAtMs: number;
}

/** A version of the link text (see the file comment); 0 means no version matches. */
export type LinkVersion = 1 | 2;

/** The version new links are written in. */
export const LINK_VERSION: LinkVersion = 2;

/** The link hash of a record's fields in the given version (its own `link` field is ignored). */
export function computeLink(r: Omit<LinkRecord, 'link'>, version: LinkVersion = LINK_VERSION): string {
  const text =
    `logpipeline-link-v${version}\n${r.prevLink}\n${r.batchDigest}\n${r.pipeline}\n${r.table}\n${r.partition}\n` +
    `${r.firstOffset}\n${r.lastOffset}\n${r.rowCount}\n${r.minTsMs}\n${r.maxTsMs}\n${r.insertedAtMs}\n`;
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * The version whose hash of the record's fields equals its stored link (current first, then
 * older), or 0 when none does: the link or its fields were altered.
 */
export function linkVersionOf(r: LinkRecord): LinkVersion | 0 {
  if (computeLink(r, 2) === r.link) return 2;
  if (computeLink(r, 1) === r.link) return 1;
  return 0;
}

/** Fills in `link` for a record whose other fields are final. */
export function makeLink(r: Omit<LinkRecord, 'link'>): LinkRecord {
  return { ...r, link: computeLink(r) };
}

const HEX64 = /^[0-9a-f]{64}$/;

/** True when `text` is a 64-digit lowercase hex digest/link. */
export function isHexDigest(text: unknown): text is string {
  return typeof text === 'string' && HEX64.test(text);
}

/** How a link relates to the one before it in its partition. */
export type ContinuityProblem = null | 'prev-mismatch' | 'overlap' | 'partition-mismatch';

/** Checks that `next` continues `prev` (same partition, prev_link matches, offsets increase). */
export function checkContinuity(prev: LinkRecord, next: LinkRecord): ContinuityProblem {
  if (prev.partition !== next.partition || prev.pipeline !== next.pipeline || prev.table !== next.table)
    return 'partition-mismatch';
  if (next.prevLink !== prev.link) return 'prev-mismatch';
  if (next.firstOffset <= prev.lastOffset) return 'overlap';
  return null;
}

/** Deduplication token of a batch's link insert, derived from the data insert's token. */
export function linkToken(batchToken: string): string {
  return `${batchToken}#integrity`;
}

/** Milliseconds -> `seconds.mmm`, the DateTime64(3) text form used when inserting links. */
export function msText(ms: number): string {
  const sec = Math.floor(ms / 1000);
  return `${sec}.${String(ms - sec * 1000).padStart(3, '0')}`;
}

/** Column order of `<table>_integrity` inserts (common/src/tables.ts). */
export const LINK_COLUMNS: readonly string[] = columnNames(INTEGRITY_COLUMNS);

/** TSV-escapes a text value (backslash, tab, newline, carriage return). */
export function tsvText(text: string): string {
  return text.replace(/[\\\t\n\r]/g, (c) =>
    c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r',
  );
}

/** One TabSeparated row (newline-terminated) for LINK_COLUMNS. */
export function linkTsvRow(r: LinkRecord): string {
  return (
    [
      tsvText(r.pipeline),
      tsvText(r.table),
      r.partition,
      r.firstOffset,
      r.lastOffset,
      r.rowCount,
      msText(r.minTsMs),
      msText(r.maxTsMs),
      r.batchDigest,
      r.prevLink,
      r.link,
      msText(r.insertedAtMs),
    ].join('\t') + '\n'
  );
}
