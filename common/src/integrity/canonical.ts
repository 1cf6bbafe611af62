/**
 * The canonical form of a batch, computed from the exact TabSeparated payload the worker inserts
 * (docs/compliance.md, "Canonical form"). Each row becomes the written columns in INSERT order,
 * tab-separated and newline-terminated, with every value in a form both the worker and
 * `logpipeline verify` (which renders it in SQL from what ClickHouse stored) produce identically:
 *   DateTime64(p)  -> epoch milliseconds        DateTime -> epoch seconds
 * (the time column's range, BatchSummary.minTsMs/maxTsMs, is epoch ms for both: link v2, chain.ts)
 *   IPv4/IPv6      -> 32 lowercase hex digits of the 16-byte (IPv4-mapped) address
 *   [U]IntN        -> decimal without leading zeros
 *   String, Enum   -> TSV-escaped bytes (only `\\`, `\t`, `\n`, `\r`), as the encoder writes them
 *   NULL           -> `\N`
 * The batch digest is SHA-256 over the concatenated canonical rows, which must arrive ordered by
 * (kafka_offset, kafka_line) — the order the encoder writes them in. A table without a line column
 * cannot give back the order of one packed message's rows, so there (rowOrderFor() = 'offset,row')
 * the rows sharing an offset are hashed sorted by their canonical bytes (without the newline), the
 * order `ORDER BY offset, <canonical row>` gives in SQL.
 *
 * Cost: one pass over the payload with native scans for separators, canonical bytes collected in a
 * reused scratch buffer and hashed in large blocks (bench/integrity-digest.ts measures it).
 */
import { createHash, type Hash } from 'node:crypto';
import { writeCanonicalIp } from './canonical-ip';
import { OffsetGroups } from './canonical-groups';
import type { RowBinaryCanonical } from './canonical-rowbinary';
import { compileOps, OP_COPY, OP_IP, OP_TIME64, type CanonicalColumn, type Op } from './canonical-ops';

/** What a finished batch digest reports: hex SHA-256, row count and the time column's range. */
export interface BatchSummary {
  digest: string;
  rows: number;
  /** Smallest / largest value of the time column in epoch ms (0 for an empty batch). */
  minTsMs: number;
  maxTsMs: number;
}

const BACKSLASH_N = Buffer.from('\\N', 'latin1');

/**
 * Computes batch digests from TabSeparated payloads. One instance per worker (or per partition
 * handler); `reset()` starts a batch, `addTsv()` feeds whole rows, `finish()` returns the summary.
 * Not re-entrant: a batch must finish before the next one starts on the same instance.
 */
export class BatchDigester {
  private readonly ops: Op[];
  private out: Buffer;
  private pos = 0;
  private hash: Hash = createHash('sha256');
  private rows = 0;
  private minTs = Number.POSITIVE_INFINITY;
  private maxTs = Number.NEGATIVE_INFINITY;
  private readonly perRowSlack: number;
  /** Set when rows of one offset are hashed sorted (no line column); undefined: encoder order. */
  private readonly groups: OffsetGroups | undefined;

  /**
   * Throws RangeError when a column type has no canonical form or the time column is unusable.
   * `sortByOffset` names the offset column whose equal-valued rows are hashed in canonical byte
   * order (set it when the table has no line column: see rowOrderFor()).
   */
  constructor(
    columns: readonly CanonicalColumn[],
    options: { timeColumn?: string; scratchBytes?: number; sortByOffset?: string } = {},
  ) {
    this.ops = compileOps(columns, options.timeColumn ?? 'ts');
    if (options.sortByOffset !== undefined) {
      const field = columns.findIndex((c) => c.name === options.sortByOffset);
      if (field < 0) throw new RangeError(`offset column ${options.sortByOffset} is not an INSERT column`);
      this.groups = new OffsetGroups(field);
    }
    this.out = Buffer.allocUnsafe(options.scratchBytes ?? 1 << 20);
    // Canonical values can be longer than their TSV text (IPs: up to 32 hex digits, times: +3 digits).
    this.perRowSlack =
      16 + this.ops.reduce((n, o) => n + (o.kind === OP_IP ? 34 : o.kind === OP_COPY ? 0 : 24), 0);
  }

