import { BatchDelivery, type BatchJob } from './batch-delivery';
import type { ClickHouseSink } from './clickhouse-sink';
import { planRegroup, writeRegrouped } from './regroup';
import { rowBoundaries } from './row-lines';
import { keyGroupToken } from './token';

/** A shuffled history: row i holds day (i * 7919) % days, written as `row<i>:day<d>`. */
function history(rows: number, days: number): { keys: Float64Array; body: Buffer } {
  const keys = new Float64Array(rows);
  let text = '';
  for (let i = 0; i < rows; i++) {
    keys[i] = 19_000 + ((i * 7919) % days);
    text += `row${i}:day${keys[i]}\n`;
  }
  return { keys, body: Buffer.from(text) };
}

describe('planRegroup', () => {
  it('returns null (whole batch, no copy) for at most `limit` distinct keys', () => {
    expect(planRegroup([5, 5, 5], 3)).toBeNull();
    expect(planRegroup(history(500, 100).keys, 500)).toBeNull();
    expect(planRegroup([], 0)).toBeNull();
  });

  it('sorts keys, keeps row order within a key, and cuts groups of at most `limit` keys', () => {
    const keys = [3, 1, 2, 3, 1, 4, 5, 2];
    const plan = planRegroup(keys, keys.length, 2)!;
    expect(Array.from(plan.order)).toEqual([1, 4, 2, 7, 0, 3, 5, 6]);
    expect(plan.groups).toEqual([0, 4, 7, 8]);
    expect(plan.keyRanges).toEqual([
      [1, 2],
      [3, 4],
      [5, 5],
    ]);
  });

  it('makes ceil(distinct / 100) groups for 730 shuffled days, each a permutation slice', () => {
    const { keys } = history(20_000, 730);
    const plan = planRegroup(keys, keys.length)!;
    expect(plan.groups.length - 1).toBe(Math.ceil(730 / 100));
    const seen = new Uint8Array(keys.length);
    for (let g = 0; g + 1 < plan.groups.length; g++) {
      const distinct = new Set<number>();
      let prev = -1;
      for (let i = plan.groups[g]; i < plan.groups[g + 1]; i++) {
        const r = plan.order[i];
        seen[r]++;
        distinct.add(keys[r]);
        // Stable: within one key, rows keep their batch order.
        if (prev >= 0 && keys[prev] === keys[r]) expect(r).toBeGreaterThan(prev);
        prev = r;
      }
      expect(distinct.size).toBeLessThanOrEqual(100);
    }
    expect(seen.every((x) => x === 1)).toBe(true);
  });
});

describe('writeRegrouped', () => {
  it('is deterministic: the same batch gives byte-identical bodies and boundaries', () => {
    const a = history(3_000, 730);
    const b = history(3_000, 730);
    const write = (h: { keys: Float64Array; body: Buffer }) => {
      const plan = planRegroup(h.keys, h.keys.length)!;
      const out = Buffer.alloc(h.body.length);
      const at = writeRegrouped(h.body, rowBoundaries(h.body), plan.order, out);
      return { out, at, plan };
    };
    const x = write(a);
    const y = write(b);
    expect(x.out.equals(y.out)).toBe(true);
    expect(Array.from(x.at)).toEqual(Array.from(y.at));
    // Each written row is exactly the source row named by `order`.
    const bounds = rowBoundaries(a.body);
    for (const i of [0, 1, 999, 2_999]) {
      const r = x.plan.order[i];
      expect(x.out.subarray(x.at[i], x.at[i + 1]).equals(a.body.subarray(bounds[r], bounds[r + 1]))).toBe(
        true,
      );
    }
    expect(x.at[x.at.length - 1]).toBe(a.body.length);
  });
});

/** A sink recording every insert (body, token) and refusing bodies holding `bad` (a data error). */
function recordingSink(): { sink: ClickHouseSink; inserts: Array<{ body: string; token: string }> } {
  const inserts: Array<{ body: string; token: string }> = [];
  const fake = {
    async insert(_target: string, body: Buffer, token: string) {
      const text = body.toString();
      if (text.includes('bad')) {
        const { ClickHouseError } = await import('@clickhouse/client');
        throw new ClickHouseError({ message: 'Cannot parse input', code: '27', type: 'CANNOT_PARSE_INPUT' });
      }
      inserts.push({ body: text, token });
      return { writtenRows: text.split('\n').length - 1 };
    },
    hasDeadLetterTable: () => false,
  };
  return { sink: fake as unknown as ClickHouseSink, inserts };
}

function backfillJob(rows: number, days: number, badRows: number[] = []): BatchJob {
  const { keys } = history(rows, days);
  const lines: string[] = [];
  for (let i = 0; i < rows; i++) lines.push(`${badRows.includes(i) ? 'bad' : 'row'}${i}:day${keys[i]}`);
  return {
    topic: 't',
    partition: 3,
    firstOffset: 100,
    lastOffset: 100 + rows - 1,
    ingestMs: 1,
    token: 'tok',
    body: Buffer.from(lines.map((l) => `${l}\n`).join('')),
    rows,
    // One message per line: a rejected row maps back to offset 100 + row.
    messages: lines.map((l, i) => ({
      topic: 't',
      partition: 3,
      offset: String(100 + i),
      value: Buffer.from(l),
    })),
    parseDeadLetters: [],
    partitionKeys: keys,
  };
}

const fast = { initialMs: 1, maxMs: 1, factor: 1 };

describe('BatchDelivery regrouping by partition key', () => {
  it('sends a 730-day shuffled batch as 8 inserts under key-range tokens, identical on replay', async () => {
    const runs = [];
    for (let replay = 0; replay < 2; replay++) {
      const s = recordingSink();
      const d = new BatchDelivery(s.sink, undefined, 'ns/p', {}, fast);
      const out = await d.deliver(backfillJob(5_000, 730), new AbortController().signal);
      expect(out.rowsInserted).toBe(5_000);
      runs.push(s.inserts);
    }
    expect(runs[0]).toHaveLength(8);
    expect(runs[1]).toEqual(runs[0]);
    expect(runs[0][0].token).toBe(keyGroupToken('tok', 19_000, 19_099));
    expect(runs[0].reduce((n, i) => n + i.body.split('\n').length - 1, 0)).toBe(5_000);
  });

  it('sends a batch of at most 100 keys whole under the batch token (zero-copy path)', async () => {
    const s = recordingSink();
    const d = new BatchDelivery(s.sink, undefined, 'ns/p', {}, fast);
    const job = backfillJob(1_000, 100);
    await d.deliver(job, new AbortController().signal);
    expect(s.inserts).toEqual([{ body: job.body.toString(), token: 'tok' }]);
  });

  it('maps a row rejected inside a group back to its batch row, offset and line', async () => {
    const s = recordingSink();
    const d = new BatchDelivery(s.sink, undefined, 'ns/p', {}, fast);
    const out = await d.deliver(backfillJob(2_000, 730, [1_234, 77]), new AbortController().signal);
    expect(out.rejectedRows).toEqual([77, 1_234]);
    expect(out.rowsInserted).toBe(1_998);
    expect(out.deadLetters.map((x) => [x.offset, x.line.toString()])).toEqual([
      [177, `bad77:day${19_000 + ((77 * 7919) % 730)}`],
      [1_334, `bad1234:day${19_000 + ((1_234 * 7919) % 730)}`],
    ]);
    const stored = s.inserts.map((i) => i.body).join('');
    expect(stored).not.toContain('bad');
    expect(stored.split('\n').length - 1).toBe(1_998);
  });
});
