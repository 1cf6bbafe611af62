/**
 * The worker's side of the hash chain: per owned Kafka partition, the chain head and the most
 * recent links, and `seal()` which turns one inserted batch (its exact payload, TSV or RowBinary:
 * the same canonical rows either way) into the next link. Pure (no I/O): link-store.ts reads the state back from ClickHouse and inserts links.
 *
 * Replays are the normal case after a crash or a rebalance: the cut journal makes the next owner
 * re-cut the same offset ranges with the same ingest time, so a batch whose range already has a
 * link gets that stored link back (its re-insert is deduplicated) instead of a new one chained
 * after it — which would fork the chain.
 */
import { BatchDigester } from '../../../common/src/integrity/canonical';
import { RowBinaryCanonical } from '../../../common/src/integrity/canonical-rowbinary';
import { rowOrderFor, type CanonicalColumn } from '../../../common/src/integrity/canonical-ops';
import type { ChainHead } from '../../../common/src/integrity/checkpoint';
import { GENESIS_LINK, linkToken, makeLink, type LinkRecord } from '../../../common/src/integrity/chain';

/** Static settings of one pipeline's chain. */
export interface ChainOptions {
  /** `namespace/name` of the LogPipeline. */
  pipeline: string;
  /** The data table's name (as recorded in the integrity table's table_name). */
  table: string;
  /** The INSERT columns in order (the worker config's clickhouse.columns). */
  columns: readonly CanonicalColumn[];
  /** The time column whose range each link records. Default `ts`. */
  timeColumn?: string;
  /** Links remembered per partition for recognising replays. Default 256. */
  recentLinks?: number;
  /** Offset and line columns (defaults kafka_offset, kafka_line): without the line column, rows of one offset are hashed sorted. */
  offsetColumn?: string;
  lineColumn?: string;
}

/** One batch to seal: where it came from and the TSV rows actually inserted. */
export interface SealInput {
  partition: number;
  firstOffset: number;
  lastOffset: number;
  /** The batch's ingest time fixed at cut (journaled), in epoch ms. */
  insertedAtMs: number;
  /** The data insert's deduplication token (the link's token is derived from it). */
  batchToken: string;
  /** Payload of the data insert (TSV text, or RowBinary rows when `format` says so); [start, end) defaults to all of it. */
  tsv: Buffer;
  /** The payload's format (default TabSeparated). */
  format?: 'TabSeparated' | 'RowBinary';
  start?: number;
  end?: number;
  /**
   * Row indices (0-based, ascending) of the payload that ClickHouse rejected and the worker
   * dead-lettered: they are not in the table, so they are not in the digest either.
   */
  skipRows?: readonly number[];
}

/**
 * A sealed batch. status: `new` (a fresh link), `replayed` (the range already had this link),
 * `conflict` (the range had a link with a different digest: the stored link is kept and returned),
 * `overlap` (the range overlaps an earlier link without matching it: chained anyway; verify will
 * report it), `empty` (no rows: no link is written).
 */
export interface SealedBatch {
  status: 'new' | 'replayed' | 'conflict' | 'overlap' | 'empty';
  record: LinkRecord | null;
  /** insert_deduplication_token for the link insert. */
  token: string;
}

interface PartitionState {
  head: LinkRecord | null;
  recent: Map<string, LinkRecord>;
}

const rangeKey = (first: number, last: number): string => `${first}-${last}`;

/** Chain heads and recent links of the partitions this worker owns. */
export class ChainState {
  private readonly partitions = new Map<number, PartitionState>();
  private readonly digester: BatchDigester;
  private readonly keep: number;
  /** Canonicalises RowBinary payloads directly (built on the first one). */
  private binary: RowBinaryCanonical | undefined;

  /** Throws RangeError when the columns have no canonical form (a configuration error). */
  constructor(readonly options: ChainOptions) {
    const offsetColumn = options.offsetColumn ?? 'kafka_offset';
    const sorted =
      rowOrderFor(options.columns, options.lineColumn) === 'offset,row' &&
      options.columns.some((c) => c.name === offsetColumn);
    this.digester = new BatchDigester(options.columns, {
      timeColumn: options.timeColumn ?? 'ts',
      sortByOffset: sorted ? offsetColumn : undefined,
    });
    this.keep = options.recentLinks ?? 256;
  }

