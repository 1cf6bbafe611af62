import { decodeJournal, encodeJournal, MAX_METADATA_BYTES } from './cut-journal';

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

  it('refuses to produce metadata Kafka would reject', () => {
    const many = Array.from({ length: 200 }, (_, i) => ({
      firstOffset: i * 1e9,
      lastOffset: i * 1e9 + 1,
      ingestMs: 1_700_000_000_000,
    }));
    expect(() => encodeJournal(many)).toThrow(RangeError);
    expect(encodeJournal(many.slice(0, 16)).length).toBeLessThan(MAX_METADATA_BYTES);
  });
});
