/**
 * The row order of tables without a line column (docs/compliance.md, "Canonical form"): the rows
 * of one Kafka message share an offset and their stored order is lost, so the digest takes them
 * sorted by their canonical bytes (unsigned, without the row's LF) — the order ClickHouse gives for
 * `ORDER BY offset, <canonical row>`. Rows arrive grouped by offset (the encoder writes messages in
 * order); each group is hashed when the next offset starts, or at the end of the batch.
 */
import type { Hash } from 'node:crypto';

const NEWLINE = Buffer.from('\n', 'latin1');

/** Collects the canonical rows of the current offset and hashes them sorted. */
export class OffsetGroups {
  private rows: Buffer[] = [];
  private offset: Buffer | undefined;

  /** `field` is the offset column's index among the canonical (tab-separated) fields. */
  constructor(private readonly field: number) {}

  /** Forgets any pending group (a new batch). */
  reset(): void {
    this.rows = [];
    this.offset = undefined;
  }

  /** Adds the canonical row at [s, e) of `buf` (LF-terminated); hashes the previous group when the offset changes. */
  add(hash: Hash, buf: Buffer, s: number, e: number): void {
    const row = Buffer.from(buf.subarray(s, e - 1));
    const offset = fieldOf(row, this.field);
    if (this.offset !== undefined && !offset.equals(this.offset)) this.flush(hash);
    this.offset = offset;
    this.rows.push(row);
  }

  /** Hashes the pending group's rows in canonical byte order, each followed by LF. */
  flush(hash: Hash): void {
    if (this.rows.length > 1) this.rows.sort(Buffer.compare);
    for (const r of this.rows) hash.update(r).update(NEWLINE);
    this.rows = [];
    this.offset = undefined;
  }
}

/** The `k`-th tab-separated field of a canonical row (strings are escaped: a TAB always separates). */
function fieldOf(row: Buffer, k: number): Buffer {
  let p = 0;
  for (let i = 0; i < k; i++) p = row.indexOf(9, p) + 1;
  const e = row.indexOf(9, p);
  return row.subarray(p, e < 0 ? row.length : e);
}
