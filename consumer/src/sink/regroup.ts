/**
 * Regrouping of a batch by partition key for INSERT. ClickHouse refuses an INSERT block spanning
 * more than 100 partitions (max_partitions_per_insert_block), and a shuffled history import puts
 * hundreds of days into every batch; cutting it into contiguous runs would make hundreds of tiny
 * inserts. Instead the rows are ordered by key (sorted keys, rows of one key in batch order) and
 * cut into ceil(distinctKeys / 100) groups of at most 100 keys. The plan and the bytes are a pure
 * function of the batch (rows and their keys), so a batch re-cut after a crash yields the same
 * groups, byte for byte, under the same per-group tokens. The batch body itself stays in
 * (offset, line) order: the integrity digest and the row -> line mapping of rejected rows read it.
 * Memory: two typed arrays of `rows` entries and one output buffer; no per-row objects.
 */
import { MAX_PARTITIONS_PER_INSERT } from '../encode/partition-key';

/** How the rows of a batch are regrouped: group g is order[groups[g], groups[g + 1]). */
export interface RegroupPlan {
  /** Row indices (into the batch body) in group order. */
  order: Uint32Array;
  /** Group boundaries into `order`: [0, ..., rows]. */
  groups: number[];
  /** The smallest and largest key of each group (for tokens and logs). */
  keyRanges: Array<[number, number]>;
}

/**
 * Plans the regrouping of rows [0, rows) by `keys`, or null when the rows span at most `limit`
 * distinct keys (the batch goes out whole, without a copy).
 */
export function planRegroup(
  keys: ArrayLike<number>,
  rows: number,
  limit = MAX_PARTITIONS_PER_INSERT,
): RegroupPlan | null {
  const rank = new Map<number, number>();
  // Rows of a batch come in long runs of one key (one day): one Map probe per run, not per row.
  let last = NaN;
  for (let i = 0; i < rows; i++) {
    const k = keys[i];
    if (k === last) continue;
    last = k;
    if (!rank.has(k)) rank.set(k, 0);
  }
  if (rank.size <= limit) return null;
  const sorted = Float64Array.from(rank.keys()).sort();
  const counts = new Uint32Array(sorted.length + 1);
  for (let r = 0; r < sorted.length; r++) rank.set(sorted[r], r);
  for (let i = 0; i < rows; i++) counts[rank.get(keys[i])! + 1]++;
  // Prefix sums: counts[r] becomes the first slot of key rank r (a stable counting sort).
  for (let r = 1; r <= sorted.length; r++) counts[r] += counts[r - 1];
  const groups: number[] = [];
  const keyRanges: Array<[number, number]> = [];
  for (let r = 0; r < sorted.length; r += limit) {
    groups.push(counts[r]);
    keyRanges.push([sorted[r], sorted[Math.min(r + limit, sorted.length) - 1]]);
  }
  groups.push(rows);
  const order = new Uint32Array(rows);
  for (let i = 0; i < rows; i++) order[counts[rank.get(keys[i])!]++] = i;
  return { order, groups, keyRanges };
}

/**
 * Writes the rows of `body` (row r spans bounds[r]..bounds[r + 1]) in `order` into `out` (at least
 * body.length bytes); returns the row boundaries of the written bytes (rows + 1 entries).
 */
export function writeRegrouped(
  body: Buffer,
  bounds: Uint32Array,
  order: Uint32Array,
  out: Buffer,
): Uint32Array {
  const written = new Uint32Array(order.length + 1);
  let pos = 0;
  for (let i = 0; i < order.length; i++) {
    const r = order[i];
    pos += body.copy(out, pos, bounds[r], bounds[r + 1]);
    written[i + 1] = pos;
  }
  return written;
}
