/**
 * The row pass of `verify`: merges the canonical row stream (ordered by partition, offset, line)
 * with the link stream (ordered by partition, first_offset), recomputes each batch's digest and row
 * count, and classifies every mismatch by batch range. Rows are processed synchronously block by
 * block; links are pulled asynchronously only as far as the current block needs, so memory stays
 * bounded by one block of rows plus the links it spans.
 */
import { createHash, type Hash } from 'node:crypto';
import type { LinkRecord } from '../../../common/src/integrity/chain';
import type { LineBlock } from './line-stream';
import type { LinkQueue } from './verify-link-queue';
import type { FindingSink } from './verify-report';

const EMPTY_DIGEST = createHash('sha256').digest('hex');

/** Row-pass counters. */
export interface RowPassStats {
  rows: number;
  bytes: number;
  batchesVerified: number;
  /** Of those, batches whose digest matched another column list than the first (see projections). */
  batchesVerifiedWithOtherColumns: number;
}

/**
 * Column lists to try per batch, as indexes into the streamed row's fields (the first is the
 * primary). A table gains columns over its life (ADD COLUMN appends, e.g. sender_ip): each batch
 * was hashed over the columns its worker wrote then, so the row stream carries every stored column
 * and each batch must match one of the lists. A match under any list is a SHA-256 match over
 * exactly those columns; columns added after a batch was written are not covered for it.
 */
export type ColumnProjections = ReadonlyArray<readonly number[]>;

/** Hashes of one batch, one per projection of the row's tab-separated fields. */
class ProjectedHashes {
  readonly hashes: Hash[];
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];

  constructor(private readonly projections: ColumnProjections) {
    this.hashes = projections.map(() => createHash('sha256'));
  }

  /** Adds one canonical row `buf[s, e)` (newline-terminated) under every projection. */
  update(buf: Buffer, s: number, e: number): void {
    let n = 0;
    let f = s;
    for (let i = s; i < e; i++) {
      const b = buf[i];
      if (b !== 9 && b !== 10) continue;
      this.starts[n] = f;
      this.ends[n++] = i;
      f = i + 1;
    }
    for (let k = 0; k < this.projections.length; k++) {
      const h = this.hashes[k];
      const idx = this.projections[k];
      for (let j = 0; j < idx.length; j++) {
        const x = idx[j];
        if (x < n) h.update(buf.subarray(this.starts[x], this.ends[x]));
        h.update(j === idx.length - 1 ? NEWLINE : TAB);
      }
    }
  }
}

const TAB = Buffer.from('\t');
const NEWLINE = Buffer.from('\n');

/** Verifies rows against links; feed() blocks in order, then finish(). */
export class RowChecker {
  readonly stats: RowPassStats = {
    rows: 0,
    bytes: 0,
    batchesVerified: 0,
    batchesVerifiedWithOtherColumns: 0,
  };
  private cur: LinkRecord | undefined;
  private hash: Hash | undefined;
  private projected: ProjectedHashes | undefined;
  private count = 0;
  private extra: { partition: number; first: number; last: number; rows: number } | undefined;

  /** `horizonMs`: rows older than this may have been removed by TTL (undefined: no retention known). */
  constructor(
    private readonly links: LinkQueue,
    private readonly sink: FindingSink,
    private readonly horizonMs: number | undefined,
    /** Several column lists (see ColumnProjections); absent: the row is hashed as streamed. */
    private readonly projections?: ColumnProjections,
  ) {}

  /** Verifies one block of whole lines `partition\toffset\tcanonical-row\n`. */
  async feed(block: LineBlock): Promise<void> {
    const { buf, start, end } = block;
    const lastStart = buf.lastIndexOf(10, end - 2) + 1;
    const lastKey = parseKey(buf, Math.max(lastStart, start), end);
    await this.links.fillThrough(lastKey.partition, lastKey.offset);
    let p = start;
    while (p < end) {
      const nl = buf.indexOf(10, p);
      const key = parseKey(buf, p, nl + 1);
      this.row(key.partition, key.offset, buf, key.rowStart, nl + 1);
      p = nl + 1;
    }
    this.stats.bytes += end - start;
  }

