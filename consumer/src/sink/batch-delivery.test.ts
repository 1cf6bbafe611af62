import { ClickHouseError } from '@clickhouse/client';
import { BatchDelivery, type BatchJob } from './batch-delivery';
import type { ClickHouseSink } from './clickhouse-sink';
import { UNKNOWN_ERROR_ATTEMPTS } from './retry';

/** A sink that refuses any body holding `bad` with `err`, and counts attempts per body. */
function sink(err: () => Error): { sink: ClickHouseSink; attempts: Map<string, number>; stored: string[] } {
  const attempts = new Map<string, number>();
  const stored: string[] = [];
  const fake = {
    async insert(_target: string, body: Buffer) {
      const text = body.toString();
      attempts.set(text, (attempts.get(text) ?? 0) + 1);
      if (text.includes('bad')) throw err();
      stored.push(text);
      return { writtenRows: 1 };
    },
    hasDeadLetterTable: () => false,
  };
  return { sink: fake as unknown as ClickHouseSink, attempts, stored };
}

function job(lines: string[]): BatchJob {
  return {
    topic: 't',
    partition: 0,
    firstOffset: 0,
    lastOffset: 0,
    ingestMs: 1,
    token: 'tok',
    body: Buffer.from(lines.map((l) => `${l}\n`).join('')),
    rows: lines.length,
    messages: [{ topic: 't', partition: 0, offset: '0', value: Buffer.from(lines.join('\n')) }],
    parseDeadLetters: [],
  };
}

const fast = { initialMs: 1, maxMs: 1, factor: 1 };

describe('BatchDelivery under the retry doctrine', () => {
  it('gives an unknown error bounded attempts, then bisects and dead-letters only the culprit', async () => {
    const s = sink(() => new ClickHouseError({ message: 'brand new failure', code: '987654' }));
    const d = new BatchDelivery(s.sink, undefined, 'ns/p', {}, fast);
    const out = await d.deliver(job(['a', 'bad', 'c', 'd']), new AbortController().signal);
    expect(s.attempts.get('a\nbad\nc\nd\n')).toBe(UNKNOWN_ERROR_ATTEMPTS);
    expect(out.rowsInserted).toBe(3);
    expect(out.deadLetters.map((x) => x.line.toString())).toEqual(['bad']);
    expect(out.deadLetters[0].reason).toMatch(/^clickhouse: brand new failure/);
  });

  it('splits a batch spanning too many partitions instead of retrying it whole', async () => {
    const s = sink(
      () =>
        new ClickHouseError({
          message: 'Too many partitions for single INSERT block (more than 100)',
          code: '252',
          type: 'TOO_MANY_PARTS',
        }),
    );
    const d = new BatchDelivery(s.sink, undefined, 'ns/p', {}, fast);
    const out = await d.deliver(job(['a', 'b', 'c', 'bad']), new AbortController().signal);
    expect(s.attempts.get('a\nb\nc\nbad\n')).toBe(1);
    expect(s.stored).toEqual(['a\nb\n', 'c\n']);
    expect(out.rowsInserted).toBe(3);
  });

  it('bisects a RowBinary body at its row index (no delimiters) and sends the RowBinary format', async () => {
    // Rows with no separator at all: only the encoder's row starts can cut them.
    const rows = ['aa', 'bad', 'c', 'dddd'];
    const body = Buffer.from(rows.join(''));
    const rowStarts = new Uint32Array([0, 2, 5, 6, 10]);
    const seen: Array<[string, string | undefined]> = [];
    const fake = {
      async insert(_t: string, b: Buffer, _tok: string, _s: AbortSignal, format?: string) {
        seen.push([b.toString(), format]);
        if (b.toString().includes('bad')) throw new ClickHouseError({ message: 'Cannot parse', code: '27' });
        return { writtenRows: 1 };
      },
      hasDeadLetterTable: () => false,
    } as unknown as ClickHouseSink;
    const base = { ...job(rows), body, format: 'RowBinary' as const, rowStarts };
    const d = new BatchDelivery(fake, undefined, 'ns/p', {}, fast);
    const whole = await d.deliver(base, new AbortController().signal);
    expect(whole.rejectedRows).toEqual([1]);
    expect(whole.rowsInserted).toBe(3);
    expect(seen.every(([, f]) => f === 'RowBinary')).toBe(true);
    // Every stored piece is a whole run of rows: cut exactly at row starts.
    const stored = seen.filter(([b]) => !b.includes('bad')).map(([b]) => b);
    for (const piece of stored) expect(['aa', 'c', 'dddd', 'cdddd']).toContain(piece);
    expect(stored.join('').length).toBe(7);
  });

  it('regroups a RowBinary body by partition key using the row index, rejected rows in batch numbering', async () => {
    // 150 rows of varying length, 150 distinct keys (descending): two groups, rows reversed.
    const rows = Array.from({ length: 150 }, (_, i) => (i === 7 ? 'bad' : `r${i}:`.padEnd(3 + (i % 5), 'x')));
    const starts = new Uint32Array(rows.length + 1);
    rows.forEach((r, i) => (starts[i + 1] = starts[i] + r.length));
    const stored: string[] = [];
    const fake = {
      async insert(_t: string, b: Buffer) {
        if (b.toString().includes('bad')) throw new ClickHouseError({ message: 'Cannot parse', code: '27' });
        stored.push(b.toString());
        return { writtenRows: 1 };
      },
      hasDeadLetterTable: () => false,
    } as unknown as ClickHouseSink;
    const d = new BatchDelivery(fake, undefined, 'ns/p', {}, fast);
    const out = await d.deliver(
      {
        ...job(rows),
        body: Buffer.from(rows.join('')),
        format: 'RowBinary',
        rowStarts: starts,
        partitionKeys: Float64Array.from(rows, (_, i) => 1000 - i),
      },
      new AbortController().signal,
    );
    expect(out.rejectedRows).toEqual([7]);
    expect(out.rowsInserted).toBe(149);
    // Each stored piece is a run of whole rows in key order; together they are every good row once.
    const keyOrder = [...rows].reverse();
    const pieces = stored.map((p) => {
      const at = keyOrder.findIndex((_, k) => keyOrder.slice(k).join('').startsWith(p));
      const n = keyOrder.slice(at).findIndex((_, k) => keyOrder.slice(at, at + k + 1).join('') === p);
      expect(at >= 0 && n >= 0).toBe(true);
      return keyOrder.slice(at, at + n + 1);
    });
    expect(pieces.flat().sort()).toEqual(rows.filter((r) => r !== 'bad').sort());
  });
});
