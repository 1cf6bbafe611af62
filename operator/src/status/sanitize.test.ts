import { MAX_ERROR_MESSAGE, redactCredentials, sanitizeMessage } from './sanitize';

describe('sanitizeMessage', () => {
  it('keeps a short one-line message as it is', () => {
    expect(sanitizeMessage(new Error('topic x has 3 partitions'))).toBe('topic x has 3 partitions');
  });

  it('keeps only the first non-empty line', () => {
    expect(sanitizeMessage('\n  first line\nsecond\n at stack (x.js:1)')).toBe('first line');
  });

  it('replaces a foreign HTML body (e.g. a proxy page) by a note', () => {
    const body = `<!DOCTYPE html><html><head><title>502</title></head><body>${'x'.repeat(32_000)}</body></html>`;
    const out = sanitizeMessage(new Error(`statement failed (SELECT 1): ${body}`));
    expect(out).toBe('statement failed (SELECT 1): [markup body omitted]');
  });

  it('cuts long messages to 256 characters with an ellipsis', () => {
    const out = sanitizeMessage('a'.repeat(10_000));
    expect([...out]).toHaveLength(MAX_ERROR_MESSAGE);
    expect(out.endsWith('…')).toBe(true);
  });

  it('never splits a multi-byte character when cutting', () => {
    const out = sanitizeMessage('ğ'.repeat(300));
    expect(out).toBe(`${'ğ'.repeat(255)}…`);
  });

  it('redacts credentials in URLs and broker addresses', () => {
    expect(sanitizeMessage('connect http://admin:s3cret@ch.example:8123/ failed')).toBe(
      'connect http://***@ch.example:8123/ failed',
    );
    expect(redactCredentials('brokers user:pw@kafka-0:9092,kafka-1:9092')).toBe(
      'brokers ***@kafka-0:9092,kafka-1:9092',
    );
    expect(redactCredentials('https://token@host/x')).toBe('https://***@host/x');
  });

  it('drops control characters and names an empty error', () => {
    expect(sanitizeMessage('bad\u001b[31m red')).toBe('bad[31m red');
    expect(sanitizeMessage(new Error(''))).toBe('unknown error');
    expect(sanitizeMessage(42)).toBe('42');
  });

  it('keeps comparison operators that are not markup', () => {
    expect(sanitizeMessage('partitions 3 < 5 requested')).toBe('partitions 3 < 5 requested');
  });
});