  /** Starts a new batch. */
  reset(): void {
    this.hash = createHash('sha256');
    this.pos = 0;
    this.groups?.reset();
    this.rows = 0;
    this.minTs = Number.POSITIVE_INFINITY;
    this.maxTs = Number.NEGATIVE_INFINITY;
  }

  /**
   * Feeds the whole TSV rows in [start, end) (each newline-terminated); returns null, or an error
   * naming the row and column when the payload is not what the encoder writes (the batch's digest
   * is then meaningless and the caller must not seal it).
   */
  addTsv(tsv: Buffer, start = 0, end = tsv.length): string | null {
    let p = start;
    while (p < end) {
      const rowEnd = tsv.indexOf(10, p);
      if (rowEnd < 0 || rowEnd >= end) return `row ${this.rows}: not newline-terminated`;
      const need = rowEnd - p + 1 + this.perRowSlack;
      if (this.pos + need > this.out.length) this.flush(need);
      const rowStart = this.pos;
      const err = this.row(tsv, p, rowEnd);
      if (err !== null) return `row ${this.rows}: ${err}`;
      this.endRow(rowStart);
      p = rowEnd + 1;
    }
    return null;
  }

  /**
   * Feeds the whole RowBinary rows in [start, end), canonicalised by `reader` (built for the same
   * columns and time column): the same canonical rows, digest and time range as addTsv() gives
   * their TabSeparated text, without rendering that text. Returns null, or an error naming the row.
   */
  addRowBinary(body: Buffer, reader: RowBinaryCanonical, start = 0, end = body.length): string | null {
    reader.begin(body);
    // The writer reports where the offset field lands, so sorted groups need not scan for it.
    reader.mark = this.groups ? this.groups.field : -1;
    let p = start;
    while (p < end) {
      const rowEnd = reader.rowEnd(body, p, end);
      if (rowEnd < 0) return `row ${this.rows}: ${reader.error}`;
      const need = 2 * (rowEnd - p) + reader.slack;
      if (this.pos + need > this.out.length) this.flush(need);
      const rowStart = this.pos;
      const next = reader.write(body, p, this.out, this.pos);
      if (next < 0) return `row ${this.rows}: ${reader.error}`;
      this.pos = next;
      const ts = reader.timeMs;
      if (ts === ts) this.track(ts);
      this.endRow(rowStart, reader.markStart, reader.markEnd);
      p = rowEnd;
    }
    return null;
  }

  /** Completes the canonical row written at [rowStart, pos). */
  private endRow(rowStart: number, fieldStart?: number, fieldEnd?: number): void {
    if (this.groups) {
      // Sorting mode: the row joins its offset's group instead of the scratch stream.
      this.groups.add(this.hash, this.out, rowStart, this.pos, fieldStart, fieldEnd);
      this.pos = rowStart;
    }
    this.rows++;
  }

  /** Hashes what is buffered and returns the batch summary (call reset() before reusing). */
  finish(): BatchSummary {
    this.groups?.flush(this.hash);
    if (this.pos > 0) this.hash.update(this.out.subarray(0, this.pos));
    this.pos = 0;
    const empty = this.rows === 0;
    return {
      digest: this.hash.digest('hex'),
      rows: this.rows,
      minTsMs: empty ? 0 : this.minTs,
      maxTsMs: empty ? 0 : this.maxTs,
    };
  }

  private flush(need: number): void {
    if (this.pos > 0) this.hash.update(this.out.subarray(0, this.pos));
    this.pos = 0;
    if (need > this.out.length) this.out = Buffer.allocUnsafe(need * 2);
  }

  /** Canonicalizes one row [p, rowEnd) (rowEnd is its newline); returns an error or null. */
  private row(b: Buffer, p: number, rowEnd: number): string | null {
    const ops = this.ops;
    const last = ops.length - 1;
    for (let k = 0; k <= last; k++) {
      const op = ops[k];
      let fe = rowEnd;
      if (k < last && op.kind === OP_COPY) {
        // Copy runs may hold long strings: native scans find their separators.
        fe = p - 1;
        for (let c = 0; c < op.count; c++) {
          fe = b.indexOf(9, fe + 1);
          if (fe < 0 || fe > rowEnd) return `column ${op.column}: too few columns`;
        }
      } else if (k < last) {
        // Typed values are short: a JS scan is cheaper than a native call.
        fe = p;
        while (fe < rowEnd && b[fe] !== 9) fe++;
        if (fe >= rowEnd) return `column ${op.column}: too few columns`;
      }
      if (op.kind === OP_COPY) {
        // The separator (or the row's newline) is copied with the span.
        this.copy(b, p, fe + 1);
        p = fe + 1;
        continue;
      }
      const err = this.typed(op, b, p, fe);
      if (err !== null) return `column ${op.column}: ${err}`;
      this.out[this.pos++] = k < last ? 9 : 10;
      p = fe + 1;
    }
    return null;
  }

