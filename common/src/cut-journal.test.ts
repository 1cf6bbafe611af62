import { decodeJournal, encodeJournal, MAX_METADATA_BYTES, MAX_JOURNAL_ENTRIES } from './cut-journal';

describe('cut journal', () => {
  const entries = [
    { firstOffset: 100, lastOffset: 199, ingestMs: 1_700_000_000_123 },
    { firstOffset: 200, lastOffset: 250, ingestMs: 1_700_000_000_456 },
  ];

  it('round-trips outstanding batches', () => {
    const text = encodeJournal(entries);
    expect(text).toBe('lp1;100-199@1700000000123,200-250@1700000000456');
    expect(decodeJournal(text, 100)).toEqual(entries);
  });

  it('drops entries already below the committed offset', () => {
    expect(decodeJournal(encodeJournal(entries), 200)).toEqual([entries[1]]);
    expect(decodeJournal(encodeJournal(entries), 251)).toEqual([]);
  });

  it('ignores foreign, malformed and inconsistent metadata', () => {
    expect(decodeJournal(null, 0)).toEqual([]);
    expect(decodeJournal('', 0)).toEqual([]);
    expect(decodeJournal('some-other-tool', 0)).toEqual([]);
    expect(decodeJournal('lp1;', 0)).toEqual([]);
    expect(decodeJournal('lp1;1-x@3', 0)).toEqual([]);
    expect(decodeJournal('lp1;9-5@3', 0)).toEqual([]);
    expect(decodeJournal('lp1;0-10@1,5-20@1', 0)).toEqual([]);
    // Straddles the committed offset: the previous owner's watermark was elsewhere.
    expect(decodeJournal('lp1;0-10@1', 5)).toEqual([]);
  });

  it('never produces metadata Kafka would reject, and never throws (keeps the oldest that fit)', () => {
    const many = Array.from({ length: 200 }, (_, i) => ({
      firstOffset: i * 1e9,
      lastOffset: i * 1e9 + 1,
      ingestMs: 1_700_000_000_000,
    }));
    const out = encodeJournal(many);
    expect(out.length).toBeLessThanOrEqual(MAX_METADATA_BYTES);
    const kept = decodeJournal(out, 0);
    expect(kept).toEqual(many.slice(0, kept.length));
    expect(encodeJournal(many.slice(0, 16)).length).toBeLessThan(MAX_METADATA_BYTES);
  });

  it('fits MAX_JOURNAL_ENTRIES entries of the largest values whole', () => {
    const big = 2 ** 53 - 1;
    const worst = Array.from({ length: MAX_JOURNAL_ENTRIES }, () => ({
      firstOffset: big,
      lastOffset: big,
      ingestMs: 9_999_999_999_999,
    }));
    expect(encodeJournal(worst).split(',')).toHaveLength(MAX_JOURNAL_ENTRIES);
  });
});

describe('cut journal token ranges', () => {
  it('round-trips the planned token range of a batch cut short', () => {
    const entries = [
      { firstOffset: 10, lastOffset: 14, ingestMs: 7, tokenLastOffset: 19 },
      { firstOffset: 15, lastOffset: 19, ingestMs: 8 },
    ];
    const text = encodeJournal(entries);
    expect(text).toBe('lp1;10-14/19@7,15-19@8');
    expect(decodeJournal(text, 10)).toEqual(entries);
  });
});
