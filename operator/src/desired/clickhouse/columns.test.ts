import { validateCodecs } from './codecs';
import { SchemaError } from '../../../../common/src/sql/identifiers';
import { renderDefault } from './literals';
import { parseTypeGrammar, type ChType } from './type-grammar';

function t(text: string): ChType {
  const r = parseTypeGrammar(text);
  if (!r.ok) throw new Error(r.message);
  return r.value;
}

function reasonOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (err instanceof SchemaError) return err.reason;
    throw err;
  }
}

describe('codecs', () => {
  it.each([
    ['UInt64', ['T64', 'ZSTD(1)'], ['T64', 'ZSTD(1)']],
    ["DateTime64(3, 'UTC')", ['Delta(8)', 'T64', 'ZSTD(1)'], ['Delta(8)', 'T64', 'ZSTD(1)']],
    ['DateTime', ['DoubleDelta', 'LZ4'], ['DoubleDelta', 'LZ4']],
    ['Float64', ['Gorilla', 'LZ4HC(9)'], ['Gorilla', 'LZ4HC(9)']],
    ['String', ['ZSTD'], ['ZSTD']],
    ['String', ['ZSTD(03)'], ['ZSTD(3)']],
    ['Nullable(UInt32)', ['Delta(4)', 'ZSTD(1)'], ['Delta(4)', 'ZSTD(1)']],
  ])('accepts %s with %j', (type, chain, expected) => {
    expect(validateCodecs(chain, t(type), 'c')).toEqual(expected);
  });

  it.each<[string, unknown, string]>([
    ['String', ['Delta'], 'Delta on a variable-width type'],
    ['UInt16', ['Gorilla'], 'Gorilla on an integer'],
    ['Float64', ['T64'], 'T64 on a float'],
    ['Float64', ['Delta', 'Gorilla'], 'two delta codecs'],
    ['UInt64', ['ZSTD(1)', 'T64'], 'general codec not last'],
    ['UInt64', ['ZSTD(1)', 'LZ4'], 'two general codecs'],
    ['UInt64', ['Delta(3)'], 'Delta width 3'],
    ['UInt64', ['ZSTD(23)'], 'ZSTD level 23'],
    ['UInt64', ['DoubleDelta(2)'], 'argument on an argless codec'],
    ['UInt64', ['NONE'], 'not whitelisted'],
    ['UInt64', ['ZSTD(1)); DROP TABLE t; --'], 'injection'],
    ['UInt64', ['ZSTD(1)\n'], 'newline'],
    ['UInt64', ['zstd(1)'], 'wrong case'],
    ['UInt64', 'ZSTD(1)', 'not a list'],
    ['UInt64', ['T64', 'T64', 'ZSTD(1)'], 'T64 twice'],
  ])('rejects %s with %j (%s)', (type, chain) => {
    expect(reasonOf(() => validateCodecs(chain, t(type), 'c'))).toBe('InvalidCodec');
  });

  it('treats a missing codec as none', () => {
    expect(validateCodecs(undefined, t('String'), 'c')).toEqual([]);
  });
});

describe('defaults', () => {
  it.each([
    ['UInt8', '255', '255'],
    ['Int8', '-128', '-128'],
    [
      'UInt256',
      '115792089237316195423570985008687907853269984665640564039457584007913129639935',
      '115792089237316195423570985008687907853269984665640564039457584007913129639935',
    ],
    ['Float64', '-1.5e3', '-1.5e3'],
    ['Decimal(6, 2)', '1234.56', '1234.56'],
    ['Bool', 'true', 'true'],
    ['String', 'plain', "'plain'"],
    ['String', "'quoted'", "'quoted'"],
    ['String', "''", "''"],
    ['LowCardinality(String)', 'dmz', "'dmz'"],
    ['FixedString(2)', 'TR', "'TR'"],
    ['Nullable(String)', 'NULL', 'NULL'],
    ['UUID', '6F9619FF-8B86-D011-B42D-00CF4FC964FF', "'6f9619ff-8b86-d011-b42d-00cf4fc964ff'"],
    ['IPv4', '10.0.0.1', "'10.0.0.1'"],
    ['IPv6', '::ffff:10.0.0.1', "'::ffff:10.0.0.1'"],
    ['Date', '2025-01-31', "'2025-01-31'"],
    ["DateTime('UTC')", '2025-01-31 23:59:59', "'2025-01-31 23:59:59'"],
    ["DateTime64(3, 'UTC')", "'2025-01-31 23:59:59.123'", "'2025-01-31 23:59:59.123'"],
    ['DateTime', 'now()', 'now()'],
    ["DateTime64(3, 'UTC')", 'now()', 'now64(3)'],
    ["Enum8('allow' = 1, 'deny' = 2)", 'deny', "'deny'"],
    // Comment markers and semicolons are plain content inside one literal that needs no escaping.
    ['String', 'a /* b -- c; d', "'a /* b -- c; d'"],
    ['Nullable(String)', 'null; SELECT 1', "'null; SELECT 1'"],
  ])('renders %s default %j as %s', (type, input, expected) => {
    expect(renderDefault(input, t(type), 'c')).toBe(expected);
  });

  it.each([
    ['UInt8', '256'],
    ['UInt8', '-1'],
    ['Int64', '1+1'],
    ['UInt32', '0x10'],
    ['Float64', 'rand()'],
    ['Decimal(6, 2)', '1.234'],
    ['Decimal(6, 2)', '12345.6'],
    ['Bool', '1'],
    ['String', "it's"],
    ['String', "x'; DROP TABLE t; --"],
    ['String', 'back\\slash'],
    ['String', 'line\nbreak'],
    ['String', ''],
    ['FixedString(2)', 'TUR'],
    ['UUID', 'not-a-uuid'],
    ['IPv4', '::1'],
    ['IPv4', '300.0.0.1'],
    ['Date', '2025-13-01'],
    ['Date', 'now()'],
    ['DateTime', '2025-01-01 00:00:00.5'],
    ["DateTime64(2, 'UTC')", '2025-01-01 00:00:00.123'],
    ['DateTime', 'now() - 1'],
    ['DateTime', 'toDateTime(0)'],
    ["Enum8('allow' = 1)", 'deny'],
    ['Array(UInt8)', '[]'],
    ['Map(String, String)', '{}'],
  ])('rejects %s default %j', (type, input) => {
    expect(reasonOf(() => renderDefault(input, t(type), 'c'))).toBe('InvalidDefault');
  });
});
