/**
 * Issue 12's "read in the code" findings. Each was first proved on the unfixed code (commit
 * "test: prove issue 12's four read-in-the-code findings"); the assertions now state the fixed
 * behaviour and the comments say what the unfixed code did.
 */
import { BatchCutter, PLAN_STALL_MS } from './delivery/batch-cutter';
import { encodeJournal, MAX_JOURNAL_ENTRIES, MAX_METADATA_BYTES } from '../../common/src/cut-journal';
import { OffsetTracker } from './delivery/offset-tracker';
import { BatchEncoder } from './encode/batch';
import { REFERENCE_COLUMNS } from './encode/reference-columns';
import { MAX_OUTSTANDING_BATCHES, resolveTuning } from './worker-tuning';

describe('finding: stored batches waiting behind an unfinished one are not counted', () => {
  it('pending() counts acked-but-unfolded batches (the cap used unacknowledged(), which said 1)', () => {
    const t = new OffsetTracker(0);
    for (let i = 0; i < 201; i++) t.register(i * 10, i * 10 + 9, 1_700_000_000_000);
    // Batch 0 is stuck; 200 batches behind it are stored but cannot be folded into the watermark.
    for (let i = 1; i < 201; i++) t.ack(i * 10);
    expect(t.unacknowledged()).toBe(1);
    expect(t.pending()).toBe(201);
    expect(t.pending()).toBe(t.outstanding().length);
  });

  it('the configured cap can never exceed what the journal holds', () => {
    const cfg = {
      batch: { maxRows: 1, maxBytes: 1, maxDelayMs: 1 },
      tuning: { maxOutstandingBatchesPerPartition: 10_000 },
    };
    const cap = resolveTuning(cfg as never).maxOutstandingBatchesPerPartition;
    expect(cap).toBe(MAX_OUTSTANDING_BATCHES);
    expect(cap + 2).toBeLessThanOrEqual(MAX_JOURNAL_ENTRIES);
  });
});

describe('finding: encodeJournal throws past 4 KiB', () => {
  it('no longer throws for 150 outstanding batches (it did: RangeError)', () => {
    const entries = Array.from({ length: 150 }, (_, i) => ({
      firstOffset: 1_000_000_000 + i * 100,
      lastOffset: 1_000_000_000 + i * 100 + 99,
      ingestMs: 1_700_000_000_000,
    }));
    expect(encodeJournal(entries).length).toBeLessThanOrEqual(MAX_METADATA_BYTES);
  });
});

describe('finding: JSON.stringify on deeply nested JSON throws outside per-line isolation', () => {
  it('a deep array under an aliased key is dead-lettered as encode_error (it escaped the encoder)', () => {
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
    // Node 20's JSON.stringify overflows the stack on this value; Node >= 24's is iterative and does
    // not, so the throw is made explicit here to prove the isolation on every runtime.
    const stringify = JSON.stringify;
    let thrown = 0;
    const spy = jest.spyOn(JSON, 'stringify').mockImplementation(((value: unknown, ...rest: never[]) => {
      if (Array.isArray(value) && ++thrown) throw new RangeError('Maximum call stack size exceeded');
      return stringify(value, ...rest);
    }) as typeof JSON.stringify);
    let out: ReturnType<BatchEncoder['encode']>;
    try {
      out = enc.encode(messages, Date.now());
    } finally {
      spy.mockRestore();
    }
    expect(thrown).toBe(1);
    expect(out.rows).toBe(1);
    expect(out.deadLetters.map((d) => [d.reason, d.offset, d.line.length])).toEqual([
      ['encode_error', '0', line.length],
    ]);
  });
});

describe('finding: a replayed range cut short after 60 s gets a new token', () => {
  it('a stalled planned range keeps its planned ingest time and token range (it got new ones)', () => {
    const c = new BatchCutter({ maxRows: 1000, maxBytes: 1 << 20, maxDelayMs: 100 }, [
      { firstOffset: 0, lastOffset: 9, ingestMs: 1_000 },
    ]);
    for (let o = 0; o < 5; o++)
      c.add({ topic: 't', partition: 0, offset: o, value: Buffer.from('x') }, 1, 2_000);
    const cut = c.poll(2_000 + PLAN_STALL_MS)!;
    expect([cut.firstOffset, cut.lastOffset, cut.ingestMs, cut.replayed, cut.tokenLastOffset]).toEqual([
      0,
      4,
      1_000,
      true,
      9,
    ]);
  });
});