  /** Installs a partition's state from its stored links (any order); an empty list starts at genesis. */
  restore(partition: number, links: readonly LinkRecord[]): void {
    const sorted = [...links].sort((a, b) => a.lastOffset - b.lastOffset).slice(-this.keep);
    const recent = new Map<string, LinkRecord>();
    for (const l of sorted) recent.set(rangeKey(l.firstOffset, l.lastOffset), l);
    this.partitions.set(partition, { head: sorted.length > 0 ? sorted[sorted.length - 1] : null, recent });
  }

  /** Forgets revoked partitions (their next owner restores them from ClickHouse). */
  forget(partitions: Iterable<number>): void {
    for (const p of partitions) this.partitions.delete(p);
  }

  /** True once `restore()` ran for the partition. */
  owns(partition: number): boolean {
    return this.partitions.has(partition);
  }

  /** Current heads of every owned partition that has one, by partition. */
  heads(): ChainHead[] {
    const out: ChainHead[] = [];
    for (const [partition, st] of this.partitions) {
      if (st.head) out.push({ partition, lastOffset: st.head.lastOffset, link: st.head.link });
    }
    return out.sort((a, b) => a.partition - b.partition);
  }

  /**
   * Digests the batch and returns its link (see SealedBatch); returns an error string when the
   * partition was not restored or the payload is malformed. Call once per batch, in cut order
   * per partition, before or after the data insert but before inserting the link.
   */
  seal(input: SealInput): SealedBatch | string {
    const st = this.partitions.get(input.partition);
    if (!st) return `partition ${input.partition} has no restored chain state`;
    const d = this.digester;
    d.reset();
    const err =
      input.format === 'RowBinary'
        ? feed(
            d,
            input,
            (this.binary ??= new RowBinaryCanonical(this.options.columns, this.options.timeColumn)),
          )
        : feed(d, input);
    if (err !== null) return err;
    const sum = d.finish();
    const token = linkToken(input.batchToken);
    if (sum.rows === 0) return { status: 'empty', record: null, token };
    const existing = st.recent.get(rangeKey(input.firstOffset, input.lastOffset));
    if (existing) {
      const same =
        existing.batchDigest === sum.digest &&
        existing.rowCount === sum.rows &&
        existing.insertedAtMs === input.insertedAtMs;
      return { status: same ? 'replayed' : 'conflict', record: existing, token };
    }
    const status = st.head && input.firstOffset <= st.head.lastOffset ? 'overlap' : 'new';
    const record = makeLink({
      pipeline: this.options.pipeline,
      table: this.options.table,
      partition: input.partition,
      firstOffset: input.firstOffset,
      lastOffset: input.lastOffset,
      rowCount: sum.rows,
      minTsMs: sum.minTsMs,
      maxTsMs: sum.maxTsMs,
      batchDigest: sum.digest,
      prevLink: st.head ? st.head.link : GENESIS_LINK,
      insertedAtMs: input.insertedAtMs,
    });
    st.head = record;
    st.recent.set(rangeKey(record.firstOffset, record.lastOffset), record);
    if (st.recent.size > this.keep) st.recent.delete(st.recent.keys().next().value as string);
    return { status, record, token };
  }
}

/** Feeds the payload to the digester (RowBinary rows when `binary` is given), leaving out skipped rows. */
function feed(d: BatchDigester, input: SealInput, binary?: RowBinaryCanonical): string | null {
  const start = input.start ?? 0;
  const end = input.end ?? input.tsv.length;
  const skip = input.skipRows ?? [];
  const body = input.tsv;
  const add = (from: number, to: number) =>
    binary ? d.addRowBinary(body, binary, from, to) : d.addTsv(body, from, to);
  if (skip.length === 0) return add(start, end);
  let from = start;
  let row = 0;
  let k = 0;
  for (let p = start; p < end && k < skip.length; row++) {
    const next = binary ? binary.rowEnd(body, p, end) : body.indexOf(10, p) + 1;
    if (next <= 0 || next > end) return `row ${row}: ${binary ? binary.error : 'not newline-terminated'}`;
    if (row === skip[k]) {
      const err = add(from, p);
      if (err !== null) return err;
      from = next;
      k++;
    }
    p = next;
  }
  if (k < skip.length) return `skipRows names row ${skip[k]} beyond the payload`;
  return add(from, end);
}
