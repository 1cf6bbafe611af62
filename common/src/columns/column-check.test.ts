import { checkColumns, isKnownSource } from './column-check';
import { SOURCES } from './sources';

describe('checkColumns', () => {
  it('accepts standard, static and field sources and skips DEFAULT-only columns', () => {
    const columns = [
      { name: 'ts', type: 'DateTime64(3)', source: 'timestamp' },
      { name: 'site', type: 'LowCardinality(String)', source: 'static:site' },
      { name: 'x', type: 'String', source: 'field:devname' },
      { name: 'day', type: 'Date' },
    ];
    expect(checkColumns(columns, { site: 'ist-1' })).toEqual([]);
  });

  it('names the column index and field of every problem, in column order', () => {
    const columns = [
      { name: 'ok', type: 'String', source: 'raw' },
      { name: 'site', type: 'LowCardinality(String)', source: 'srcaddr' },
      { name: 'p', type: 'IPv4', source: 'src_port' },
      { name: 'f', type: 'Float64', source: 'bytes' },
      { name: 'ok', type: 'String', source: 'message' },
      { name: 's', type: 'String', source: 'static:nope' },
    ];
    expect(checkColumns(columns, {})).toEqual([
      { index: 1, field: 'source', message: 'column site: unknown source "srcaddr"' },
      {
        index: 2,
        field: 'source',
        message: 'column p: source src_port cannot be written as IPv4: numbers need an integer or String',
      },
      { index: 3, field: 'type', message: 'unsupported column type for the encoder: Float64' },
      { index: 4, field: 'name', message: 'duplicate column ok' },
      { index: 5, field: 'source', message: 'column s: no static field "nope"' },
    ]);
  });

  it('knows every standard source and the two prefixes, nothing else', () => {
    for (const s of SOURCES) expect(isKnownSource(s)).toBe(true);
    expect(isKnownSource('static:a')).toBe(true);
    expect(isKnownSource('field:a')).toBe(true);
    expect(isKnownSource('srcaddr')).toBe(false);
  });
});
