import { BinaryOutput } from './binary-output';

describe('BinaryOutput row index', () => {
  it('indexes committed rows and forgets rows rolled back with their bytes', () => {
    const out = new BinaryOutput(16);
    for (const s of ['ab', 'cde', 'f']) {
      const start = out.pos;
      out.string(Buffer.from(s), 0, s.length);
      out.commitRow(start);
    }
    // A line whose row was committed and then rolled back (it threw after writeRow).
    const mark = out.pos;
    out.string(Buffer.from('zz'), 0, 2);
    out.commitRow(mark);
    out.pos = mark;
    out.dropRowsFrom(mark);
    expect(Array.from(out.rowIndex())).toEqual([0, 3, 7, 9]);
    expect(out.buf.subarray(0, out.pos).toString('latin1')).toBe('\x02ab\x03cde\x01f');
  });
});
