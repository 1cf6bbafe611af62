/**
 * Finds the rows ClickHouse rejects inside a batch it refused, by bisection: insert each half;
 * a half that fails with a data error is split again until single rows remain, which are the
 * culprits. Every sub-insert carries a token derived from its row range, so the procedure is
 * deterministic and a retry (or a re-cut after a crash) deduplicates the halves already stored.
 * Bounded: past `maxRejected` culprits the batch is judged systemically wrong (schema or
 * configuration mismatch) and the caller must retry it later instead of dead-lettering it all.
 */

/** Result of inserting rows [from, to): stored, or rejected with ClickHouse's message. */
export type RangeOutcome = { ok: true } | { ok: false; reason: string };

/** Inserts rows [from, to); resolves with the outcome, throws on retriable failures. */
export type RangeInserter = (from: number, to: number) => Promise<RangeOutcome>;

/** A single row ClickHouse refused, with its message. */
export interface RejectedRow {
  row: number;
  reason: string;
}

/** Thrown when more rows are rejected than a data problem can explain. */
export class SystemicRejectionError extends Error {
  /** `reason` is ClickHouse's message for the first rejected row. */
  constructor(
    readonly reason: string,
    readonly rejectedAtLeast: number,
  ) {
    super(`ClickHouse rejects too many rows (${rejectedAtLeast}+) to be bad data: ${reason}`);
    this.name = 'SystemicRejectionError';
  }
}

/** Default cap on culprits per batch: 10 rows plus 1% of the batch. */
export function defaultMaxRejected(rows: number): number {
  return 10 + Math.floor(rows / 100);
}

/**
 * Isolates the rejected rows of [0, rows) whose whole-batch insert failed with `firstReason`.
 * Resolves with the culprits (every other row is stored); rethrows retriable errors from `insert`.
 */
export async function isolateRejectedRows(
  rows: number,
  firstReason: string,
  insert: RangeInserter,
  maxRejected = defaultMaxRejected(rows),
): Promise<RejectedRow[]> {
  const rejected: RejectedRow[] = [];
  // Explicit stack instead of recursion: depth-first, left half first, deterministic order.
  const stack: Array<[number, number, string]> = [[0, rows, firstReason]];
  while (stack.length > 0) {
    const [from, to, reason] = stack.pop()!;
    if (to - from === 1) {
      rejected.push({ row: from, reason });
      if (rejected.length > maxRejected)
        throw new SystemicRejectionError(rejected[0].reason, rejected.length);
      continue;
    }
    const mid = from + Math.ceil((to - from) / 2);
    const halves: Array<[number, number]> = [
      [from, mid],
      [mid, to],
    ];
    const failed: Array<[number, number, string]> = [];
    for (const [a, b] of halves) {
      const outcome = await insert(a, b);
      if (!outcome.ok) failed.push([a, b, outcome.reason]);
    }
    // Push right first so the left half is examined first.
    for (let i = failed.length - 1; i >= 0; i--) stack.push(failed[i]);
  }
  return rejected.sort((x, y) => x.row - y.row);
}
