import { describeStall, stalledPartitions, trackPartitions } from './partition-stall';

const off = (partition: number, committed: number, end: number, start = 0) => ({
  partition,
  committed,
  end,
  start,
});

describe('partition stall', () => {
  test('a partition with lag that does not move is stalled after the deadline', () => {
    let marks = trackPartitions(undefined, [off(0, 10, 100), off(1, 50, 50)], 0);
    marks = trackPartitions(marks, [off(0, 10, 120), off(1, 50, 50)], 30_000);
    expect(stalledPartitions(marks, [off(0, 10, 120), off(1, 50, 50)], 30_000, 60_000)).toEqual([]);
    marks = trackPartitions(marks, [off(0, 10, 130), off(1, 50, 50)], 61_000);
    const stalled = stalledPartitions(marks, [off(0, 10, 130), off(1, 50, 50)], 61_000, 60_000);
    expect(stalled).toEqual([{ partition: 0, committed: 10, lag: 120, stalledMs: 61_000 }]);
    expect(describeStall(stalled)).toBe('partition 0 has not moved for 1m1s (committed offset 10, lag 120)');
  });

  test('moving, or having no lag, restarts the clock', () => {
    let marks = trackPartitions(undefined, [off(0, 10, 100)], 0);
    marks = trackPartitions(marks, [off(0, 11, 100)], 50_000);
    expect(stalledPartitions(marks, [off(0, 11, 100)], 70_000, 60_000)).toEqual([]);
    marks = trackPartitions(marks, [off(0, 100, 100)], 80_000);
    marks = trackPartitions(marks, [off(0, 100, 150)], 200_000);
    expect(marks.get(0)!.since).toBe(200_000);
  });

  test('an unchanged poll keeps the marks it had (nothing allocated per idle poll)', () => {
    const idle = [off(0, 100, 100), off(1, 10, 20)];
    const marks = trackPartitions(undefined, idle, 0);
    expect(trackPartitions(marks, idle, 15_000)).toBe(marks);
    // The lagging partition's clock still runs from its first sight.
    expect(stalledPartitions(marks, idle, 60_000, 60_000)).toEqual([
      { partition: 1, committed: 10, lag: 10, stalledMs: 60_000 },
    ]);
    const moved = trackPartitions(marks, [off(0, 100, 100), off(1, 11, 20)], 30_000);
    expect(moved).not.toBe(marks);
    expect(moved.get(0)).toBe(marks.get(0));
    expect(moved.get(1)!.since).toBe(30_000);
  });

  test('a never committed partition counts from the log start and names it', () => {
    let marks = trackPartitions(undefined, [off(0, -1, 100, 5), off(1, -1, 100)], 0);
    marks = trackPartitions(marks, [off(0, -1, 100, 5), off(1, -1, 100)], 10_000);
    const stalled = stalledPartitions(marks, [off(0, -1, 100, 5), off(1, -1, 100)], 10_000, 10_000);
    expect(stalled.map((s) => [s.partition, s.lag])).toEqual([
      [0, 95],
      [1, 100],
    ]);
    expect(describeStall(stalled)).toBe(
      'partition 0 has not moved for 0m10s (nothing committed yet, lag 95) (and 1 more partitions)',
    );
  });
});
