import { deadLetterMessages, encodeDeadLetterRows, reasonLabel } from './dead-letter';

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
