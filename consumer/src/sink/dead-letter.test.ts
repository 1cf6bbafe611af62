import {
  deadLetterMessages,
  encodeDeadLetterRows,
  reasonLabel,
  chunkDeadLetterMessages,
} from './dead-letter';

const rec = (line: string, offset: number, reason = 'unknown_format') => ({
  reason,
  line: Buffer.from(line),
  topic: 'fw',
  partition: 2,
  offset,
  lineIndex: 1,
});

describe('dead letters', () => {
  it('encode as TSV rows of the _dlq contract with escaping and the batch ingest time', () => {
    const body = encodeDeadLetterRows(
      [rec('a\tb\\c', 7), rec('x', 8, 'clickhouse: Cannot parse\n"é"')],
      1_700_000_000_123,
    );
    expect(body.toString('utf8')).toBe(
      '1700000000.123\tunknown_format\ta\\tb\\\\c\tfw\t2\t7\n' +
        '1700000000.123\tclickhouse: Cannot parse\\n"é"\tx\tfw\t2\t8\n',
    );
    // Deterministic bytes for the same input.
    expect(encodeDeadLetterRows([rec('x', 8)], 5).equals(encodeDeadLetterRows([rec('x', 8)], 5))).toBe(true);
  });

  it('become topic messages keyed by partition:offset with the source in headers', () => {
    const [m] = deadLetterMessages([rec('raw bytes', 42)], 'ns/p');
    expect(m.key).toBe('2:42');
    expect(m.value.toString()).toBe('raw bytes');
    expect(m.headers).toEqual({
      reason: 'unknown_format',
      source_topic: 'fw',
      source_partition: '2',
      source_offset: '42',
      line_index: '1',
      pipeline: 'ns/p',
    });
  });

  it('label ClickHouse rejections with one bounded value', () => {
    expect(reasonLabel('clickhouse: anything at all')).toBe('clickhouse_rejected');
    expect(reasonLabel('bad_timestamp')).toBe('bad_timestamp');
  });
});

describe('chunkDeadLetterMessages (issue 12)', () => {
  const letter = (i: number, bytes: number) => ({
    key: `0:${i}`,
    value: Buffer.alloc(bytes, 97),
    headers: { reason: 'bad_kv', pipeline: 'ns/p' },
  });

  it('keeps every send under the limit, in order, losing nothing', () => {
    const messages = Array.from({ length: 1000 }, (_, i) => letter(i, 900));
    const chunks = chunkDeadLetterMessages(messages, 100_000);
    expect(chunks.length).toBeGreaterThan(9);
    expect(chunks.flat()).toEqual(messages);
    for (const c of chunks) {
      const bytes = c.reduce((n, m) => n + m.value.length + m.key.length + 200, 0);
      expect(bytes).toBeLessThanOrEqual(100_000 + c.length * 200);
    }
  });

  it('truncates a single record larger than the limit, saying so in a header', () => {
    const [[big]] = chunkDeadLetterMessages([letter(0, 5_000_000)], 1_000_000);
    expect(big.value.length).toBeLessThan(1_000_000);
    expect(big.value.length).toBeGreaterThan(900_000);
    expect(big.headers.truncated_from_bytes).toBe('5000000');
  });
});
