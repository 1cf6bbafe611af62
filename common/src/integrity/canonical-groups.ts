/**
 * The row order of tables without a line column (docs/compliance.md, "Canonical form"): the rows
 * of one Kafka message share an offset and their stored order is lost, so the digest takes them
 * sorted by their canonical bytes (unsigned, without the row's LF) — the order ClickHouse gives for
 * `ORDER BY offset, <canonical row>`. Rows arrive grouped by offset (the encoder writes messages in
 * order); each group is hashed when the next offset starts, or at the end of the batch.
 * The group's rows are kept back to back in one reused buffer and hashed in one update (no
 * per-row copies or hash calls); the bytes hashed are the sorted rows, each followed by LF.
 */
import type { Hash } from 'node:crypto';

/** Collects the canonical rows of the current offset and hashes them sorted. */
export class OffsetGroups {
  /** The group's rows (without LF), back to back; row i is [starts[i], ends[i]). */
  private rows = Buffer.allocUnsafe(1 << 16);
  private used = 0;
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  /** The offset field of the group, within `rows`. */
  private offsetStart = 0;
  private offsetEnd = 0;
  private sorted = Buffer.allocUnsafe(1 << 16);

  /** `field` is the offset column's index among the canonical (tab-separated) fields. */
  constructor(readonly field: number) {}

  /** Forgets any pending group (a new batch). */
  reset(): void {
    this.used = 0;
    this.starts.length = 0;
    this.ends.length = 0;
  }

  /**
   * Adds the canonical row at [s, e) of `buf` (LF-terminated); hashes the previous group when the
   * offset changes. [fieldStart, fieldEnd) is the offset field when the caller knows it.
   */
  add(hash: Hash, buf: Buffer, s: number, e: number, fieldStart?: number, fieldEnd?: number): void {
    const rowEnd = e - 1;
    const [fs, fe] =
      fieldStart !== undefined && fieldEnd !== undefined
        ? [fieldStart, fieldEnd]
        : fieldOf(buf, s, rowEnd, this.field);
    if (this.starts.length > 0 && buf.compare(this.rows, this.offsetStart, this.offsetEnd, fs, fe) !== 0)
      this.flush(hash);
    const len = rowEnd - s;
    if (this.used + len > this.rows.length) this.grow(len);
    const at = this.used;
    buf.copy(this.rows, at, s, rowEnd);
    this.used += len;
    if (this.starts.length === 0) {
      this.offsetStart = at + (fs - s);
      this.offsetEnd = at + (fe - s);
    }
    this.starts.push(at);
    this.ends.push(at + len);
  }

  /** Hashes the pending group's rows in canonical byte order, each followed by LF. */
  flush(hash: Hash): void {
    const n = this.starts.length;
    if (n === 0) return;
    const { rows, starts, ends } = this;
    const order = Array.from({ length: n }, (_, i) => i);
    if (n > 1) order.sort((a, b) => rows.compare(rows, starts[b], ends[b], starts[a], ends[a]));
    if (this.sorted.length < this.used + n) this.sorted = Buffer.allocUnsafe((this.used + n) * 2);
    let o = 0;
    for (const i of order) {
      o += rows.copy(this.sorted, o, starts[i], ends[i]);
      this.sorted[o++] = 10;
    }
    hash.update(this.sorted.subarray(0, o));
    this.reset();
  }

  private grow(len: number): void {
    const next = Buffer.allocUnsafe(Math.max(this.rows.length * 2, this.used + len));
    this.rows.copy(next, 0, 0, this.used);
    this.rows = next;
  }
}

/**
 * The `k`-th tab-separated field of the row [s, e) as [start, end) (strings are escaped: a TAB
 * always separates); a row with fewer fields wraps to its start, as the split it replaces did.
 */
function fieldOf(b: Buffer, s: number, e: number, k: number): [number, number] {
  let p = s;
  for (let i = 0; i < k; i++) {
    const t = tabAfter(b, p, e);
    p = t < 0 ? s : t + 1;
  }
  const t = tabAfter(b, p, e);
  return [p, t < 0 ? e : t];
}

/** Index of the next TAB in [p, e), or -1 (a native scan: the next TAB is at most one field away). */
function tabAfter(b: Buffer, p: number, e: number): number {
  if (p >= e) return -1;
  const t = b.indexOf(9, p);
  return t >= 0 && t < e ? t : -1;
}
