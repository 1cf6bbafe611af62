import { describeRetentionLoss, expiredUnconsumed, trackRetentionLoss } from './retention-loss';

const off = (partition: number, committed: number, start: number, end = 5000) => ({
  partition,
  committed,
  start,
  end,
});

describe('records expired before they were consumed', () => {
  test('only a committed offset below the log start is a loss; never-committed partitions are not', () => {
    const expired = expiredUnconsumed([
      off(0, 100, 1000),
      off(1, 1000, 1000),
      off(2, -1, 700),
      off(3, 2000, 10),
    ]);
    expect(expired).toEqual([{ partition: 0, committed: 100, start: 1000, lost: 900 }]);
  });

  test('an occurrence is reported once, not once per poll, and a new one again', () => {
    const first = trackRetentionLoss(undefined, expiredUnconsumed([off(0, 100, 1000), off(1, 5, 5)]));
    expect(first.fresh.map((x) => x.partition)).toEqual([0]);
    // Same partition, same committed offset, log start moved on: the same occurrence.
    const again = trackRetentionLoss(first.reported, expiredUnconsumed([off(0, 100, 1500), off(1, 5, 5)]));
    expect(again.fresh).toEqual([]);
    expect(again.reported).toBe(first.reported);
    // Another partition loses records: only it is fresh.
    const second = trackRetentionLoss(again.reported, expiredUnconsumed([off(0, 100, 1500), off(1, 5, 40)]));
    expect(second.fresh).toEqual([{ partition: 1, committed: 5, start: 40, lost: 35 }]);
    // Both caught up: forgotten, so a later loss on partition 0 is reported again.
    const caught = trackRetentionLoss(
      second.reported,
      expiredUnconsumed([off(0, 1500, 1500), off(1, 40, 40)]),
    );
    expect(caught).toEqual({ reported: undefined, fresh: [] });
    const later = trackRetentionLoss(caught.reported, expiredUnconsumed([off(0, 1500, 3000)]));
    expect(later.fresh).toEqual([{ partition: 0, committed: 1500, start: 3000, lost: 1500 }]);
  });

  test('steady state without loss allocates nothing', () => {
    expect(trackRetentionLoss(undefined, [])).toEqual({ reported: undefined, fresh: [] });
  });

  test('the message names the topic, partitions and offsets lost', () => {
    const msg = describeRetentionLoss('logs.fw', expiredUnconsumed([off(0, 100, 1000), off(3, 0, 50)]));
    expect(msg).toBe(
      "topic logs.fw: 950 offsets deleted by retention before the pipeline consumed them (partition 0: committed 100, log start 1000, 900 lost; partition 3: committed 0, log start 50, 50 lost); raise the topic's retention or the workers' throughput",
    );
    const many = expiredUnconsumed([0, 1, 2, 3, 4, 5, 6].map((p) => off(p, 0, 10)));
    expect(describeRetentionLoss('t', many)).toContain('70 offsets');
    expect(describeRetentionLoss('t', many)).toContain('; and 2 more partitions)');
  });

  test("kafkajs's reset commit (-2) is a loss of unknown size; a group that never committed (-1) is not", () => {
    const expired = expiredUnconsumed([off(0, -2, 800), off(1, -1, 800), off(2, 10, 50)]);
    expect(expired).toEqual([
      { partition: 0, committed: -2, start: 800, lost: 0 },
      { partition: 2, committed: 10, start: 50, lost: 40 },
    ]);
    expect(describeRetentionLoss('t', expired)).toBe(
      "topic t: at least 40 offsets deleted by retention before the pipeline consumed them (partition 0: a worker found its position deleted and jumped to the log start 800; partition 2: committed 10, log start 50, 40 lost); raise the topic's retention or the workers' throughput",
    );
    expect(describeRetentionLoss('t', expired.slice(0, 1))).toMatch(/^topic t: an unknown number of offsets/);
    const first = trackRetentionLoss(undefined, expired);
    expect(first.fresh).toHaveLength(2);
    expect(trackRetentionLoss(first.reported, expired).fresh).toEqual([]);
  });
});
