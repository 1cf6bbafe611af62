import {
  defaultMaxRejected,
  isolateRejectedRows,
  SystemicRejectionError,
  type RangeOutcome,
} from './isolate';

/** A range inserter over an in-memory table that rejects any range containing a bad row. */
function fakeTable(bad: Set<number>) {
  const stored: number[] = [];
  const calls: Array<[number, number]> = [];
  const insert = async (from: number, to: number): Promise<RangeOutcome> => {
    calls.push([from, to]);
    for (let i = from; i < to; i++) if (bad.has(i)) return { ok: false, reason: `bad row ${i}` };
    for (let i = from; i < to; i++) stored.push(i);
    return { ok: true };
  };
  return { insert, stored, calls };
}

describe('isolateRejectedRows', () => {
  it('finds every bad row and stores every other row exactly once', async () => {
    const bad = new Set([3, 4, 57, 99]);
    const t = fakeTable(bad);
    const rejected = await isolateRejectedRows(100, 'bad row 3', t.insert);
    expect(rejected.map((r) => r.row)).toEqual([3, 4, 57, 99]);
    expect(rejected[2].reason).toBe('bad row 57');
    expect(t.stored.sort((a, b) => a - b)).toEqual([...Array(100).keys()].filter((i) => !bad.has(i)));
  });

  it('is deterministic: the same input gives the same sequence of sub-inserts', async () => {
    const a = fakeTable(new Set([10, 11, 40]));
    const b = fakeTable(new Set([10, 11, 40]));
    await isolateRejectedRows(64, 'x', a.insert);
    await isolateRejectedRows(64, 'x', b.insert);
    expect(a.calls).toEqual(b.calls);
    // Logarithmic, not row by row.
    expect(a.calls.length).toBeLessThan(40);
  });

  it('handles a single-row batch and a batch whose halves all succeed', async () => {
    expect(await isolateRejectedRows(1, 'only row', fakeTable(new Set([0])).insert)).toEqual([
      { row: 0, reason: 'only row' },
    ]);
    expect(await isolateRejectedRows(10, 'flaky', fakeTable(new Set()).insert)).toEqual([]);
  });

  it('gives up with SystemicRejectionError when too many rows are rejected', async () => {
    const everything = new Set([...Array(1000).keys()]);
    await expect(
      isolateRejectedRows(1000, 'type mismatch', fakeTable(everything).insert),
    ).rejects.toBeInstanceOf(SystemicRejectionError);
    expect(defaultMaxRejected(1000)).toBe(20);
  });

  it('propagates retriable failures from the inserter', async () => {
    const boom = async () => {
      throw new Error('ECONNRESET');
    };
    await expect(isolateRejectedRows(4, 'x', boom)).rejects.toThrow('ECONNRESET');
  });
});
