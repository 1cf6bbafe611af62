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
});
