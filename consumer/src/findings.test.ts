/**
 * Issue 12's "read in the code" findings, each proved on the code as it was and kept as a
 * regression test of the fix (the assertions state the fixed behaviour; the comments say what the
 * unfixed code did).
 */
import { BatchCutter, PLAN_STALL_MS } from './delivery/batch-cutter';
import { encodeJournal } from './delivery/cut-journal';
import { OffsetTracker } from './delivery/offset-tracker';
import { BatchEncoder } from './encode/batch';
import { REFERENCE_COLUMNS } from './encode/reference-columns';

describe('finding: stored batches waiting behind an unfinished one are not counted', () => {
  it('unacknowledged() ignores acked-but-unfolded batches, so the journal grows past the cap', () => {
    const t = new OffsetTracker(0);
    for (let i = 0; i < 201; i++) t.register(i * 10, i * 10 + 9, 1_700_000_000_000);
    // Batch 0 is stuck; 200 batches behind it are stored but cannot be folded into the watermark.
    for (let i = 1; i < 201; i++) t.ack(i * 10);
    expect(t.unacknowledged()).toBe(1);
    expect(t.outstanding().length).toBe(201);
  });
});

describe('finding: encodeJournal throws past 4 KiB', () => {
  it('throws for 150 outstanding batches', () => {
    const entries = Array.from({ length: 150 }, (_, i) => ({
      firstOffset: 1_000_000_000 + i * 100,
      lastOffset: 1_000_000_000 + i * 100 + 99,
      ingestMs: 1_700_000_000_000,
    }));
    expect(() => encodeJournal(entries)).toThrow(RangeError);
  });
});

describe('finding: JSON.stringify on deeply nested JSON throws outside per-line isolation', () => {
  it('a deep array under an aliased key escapes the encoder', () => {
    const depth = 20_000;
    const line = `{"msg":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const enc = new BatchEncoder({
      parser: { format: 'json', timezone: 'UTC' },
      columns: REFERENCE_COLUMNS.map((c) => ({ name: c.name, type: c.type, source: c.source! })),
      staticFields: {},
    });
    const messages = [
      { topic: 't', partition: 0, offset: '0', value: Buffer.from(line) },
      { topic: 't', partition: 0, offset: '1', value: Buffer.from('{"msg":"ok"}') },
    ];
    expect(() => enc.encode(messages, Date.now())).toThrow(RangeError);
  });
});

describe('finding: a replayed range cut short after 60 s gets a new token', () => {
  it('a stalled planned range closes with the offsets seen and a new ingest time', () => {
    const c = new BatchCutter({ maxRows: 1000, maxBytes: 1 << 20, maxDelayMs: 100 }, [
      { firstOffset: 0, lastOffset: 9, ingestMs: 1_000 },
    ]);
    for (let o = 0; o < 5; o++) c.add({ topic: 't', partition: 0, offset: o, value: Buffer.from('x') }, 1, 2_000);
    const cut = c.poll(2_000 + PLAN_STALL_MS)!;
    expect([cut.firstOffset, cut.lastOffset, cut.ingestMs, cut.replayed]).toEqual([0, 4, 2_000 + PLAN_STALL_MS, false]);
  });
});
