import { chunkLines, collectAll, isBlank, lineFormatHeaderLines } from './insert-chunker';

async function* pieces(text: string, size: number): AsyncGenerator<Buffer> {
  const buf = Buffer.from(text);
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

async function chunks(
  text: string,
  pieceSize: number,
  targetBytes: number,
  headerLines = 0,
): Promise<string[]> {
  const out: string[] = [];
  for await (const c of chunkLines(pieces(text, pieceSize), { targetBytes, maxRowBytes: 64, headerLines }))
    out.push(c.toString());
  return out;
}

const BODY = Array.from({ length: 20 }, (_, i) => `row-${i}\tvalue ${'x'.repeat(i % 7)}\n`).join('');

describe('chunkLines', () => {
  it('cuts at the first line break at or after the target size', async () => {
    const out = await chunks('aaa\nbb\ncccc\nd\n', 100, 5);
    expect(out).toEqual(['aaa\nbb\n', 'cccc\n', 'd\n']);
  });

  it('produces the same chunks however the bytes arrive', async () => {
    const reference = await chunks(BODY, BODY.length, 40);
    expect(reference.length).toBeGreaterThan(3);
    expect(reference.join('')).toBe(BODY);
    for (const pieceSize of [1, 3, 7, 16, 41, 100])
      expect(await chunks(BODY, pieceSize, 40)).toEqual(reference);
  });

  it('repeats header lines at the head of later chunks', async () => {
    const out = await chunks('a\tb\nString\tUInt8\nx\t1\ny\t2\nz\t3\n', 4, 20, 2);
    expect(out).toEqual(['a\tb\nString\tUInt8\nx\t1\n', 'a\tb\nString\tUInt8\ny\t2\nz\t3\n']);
  });

  it('keeps a last row without a line break and drops a blank tail', async () => {
    expect(await chunks('aaaa\nbb', 2, 3)).toEqual(['aaaa\n', 'bb']);
    expect(await chunks('aaaa\n \r', 2, 3)).toEqual(['aaaa\n']);
  });

  it('fails on a row longer than the limit', async () => {
    await expect(chunks('y'.repeat(200), 10, 8)).rejects.toMatchObject({ type: 'INCORRECT_DATA' });
  });
});

describe('format helpers', () => {
  it.each([
    ['TabSeparated', 0],
    ['TSV', 0],
    ['JSONEachRow', 0],
    ['JSONCompactEachRow', 0],
    ['TSVWithNames', 1],
    ['TabSeparatedWithNamesAndTypes', 2],
    ['JSONCompactEachRowWithNames', 1],
    ['CSV', undefined],
    ['RowBinary', undefined],
    ['Values', undefined],
    ['Native', undefined],
  ])('%s has %s header lines', (format, lines) => {
    expect(lineFormatHeaderLines(format)).toBe(lines);
  });

  it('collects bounded bodies and knows blank ones', async () => {
    expect((await collectAll(pieces('abc', 1), 3)).toString()).toBe('abc');
    await expect(collectAll(pieces('abcd', 1), 3)).rejects.toMatchObject({ type: 'TOO_MANY_BYTES' });
    expect(isBlank(Buffer.from(' \r\n\t'))).toBe(true);
    expect(isBlank(Buffer.from(' 1'))).toBe(false);
  });
});
