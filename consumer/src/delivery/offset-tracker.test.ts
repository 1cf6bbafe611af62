import { OffsetTracker } from './offset-tracker';

describe('OffsetTracker', () => {
  it('starts at the committed offset and advances over a contiguous acknowledged prefix', () => {
    const t = new OffsetTracker(100);
    expect(t.watermark()).toBe(100);
    t.register(100, 149, 1);
    t.register(150, 199, 2);
    expect(t.ack(100)).toBe(true);
    expect(t.watermark()).toBe(150);
    t.ack(150);
    expect(t.watermark()).toBe(200);
    expect(t.outstanding()).toHaveLength(0);
  });

  it('never commits past an earlier batch that is still in flight, whatever order acks arrive in', () => {
    const t = new OffsetTracker(0);
    t.register(0, 9, 1);
    t.register(10, 19, 1);
    t.register(20, 29, 1);
    t.ack(20);
    t.ack(10);
    expect(t.watermark()).toBe(0);
    expect(t.unacknowledged()).toBe(1);
    t.ack(0);
    expect(t.watermark()).toBe(30);
  });

  it('keeps a failed batch blocking the watermark until it is acknowledged', () => {
    const t = new OffsetTracker(0);
    t.register(0, 9, 1);
    t.register(10, 19, 1);
    expect(t.fail(0)).toBe(true);
    t.ack(10);
    expect(t.watermark()).toBe(0);
    expect(t.outstanding().map((b) => [b.firstOffset, b.state])).toEqual([
      [0, 'failed'],
      [10, 'acked'],
    ]);
    t.ack(0);
    expect(t.watermark()).toBe(20);
  });

  it('accepts offset gaps between batches (compaction, transaction markers) and commits past them', () => {
    const t = new OffsetTracker(5);
    t.register(7, 9, 1);
    t.register(15, 15, 1);
    t.ack(7);
    t.ack(15);
    expect(t.watermark()).toBe(16);
  });

  it('rejects overlapping or backwards ranges and unknown acks', () => {
    const t = new OffsetTracker(10);
    expect(() => t.register(5, 12, 1)).toThrow(RangeError);
    t.register(10, 20, 1);
    expect(() => t.register(20, 25, 1)).toThrow(RangeError);
    expect(() => t.register(30, 29, 1)).toThrow(RangeError);
    expect(t.ack(99)).toBe(false);
    expect(t.fail(99)).toBe(false);
    expect(t.nextOffset()).toBe(21);
  });

  it('does not let fail() undo an acknowledgement', () => {
    const t = new OffsetTracker(0);
    t.register(0, 1, 1);
    t.register(2, 3, 1);
    t.ack(2);
    expect(t.fail(2)).toBe(false);
    t.ack(0);
    expect(t.watermark()).toBe(4);
  });

  it('skips offsets without data only while no batch is outstanding, never backwards', () => {
    const t = new OffsetTracker(10);
    t.register(10, 19, 1);
    expect(t.skipTo(21)).toBe(false); // batch 10-19 is not stored: the marker at 20 must wait
    t.ack(10);
    expect(t.watermark()).toBe(20);
    expect(t.skipTo(21)).toBe(true);
    expect(t.watermark()).toBe(21);
    expect(t.nextOffset()).toBe(21);
    expect(t.skipTo(21)).toBe(false);
    expect(t.skipTo(15)).toBe(false);
    expect(() => t.register(20, 20, 1)).toThrow(RangeError);
    t.register(22, 23, 1);
    t.ack(22);
    expect(t.watermark()).toBe(24);
  });
});
