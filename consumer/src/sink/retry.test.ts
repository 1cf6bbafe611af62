import { ClickHouseError } from '@clickhouse/client';
import { backoffMs } from '../../../common/src/timing';
import {
  classifyInsertError,
  CLICKHOUSE_ERROR_CLASSES,
  errorClass,
  errorReason,
  UNKNOWN_ERROR_ATTEMPTS,
} from './retry';

describe('classifyInsertError', () => {
  it('treats ClickHouse data errors as rejected rows', () => {
    const err = new ClickHouseError({
      message: 'Cannot parse input',
      code: '27',
      type: 'CANNOT_PARSE_INPUT_ASSERTION_FAILED',
    });
    expect(classifyInsertError(err)).toBe('rejected');
    expect(classifyInsertError(new ClickHouseError({ message: 'x', code: '53' }))).toBe('rejected');
  });

  it('retries everything else: network, timeouts, overload, missing table, auth, unknown', () => {
    const econn = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), { code: 'ECONNREFUSED' });
    expect(classifyInsertError(econn)).toBe('retriable');
    expect(classifyInsertError(new Error('Timeout error.'))).toBe('retriable');
    expect(
      classifyInsertError(
        new ClickHouseError({ message: 'Too many parts', code: '252', type: 'TOO_MANY_PARTS' }),
      ),
    ).toBe('retriable');
    expect(
      classifyInsertError(new ClickHouseError({ message: 'no table', code: '60', type: 'UNKNOWN_TABLE' })),
    ).toBe('retriable');
    expect(
      classifyInsertError(
        new ClickHouseError({ message: 'auth', code: '516', type: 'AUTHENTICATION_FAILED' }),
      ),
    ).toBe('retriable');
    // A plain Error whose code happens to look like a data code is not a server verdict.
    expect(classifyInsertError(Object.assign(new Error('x'), { code: '27' }))).toBe('retriable');
    expect(classifyInsertError(undefined)).toBe('retriable');
  });
});

describe('backoffMs', () => {
  it('grows exponentially and is capped, with half of each delay fixed', () => {
    const none = () => 0;
    const full = () => 1;
    expect([0, 1, 2, 3].map((a) => backoffMs(a, undefined, full))).toEqual([200, 400, 800, 1600]);
    expect(backoffMs(0, undefined, none)).toBe(100);
    expect(backoffMs(50, undefined, full)).toBe(10_000);
    expect(backoffMs(50, undefined, none)).toBe(5_000);
  });
});

describe('errorReason', () => {
  it('is one bounded line', () => {
    expect(errorReason(new Error('a\n  b\tc'))).toBe('a b c');
    expect(errorReason('x'.repeat(50), 10)).toHaveLength(10);
  });
});

describe('retry doctrine: errorClass', () => {
  const ch = (message: string, code: string, type?: string) => new ClickHouseError({ message, code, type });

  it('maps every table entry, by name and by code alone', () => {
    for (const [type, { code, cls }] of Object.entries(CLICKHOUSE_ERROR_CLASSES)) {
      expect(errorClass(ch('x', code, type))).toBe(cls);
      expect(errorClass(ch('x', code))).toBe(cls);
    }
  });

  it('names the four classes on typical errors', () => {
    expect(errorClass(ch('Cannot parse input', '27', 'CANNOT_PARSE_INPUT_ASSERTION_FAILED'))).toBe('data');
    expect(errorClass(ch('Table default.x does not exist', '60', 'UNKNOWN_TABLE'))).toBe('unavailable');
    expect(
      errorClass(
        ch('Too many parts (300). Merges are processing significantly slower', '252', 'TOO_MANY_PARTS'),
      ),
    ).toBe('unavailable');
    expect(
      errorClass(
        ch(
          'Too many partitions for single INSERT block (more than 100). The limit is controlled by',
          '252',
          'TOO_MANY_PARTS',
        ),
      ),
    ).toBe('split');
    expect(errorClass(ch('something new', '123456', 'SOMETHING_NEW'))).toBe('unknown');
    expect(errorClass(ch('something new', '123456'))).toBe('unknown');
    expect(errorClass(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(
      'unavailable',
    );
  });

  it('keeps the coarse verdict: data and split bisect, the rest retries first', () => {
    expect(
      classifyInsertError(ch('Too many partitions for single INSERT block', '252', 'TOO_MANY_PARTS')),
    ).toBe('rejected');
    expect(classifyInsertError(ch('x', '999999'))).toBe('retriable');
    expect(UNKNOWN_ERROR_ATTEMPTS).toBeGreaterThan(0);
  });
});
