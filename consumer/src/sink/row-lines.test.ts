import { BatchEncoder } from '../encode/batch';
import { REFERENCE_COLUMNS } from '../encode/reference-columns';
import { generateSampleLines } from '../../../test/fixtures/samples';
import { countLines, rowBoundaries, rowSources } from './row-lines';

const unescapeTsv = (s: string) =>
  s.replace(/\\(.)/g, (_, c: string) => ({ t: '\t', n: '\n', r: '\r', '\\': '\\' })[c] ?? c);

describe('countLines', () => {
  it('counts lines the way the encoder splits them', () => {
    expect(countLines(null)).toBe(1);
    expect(countLines(Buffer.from(''))).toBe(1);
    expect(countLines(Buffer.from('a'))).toBe(1);
    expect(countLines(Buffer.from('a\n'))).toBe(1);
    expect(countLines(Buffer.from('a\nb'))).toBe(2);
    expect(countLines(Buffer.from('a\r\nb\r\n'))).toBe(2);
    expect(countLines(Buffer.from('\n\n'))).toBe(2);
  });
});

describe('rowBoundaries', () => {
  it('lists row starts plus the end', () => {
    expect([...rowBoundaries(Buffer.from('a\tb\nc\n'))]).toEqual([0, 4, 6]);
    expect([...rowBoundaries(Buffer.from('a\nb'))]).toEqual([0, 2, 3]);
    expect([...rowBoundaries(Buffer.alloc(0))]).toEqual([0]);
  });
});

describe('rowSources', () => {
  it('maps every encoded row to the line it came from, skipping dead letters', () => {
    const encoder = new BatchEncoder({
      parser: { format: 'auto', timezone: 'UTC' },
      columns: REFERENCE_COLUMNS,
    });
    const lines = generateSampleLines('mix', 30, { seed: 3 });
    lines[4] = Buffer.from('not a log line at all');
    lines[17] = Buffer.from('');
    const join = (ls: Buffer[]) =>
      Buffer.concat(ls.flatMap((l, i) => (i === 0 ? [l] : [Buffer.from('\r\n'), l])));
    const messages = [
      { topic: 't', partition: 0, offset: 10, value: join(lines.slice(0, 10)) },
      { topic: 't', partition: 0, offset: 11, value: lines[10] },
      { topic: 't', partition: 0, offset: 12, value: join(lines.slice(11, 30)) },
    ];
    const enc = encoder.encode(messages, Date.UTC(2024, 0, 15, 12));
    // Issue 12: the empty line is counted as blank, no longer dead-lettered.
    expect(enc.deadLetters.length).toBeGreaterThanOrEqual(1);
    expect(enc.blankLines).toBe(1);
    const sources = rowSources(messages, enc.deadLetters, enc.rows)!;
    expect(sources).toHaveLength(enc.rows);
    const body = Buffer.from(enc.data);
    const bounds = rowBoundaries(body);
    const rawIndex = REFERENCE_COLUMNS.findIndex((c) => c.source === 'raw');
    for (let r = 0; r < enc.rows; r++) {
      const row = body
        .subarray(bounds[r], bounds[r + 1] - 1)
        .toString('utf8')
        .split('\t');
      expect(unescapeTsv(row[rawIndex])).toBe(sources[r].line.toString('utf8'));
    }
    expect(rowSources(messages, enc.deadLetters, enc.rows + 1)).toBeNull();
  });
});
