import { BACKLOG_DELAY_FACTOR, BatchCutter, PLAN_STALL_MS } from './batch-cutter';

const m = (offset: number, size: number) => ({
  topic: 't',
  partition: 0,
  offset,
  value: Buffer.alloc(size, 0x61),
});
const limits = { maxRows: 10, maxBytes: 1000, maxDelayMs: 500 };

describe('BatchCutter', () => {
  it('closes a batch at maxRows on a message boundary, never splitting a message', () => {
    const c = new BatchCutter(limits);
    expect(c.add(m(0, 10), 4, 0)).toEqual([]);
    expect(c.add(m(1, 10), 4, 0)).toEqual([]);
    // 4+4+4 > 10: the open batch closes before this message, which starts the next one.
    const closed = c.add(m(2, 10), 4, 0);
    expect(closed.map((b) => [b.firstOffset, b.lastOffset, b.lines])).toEqual([[0, 1, 8]]);
    const exact = c.add(m(3, 10), 6, 0);
    expect(exact.map((b) => [b.firstOffset, b.lastOffset, b.lines])).toEqual([[2, 3, 10]]);
  });

  it('closes at maxBytes and lets one oversized message be a batch of its own', () => {
    const c = new BatchCutter(limits);
    c.add(m(0, 600), 1, 0);
    expect(c.add(m(1, 600), 1, 0).map((b) => b.lastOffset)).toEqual([0]);
    const big = new BatchCutter(limits).add(m(7, 5000), 1, 0);
    expect(big.map((b) => [b.firstOffset, b.lastOffset, b.bytes])).toEqual([[7, 7, 5000]]);
  });

  it('closes on maxDelay from the first message and fixes the ingest time at the cut', () => {
    const c = new BatchCutter(limits);
    c.add(m(0, 1), 1, 1000);
    c.add(m(1, 1), 1, 1300);
    expect(c.dueInMs(1300)).toBe(200);
    expect(c.poll(1499)).toBeNull();
    const b = c.poll(1500);
    expect(b).toMatchObject({ firstOffset: 0, lastOffset: 1, ingestMs: 1500, replayed: false });
    expect(c.poll(99_999)).toBeNull();
    expect(c.dueInMs(99_999)).toBeNull();
  });

  it('reproduces journaled ranges exactly, with their ingest time, ignoring limits and timers', () => {
    const plan = [
      { firstOffset: 0, lastOffset: 2, ingestMs: 42 },
      { firstOffset: 3, lastOffset: 3, ingestMs: 43 },
    ];
    const c = new BatchCutter({ maxRows: 1, maxBytes: 1, maxDelayMs: 1 }, plan);
    expect(c.add(m(0, 5), 3, 0)).toEqual([]);
    expect(c.poll(10_000)).toBeNull();
    expect(c.add(m(1, 5), 3, 0)).toEqual([]);
    const first = c.add(m(2, 5), 3, 0);
    expect(
      first.map((b) => [b.firstOffset, b.lastOffset, b.ingestMs, b.replayed, b.messages.length]),
    ).toEqual([[0, 2, 42, true, 3]]);
    expect(c.add(m(3, 5), 1, 0).map((b) => [b.firstOffset, b.lastOffset, b.ingestMs])).toEqual([[3, 3, 43]]);
    expect(c.replaying()).toBe(false);
    // Plan exhausted: limits apply again (maxRows 1 closes every message).
    expect(c.add(m(4, 5), 1, 7).map((b) => [b.firstOffset, b.ingestMs, b.replayed])).toEqual([[4, 7, false]]);
  });

  it('keeps the planned range as the batch name when its last messages have disappeared', () => {
    const c = new BatchCutter(limits, [
      { firstOffset: 10, lastOffset: 19, ingestMs: 5 },
      { firstOffset: 20, lastOffset: 29, ingestMs: 6 },
    ]);
    c.add(m(10, 1), 1, 0);
    // 11..29 were deleted; 30 arrives: the first range closes under its planned name, the second is skipped.
    const closed = c.add(m(30, 1), 1, 0);
    expect(closed.map((b) => [b.firstOffset, b.lastOffset, b.ingestMs, b.messages.length])).toEqual([
      [10, 19, 5, 1],
    ]);
    expect(c.replaying()).toBe(false);
    expect(c.poll(limits.maxDelayMs)?.firstOffset).toBe(30);
  });

  it('cuts a stalled planned range after PLAN_STALL_MS over the offsets seen, keeping its planned token', () => {
    const c = new BatchCutter(limits, [{ firstOffset: 0, lastOffset: 9, ingestMs: 5 }]);
    c.add(m(0, 1), 1, 0);
    expect(c.poll(PLAN_STALL_MS - 1)).toBeNull();
    // Issue 12: it used to get a fresh ingest time and token (replayed: false), duplicating an earlier INSERT.
    expect(c.poll(PLAN_STALL_MS)).toMatchObject({
      firstOffset: 0,
      lastOffset: 0,
      ingestMs: 5,
      tokenLastOffset: 9,
      replayed: true,
    });
  });

  it('flushes the open batch on demand with the given clock as its ingest time', () => {
    const c = new BatchCutter(limits);
    expect(c.flush(5)).toBeNull();
    c.add(m(0, 1), 1, 0);
    expect(c.flush(1234)).toMatchObject({ firstOffset: 0, lastOffset: 0, ingestMs: 1234, replayed: false });
    expect(c.pendingBytes()).toBe(0);
  });
  it('defers the delay cut while a backlog would fill the batch, at most BACKLOG_DELAY_FACTOR delays', () => {
    const c = new BatchCutter(limits);
    // 2 messages of 2 lines / 10 bytes: 6 rows or 980 bytes of room = 3 more such messages.
    c.add(m(0, 10), 2, 0);
    c.add(m(1, 10), 2, 0);
    // Too small a backlog to fill the batch (a trickle): the delay cuts as always.
    const trickle = new BatchCutter(limits);
    trickle.add(m(0, 10), 2, 0);
    trickle.add(m(1, 10), 2, 0);
    expect(trickle.poll(500, 2)).toMatchObject({ firstOffset: 0, lastOffset: 1 });
    // Enough waiting in Kafka to reach maxRows: keep filling instead of a small INSERT.
    expect(c.poll(500, 3)).toBeNull();
    expect(c.poll(500 * BACKLOG_DELAY_FACTOR - 1, 1000)).toBeNull();
    // Never longer than the factor allows, whatever the backlog.
    expect(c.poll(500 * BACKLOG_DELAY_FACTOR, 1000)).toMatchObject({
      firstOffset: 0,
      lastOffset: 1,
      ingestMs: 500 * BACKLOG_DELAY_FACTOR,
    });
  });

  it('fills a deferred batch to its limits and cuts it there', () => {
    const c = new BatchCutter(limits);
    c.add(m(0, 10), 4, 0);
    expect(c.poll(600, 100)).toBeNull();
    expect(c.add(m(1, 10), 4, 650)).toEqual([]);
    expect(c.add(m(2, 10), 4, 700).map((b) => [b.firstOffset, b.lastOffset, b.lines])).toEqual([[0, 1, 8]]);
    // The backlog gone (caught up): the next batch closes on the plain delay.
    expect(c.poll(1200, 0)).toMatchObject({ firstOffset: 2, lastOffset: 2 });
  });

  it('never defers a journaled plan: only the plan and its stall timer decide', () => {
    const c = new BatchCutter(limits, [{ firstOffset: 0, lastOffset: 5, ingestMs: 42 }]);
    c.add(m(0, 10), 1, 0);
    expect(c.poll(PLAN_STALL_MS - 1, 1000)).toBeNull();
    expect(c.poll(PLAN_STALL_MS, 1000)).toMatchObject({ firstOffset: 0, ingestMs: 42 });
  });
});