  private typed(op: Op, b: Buffer, s: number, e: number): string | null {
    if (op.nullable && e - s === 2 && b[s] === 92 && b[s + 1] === 78) {
      this.copy(BACKSLASH_N, 0, 2);
      return null;
    }
    if (op.kind === OP_IP) {
      const next = writeCanonicalIp(b, s, e, this.out, this.pos);
      if (next < 0) return 'not an IP address';
      this.pos = next;
      return null;
    }
    const value = op.kind === OP_TIME64 ? parseEpochMs(b, s, e) : -1;
    if (op.kind === OP_TIME64) {
      if (value < 0) return 'not an epoch time';
      this.decimal(value);
    } else if (!this.integer(b, s, e)) {
      return 'not an integer';
    }
    // DateTime text is whole seconds; parseEpochMs gives ms for both (link v1 multiplied by 1000 again).
    if (op.isTime) this.track(op.kind === OP_TIME64 ? value : parseEpochMs(b, s, e));
    return null;
  }

  private track(ms: number): void {
    if (ms < this.minTs) this.minTs = ms;
    if (ms > this.maxTs) this.maxTs = ms;
  }

  private copy(src: Buffer, s: number, e: number): void {
    const n = e - s;
    if (n >= 48) {
      src.copy(this.out, this.pos, s, e);
      this.pos += n;
      return;
    }
    const out = this.out;
    let o = this.pos;
    for (let i = s; i < e; i++) out[o++] = src[i];
    this.pos = o;
  }

  /** Writes a non-negative safe integer in decimal. */
  private decimal(n: number): void {
    const out = this.out;
    let len = 1;
    for (let t = n; t >= 10; t = Math.floor(t / 10)) len++;
    let o = this.pos + len;
    this.pos = o;
    do {
      const q = Math.floor(n / 10);
      out[--o] = 48 + (n - q * 10);
      n = q;
    } while (n > 0);
  }

  /** Copies a decimal integer without leading zeros (`-0` -> `0`); false when not an integer. */
  private integer(b: Buffer, s: number, e: number): boolean {
    let i = s;
    const negative = b[i] === 45;
    if (negative) i++;
    if (i >= e) return false;
    while (i < e - 1 && b[i] === 48) i++;
    for (let j = i; j < e; j++) if (b[j] < 48 || b[j] > 57) return false;
    if (negative && !(e - i === 1 && b[i] === 48)) this.out[this.pos++] = 45;
    this.copy(b, i, e);
    return true;
  }
}

/** `seconds[.fraction]` -> epoch ms (fraction beyond ms dropped, as toUnixTimestamp64Milli does); -1 when malformed. */
export function parseEpochMs(b: Uint8Array, s: number, e: number): number {
  let sec = 0;
  let i = s;
  while (i < e && b[i] >= 48 && b[i] <= 57) sec = sec * 10 + (b[i++] - 48);
  if (i === s || i - s > 15) return -1;
  let frac = 0;
  if (i < e) {
    if (b[i] !== 46) return -1;
    i++;
    let digits = 0;
    for (; i < e; i++, digits++) {
      const d = b[i] - 48;
      if (d < 0 || d > 9) return -1;
      if (digits < 3) frac = frac * 10 + d;
    }
    if (digits === 0) return -1;
    for (; digits < 3; digits++) frac *= 10;
  }
  return sec * 1000 + frac;
}

/** Digest of a whole TSV payload in one call (tests and tools); throws on a malformed payload. */
export function digestTsv(
  columns: readonly CanonicalColumn[],
  tsv: Buffer,
  timeColumn = 'ts',
  sortByOffset?: string,
): BatchSummary {
  const d = new BatchDigester(columns, { timeColumn, sortByOffset });
  const err = d.addTsv(tsv);
  if (err !== null) throw new RangeError(err);
  return d.finish();
}