  private row(partition: number, offset: number, buf: Buffer, s: number, e: number): void {
    this.stats.rows++;
    let cur = this.cur ?? this.next();
    while (cur && (cur.partition < partition || (cur.partition === partition && cur.lastOffset < offset))) {
      this.finalize(cur);
      cur = this.next();
    }
    if (cur && cur.partition === partition && cur.firstOffset <= offset && offset <= cur.lastOffset) {
      this.flushExtra();
      if (this.projections) {
        if (!this.projected) this.projected = new ProjectedHashes(this.projections);
        this.projected.update(buf, s, e);
      } else {
        if (!this.hash) this.hash = createHash('sha256');
        this.hash.update(buf.subarray(s, e));
      }
      this.count++;
      return;
    }
    const x = this.extra;
    if (x && x.partition === partition) {
      x.last = offset;
      x.rows++;
    } else {
      this.flushExtra();
      this.extra = { partition, first: offset, last: offset, rows: 1 };
    }
  }

  private next(): LinkRecord | undefined {
    this.cur = this.links.shift();
    this.hash = undefined;
    this.projected = undefined;
    this.count = 0;
    return this.cur;
  }

  private flushExtra(): void {
    const x = this.extra;
    if (!x) return;
    this.extra = undefined;
    this.sink.finding({
      kind: 'uncovered-rows',
      partition: x.partition,
      firstOffset: x.first,
      lastOffset: x.last,
      foundRows: x.rows,
      detail:
        'rows whose offsets no integrity link covers (inserted outside the pipeline, or their link was removed)',
    });
  }

  /** Finalises the open batch and every remaining link (those have no rows in the window). */
  async finish(): Promise<void> {
    this.flushExtra();
    if (this.cur) this.finalize(this.cur);
    for (;;) {
      if (!(await this.links.fillOne())) break;
      const l = this.next();
      if (l) this.finalize(l);
    }
    this.cur = undefined;
  }

  private finalize(l: LinkRecord): void {
    const x = this.extra;
    // Report in offset order: uncovered rows seen before this batch's range come first.
    if (x && (x.partition < l.partition || (x.partition === l.partition && x.last < l.firstOffset)))
      this.flushExtra();
    const found = this.count;
    const digests = this.projected
      ? this.projected.hashes.map((h) => h.digest('hex'))
      : [this.hash ? this.hash.digest('hex') : EMPTY_DIGEST];
    this.hash = undefined;
    this.projected = undefined;
    this.count = 0;
    this.cur = undefined;
    const matched = digests.indexOf(l.batchDigest);
    if (found === l.rowCount && matched >= 0) {
      this.stats.batchesVerified++;
      if (matched > 0) this.stats.batchesVerifiedWithOtherColumns++;
      return;
    }
    const base = {
      partition: l.partition,
      firstOffset: l.firstOffset,
      lastOffset: l.lastOffset,
      expectedRows: l.rowCount,
      foundRows: found,
    };
    const h = this.horizonMs;
    if (h !== undefined && l.minTsMs < h && found < l.rowCount) {
      const whole = l.maxTsMs < h;
      this.sink.notice({
        ...base,
        kind: 'expired',
        detail: whole
          ? 'batch is past the retention horizon; its rows were removed by TTL'
          : 'batch straddles the retention horizon; rows older than it were removed by TTL (digest not checkable)',
      });
    } else if (found === 0) {
      this.sink.finding({ ...base, kind: 'deleted', detail: 'all rows of the batch are missing' });
    } else if (found < l.rowCount) {
      this.sink.finding({ ...base, kind: 'deleted', detail: 'rows of the batch are missing' });
    } else if (found > l.rowCount) {
      this.sink.finding({
        ...base,
        kind: 'extra-rows',
        detail: 'the batch holds more rows than its link counts',
      });
    } else {
      this.sink.finding({
        ...base,
        kind: 'modified',
        detail: 'row count matches but the batch digest differs: rows were altered',
      });
    }
  }
}

/** Parses `partition\toffset\t` at [s, e); throws with the line text when it is not a row (e.g. a server error). */
function parseKey(
  buf: Buffer,
  s: number,
  e: number,
): { partition: number; offset: number; rowStart: number } {
  let i = s;
  let partition = 0;
  while (i < e && buf[i] >= 48 && buf[i] <= 57) partition = partition * 10 + (buf[i++] - 48);
  const mid = i;
  if (i === s || buf[i++] !== 9) throw streamError(buf, s, e);
  let offset = 0;
  while (i < e && buf[i] >= 48 && buf[i] <= 57) offset = offset * 10 + (buf[i++] - 48);
  if (i === mid + 1 || buf[i++] !== 9) throw streamError(buf, s, e);
  return { partition, offset, rowStart: i };
}

function streamError(buf: Buffer, s: number, e: number): Error {
  return new Error(
    `unexpected line in the row stream (server error?): ${buf.toString('utf8', s, Math.min(e, s + 500)).trim()}`,
  );
}
