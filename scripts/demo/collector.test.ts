import { consumerLag } from './collector';

describe('consumerLag', () => {
  it('sums high watermark minus committed offset, from the low mark where nothing is committed', () => {
    const topic = [
      { partition: 0, high: '100', low: '0' },
      { partition: 1, high: '50', low: '10' },
      { partition: 2, high: '7', low: '0' },
    ];
    expect(
      consumerLag(topic, [
        { partition: 0, offset: '90' },
        { partition: 1, offset: '-1' },
      ]),
    ).toBe(10 + 40 + 7);
    // A commit ahead of a (lagging) watermark read never counts negative.
    expect(
      consumerLag(topic, [
        { partition: 0, offset: '120' },
        { partition: 1, offset: '50' },
        { partition: 2, offset: '7' },
      ]),
    ).toBe(0);
    expect(consumerLag([], [])).toBe(0);
  });
});
