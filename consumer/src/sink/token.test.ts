import { batchToken, deadLetterToken, keyGroupToken, rowRangeToken, tokenSalt } from './token';

describe('deduplication tokens', () => {
  it('are a pure function of topic, partition, range and salt', () => {
    const salt = tokenSalt('uid-1', 'logs', 'fw');
    expect(salt).toMatch(/^[0-9a-f]{12}$/);
    expect(tokenSalt('uid-1', 'logs', 'fw')).toBe(salt);
    expect(batchToken('t', 3, 100, 199, salt)).toBe(`t/3/100-199/${salt}`);
  });

  it('differ across pipelines, tables, partitions and ranges', () => {
    const a = tokenSalt('uid-1', 'logs', 'fw');
    expect(tokenSalt('uid-2', 'logs', 'fw')).not.toBe(a);
    expect(tokenSalt('uid-1', 'logs', 'fw2')).not.toBe(a);
    // The separator keeps ('a','bc') and ('ab','c') apart.
    expect(tokenSalt('u', 'a', 'bc')).not.toBe(tokenSalt('u', 'ab', 'c'));
    const tokens = new Set([
      batchToken('t', 0, 0, 9, a),
      batchToken('t', 1, 0, 9, a),
      batchToken('t', 0, 0, 8, a),
      batchToken('t', 0, 1, 9, a),
    ]);
    expect(tokens.size).toBe(4);
  });

  it('derive row-range and dead-letter tokens from the batch token', () => {
    expect(rowRangeToken('t/0/0-9/s', 0, 5)).toBe('t/0/0-9/s#rows0-5');
    expect(deadLetterToken('t/0/0-9/s')).toBe('t/0/0-9/s#dlq');
    expect(keyGroupToken('t/0/0-9/s', 19000, 19099)).toBe('t/0/0-9/s#keys19000..19099');
    // A row range bisected inside a key group stays distinct from the batch's own row ranges.
    expect(rowRangeToken(keyGroupToken('t/0/0-9/s', -3, 5), 0, 5)).toBe('t/0/0-9/s#keys-3..5#rows0-5');
  });
});
