import { messagesDue } from './producer';

describe('messagesDue', () => {
  it('paces whole messages to the rate and carries the remainder', () => {
    expect(messagesDue(20_000, 50, 0, 50)).toBe(20); // 1,000 lines due
    expect(messagesDue(20_000, 100, 1_000, 50)).toBe(20);
    expect(messagesDue(1_000, 30, 0, 50)).toBe(0); // 30 lines: not a full message yet
    expect(messagesDue(1_000, 60, 0, 50)).toBe(1);
    expect(messagesDue(1_000, 110, 50, 50)).toBe(1);
  });

  it('never asks for negative work when ahead of schedule', () => {
    expect(messagesDue(1_000, 10, 500, 50)).toBe(0);
  });
});
