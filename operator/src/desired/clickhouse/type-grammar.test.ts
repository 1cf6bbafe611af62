import { normalizeColumnType, parseTypeGrammar } from './type-grammar';

function norm(text: string): string {
  const r = normalizeColumnType(text);
  if (!r.ok) throw new Error(r.message);
  return r.value;
}

describe('ClickHouse type grammar', () => {
  it.each([
    ['UInt8', 'UInt8'],
    ['Int256', 'Int256'],
    ['Float32', 'Float32'],
    ['String', 'String'],
    ['UUID', 'UUID'],
    ['Bool', 'Bool'],
    ['Date32', 'Date32'],
    ['IPv4', 'IPv4'],
    ['IPv6', 'IPv6'],
    ['Decimal(18,4)', 'Decimal(18, 4)'],
    ['FixedString( 64 )', 'FixedString(64)'],
    ['DateTime', 'DateTime'],
    ["DateTime('Europe/Istanbul')", "DateTime('Europe/Istanbul')"],
    ['DateTime64(3)', 'DateTime64(3)'],
    ["DateTime64(3,'UTC')", "DateTime64(3, 'UTC')"],
    ["Enum8('a'=1,'b' = -2)", "Enum8('a' = 1, 'b' = -2)"],
    ["Enum16('x'=1000)", "Enum16('x' = 1000)"],
    ['LowCardinality(String)', 'LowCardinality(String)'],
    ['LowCardinality(Nullable(FixedString(2)))', 'LowCardinality(Nullable(FixedString(2)))'],
    ['Nullable(IPv6)', 'Nullable(IPv6)'],
    ['Array(Array(UInt16))', 'Array(Array(UInt16))'],
    ['Map(String,Array(Nullable(Decimal(10,2))))', 'Map(String, Array(Nullable(Decimal(10, 2))))'],
    ['Map(LowCardinality(String), UInt64)', 'Map(LowCardinality(String), UInt64)'],
  ])('accepts %s as %s', (input, expected) => {
    expect(norm(input)).toBe(expected);
  });

  it.each([
    ['', 'empty'],
    ['string', 'wrong case'],
    ['Int512', 'unknown width'],
    ['Decimal(77, 2)', 'precision too big'],
    ['Decimal(10, 11)', 'scale above precision'],
    ['DateTime64(10)', 'precision above 9'],
    ['DateTime64', 'missing precision'],
    ["Enum8('a' = 200)", 'Enum8 value out of range'],
    ["Enum8('a' = 1, 'a' = 2)", 'duplicate label'],
    ["Enum8('a' = 1, 'b' = 1)", 'duplicate value'],
    ['Nullable(Nullable(String))', 'nested Nullable'],
    ['Nullable(Array(String))', 'Nullable Array'],
    ['LowCardinality(UInt8)', 'suspicious LowCardinality'],
    ['Map(Float64, String)', 'float map key'],
    ['Array(String', 'unbalanced'],
    ['String)', 'trailing text'],
    ['Array(Array(Array(Array(Array(Array(Array(UInt8)))))))', 'too deep'],
    ['FixedString(0)', 'zero length'],
    ["DateTime('Europe/Istanbul'); DROP TABLE x --')", 'injection after the type'],
    ["DateTime('UTC\\')", 'backslash in a string'],
    ["DateTime('a b')", 'space in a timezone'],
    ['String\n', 'newline'],
    ['String\t', 'tab'],
    ['String /* c */', 'comment'],
    ['String -- c', 'line comment'],
    ['`String`', 'backticks'],
    ["Enum8('it''s' = 1)", 'doubled quote'],
    ['Nested(a UInt8)', 'Nested is not in the grammar'],
    ['AggregateFunction(sum, UInt64)', 'AggregateFunction is not in the grammar'],
  ])('rejects %j (%s)', (input) => {
    const r = parseTypeGrammar(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toBe('InvalidColumnType');
  });

  it('rejects non-strings and very long input', () => {
    expect(parseTypeGrammar(42).ok).toBe(false);
    expect(parseTypeGrammar(`Array(${'UInt8'.repeat(300)})`).ok).toBe(false);
  });

  it('keeps the parsed structure', () => {
    const r = parseTypeGrammar("Nullable(DateTime64(6, 'UTC'))");
    expect(r).toEqual({
      ok: true,
      value: { kind: 'nullable', inner: { kind: 'dateTime64', precision: 6, timezone: 'UTC' } },
    });
  });
});
