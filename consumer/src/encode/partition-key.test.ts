import { BatchEncoder } from './batch';
import { compilePartitionKey } from './partition-key';
import { REFERENCE_COLUMNS } from './reference-columns';

const cols = (type: string, source = 'timestamp') => [{ name: 'ts', type, source }];
const at = (iso: string) => Date.parse(iso);

describe('compilePartitionKey', () => {
  it('computes the operator key forms in the column time zone', () => {
    const day = compilePartitionKey({ column: 'ts', function: 'toYYYYMMDD' }, cols("DateTime64(3, 'UTC')"))!;
    expect(day(at('2024-03-01T23:59:59Z'), 0)).toBe(day(at('2024-03-01T00:00:00Z'), 0));
    expect(day(at('2024-03-02T00:00:00Z'), 0)).toBe(day(at('2024-03-01T00:00:00Z'), 0) + 1);
    const ist = compilePartitionKey(
      { column: 'ts', function: 'toYYYYMMDD' },
      cols("DateTime('Europe/Istanbul')"),
    )!;
    // 22:30 UTC is 01:30 next day in Istanbul (+03:00).
    expect(ist(at('2024-03-01T22:30:00Z'), 0)).toBe(day(at('2024-03-02T12:00:00Z'), 0));
    const month = compilePartitionKey({ column: 'ts', function: 'toYYYYMM' }, cols('DateTime'))!;
    expect(month(at('2024-01-31T10:00:00Z'), 0)).toBe(2024 * 12);
    expect(month(at('2024-02-01T10:00:00Z'), 0)).toBe(2024 * 12 + 1);
    const hour = compilePartitionKey({ column: 'ts', function: 'toStartOfHour' }, cols('DateTime'))!;
    expect(hour(at('2024-01-01T10:59:59Z'), 0)).toBe(hour(at('2024-01-01T10:00:00Z'), 0));
    const monday = compilePartitionKey({ column: 'ts', function: 'toMonday' }, cols('DateTime'))!;
    // 2024-03-04 is a Monday: Sunday the 3rd is in the week before, Sunday the 10th in the same week.
    expect(monday(at('2024-03-03T12:00:00Z'), 0)).toBe(monday(at('2024-03-04T12:00:00Z'), 0) - 1);
    expect(monday(at('2024-03-10T12:00:00Z'), 0)).toBe(monday(at('2024-03-04T12:00:00Z'), 0));
    const ingest = compilePartitionKey(
      { column: 'ts', function: 'toDate' },
      cols('DateTime', 'ingest_time'),
    )!;
    expect(ingest(at('2020-01-01T00:00:00Z'), at('2024-01-01T00:00:00Z'))).toBe(19723);
  });

  it('falls back to the ingest time for rows without a clock', () => {
    const day = compilePartitionKey({ column: 'ts', function: 'toYYYYMMDD' }, cols('DateTime'))!;
    expect(day(NaN, at('2024-01-01T05:00:00Z'))).toBe(19723);
  });

  it('yields null for forms the worker cannot compute', () => {
    expect(compilePartitionKey(undefined, cols('DateTime'))).toBeNull();
    expect(
      compilePartitionKey({ column: 'site' }, [{ name: 'site', type: 'String', source: 'static:site' }]),
    ).toBeNull();
    expect(compilePartitionKey({ column: 'nope', function: 'toDate' }, cols('DateTime'))).toBeNull();
  });
});

describe('BatchEncoder partition keys', () => {
  it('records one key per stored row, in row order', () => {
    const enc = new BatchEncoder({
      parser: { format: 'auto', timezone: 'UTC' },
      columns: REFERENCE_COLUMNS.map((c) => ({ name: c.name, type: c.type, source: c.source! })),
      partitionKey: { column: 'ts', function: 'toYYYYMMDD' },
    });
    const line = (d: string) => `date=${d} time=10:00:00 srcip=10.0.0.1 dstip=10.0.0.2 action=deny`;
    const value = Buffer.from([line('2024-01-01'), 'garbage \u0001', line('2024-01-03')].join('\n'));
    const out = enc.encode([{ topic: 't', partition: 0, offset: '0', value }], at('2024-06-01T00:00:00Z'));
    expect(out.rows).toBe(2);
    expect([...out.partitionKeys!]).toEqual([19723, 19725]);
  });
});
