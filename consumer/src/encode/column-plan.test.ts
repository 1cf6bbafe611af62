import { BatchEncoder } from './batch';
import { parseColumnType, T_DATETIME64, T_ENUM, T_INT } from '../../../common/src/columns/column-type';
import { ACTION_ENUM } from './reference-columns';

describe('parseColumnType', () => {
  it('unwraps Nullable and LowCardinality and reads parameters', () => {
    expect(parseColumnType('LowCardinality(Nullable(String))')).toMatchObject({ nullable: true, kind: 0 });
    expect(parseColumnType("DateTime64(6, 'Europe/Istanbul')")).toMatchObject({
      kind: T_DATETIME64,
      precision: 6,
    });
    expect(parseColumnType('Nullable(Int32)')).toMatchObject({
      kind: T_INT,
      bits: 32,
      signed: true,
      nullable: true,
    });
    expect(parseColumnType(ACTION_ENUM)).toMatchObject({
      kind: T_ENUM,
      enumNames: ['unknown', 'allow', 'deny', 'drop', 'reset', 'close', 'alert'],
    });
    expect(parseColumnType("Enum8('a,b' = 1, 'it\\'s' = 2)").enumNames).toEqual(['a,b', "it's"]);
  });

  it.each(['Float64', 'Array(String)', 'FixedString(16)', 'Nullable(Foo)', 'Enum8(broken'])(
    'rejects %s',
    (t) => {
      expect(() => parseColumnType(t)).toThrow(RangeError);
    },
  );
});

describe('compileColumnPlan (through BatchEncoder)', () => {
  const make = (
    columns: Array<{ name: string; type: string; source?: string }>,
    staticFields = {},
  ): BatchEncoder => new BatchEncoder({ parser: { format: 'auto' }, columns, staticFields });

  it('skips DEFAULT-only columns and reports the INSERT column list', () => {
    const enc = make(
      [
        { name: 'ts', type: 'DateTime', source: 'timestamp' },
        { name: 'day', type: 'Date' },
        { name: 'site', type: 'LowCardinality(String)', source: 'static:site' },
      ],
      { site: 'ist-1' },
    );
    expect(enc.plan.names).toEqual(['ts', 'site']);
    expect(enc.plan.needsFields).toBe(false);
  });

  it.each([
    [[{ name: 'a', type: 'String', source: 'nope' }], /unknown source/],
    [[{ name: 'a', type: 'IPv4', source: 'src_port' }], /cannot be written/],
    [[{ name: 'a', type: 'UInt32', source: 'timestamp' }], /64-bit/],
    [[{ name: 'a', type: "Enum8('allow' = 1)", source: 'action' }], /enum lacks/],
    [[{ name: 'a', type: 'DateTime', source: 'src_ip' }], /not a time/],
    [[{ name: 'a', type: 'String', source: 'static:missing' }], /no static field/],
    [[{ name: 'a', type: 'UInt8', source: 'static:n' }], /not a valid UInt8/],
    [[{ name: 'a', type: 'String', source: 'field:' }], /empty field key/],
    [
      [
        { name: 'a', type: 'String', source: 'raw' },
        { name: 'a', type: 'String', source: 'raw' },
      ],
      /duplicate/,
    ],
    [[{ name: 'a', type: 'String' }], /no columns/],
  ])('rejects invalid plans (%#)', (columns, error) => {
    expect(() => make(columns as never, { n: '300' })).toThrow(error);
  });
});
