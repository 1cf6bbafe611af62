import { createHash } from 'node:crypto';
import type { LinkRecord } from '../../../common/src/integrity/chain';
import { columnAlternatives } from './verify';
import { FindingSink } from './verify-report';
import { LinkQueue } from './verify-link-queue';
import { RowChecker } from './verify-rows';

const col = (name: string) => ({ name, type: name === 'kafka_line' ? 'UInt32' : 'String' });
const desc = {
  columns: ['raw', 'kafka_line', 'sender_ip'].map(col),
  hasLine: true,
  lineColumn: 'kafka_line',
};

describe('columnAlternatives', () => {
  it('streams every stored column and projects the primary list first, then the other lists', () => {
    const old = ['raw', 'kafka_line'].map(col);
    expect(columnAlternatives(desc, old, [old], false)).toEqual({
      stream: desc.columns,
      projections: [
        [0, 1],
        [0, 1, 2],
      ],
    });
  });

  it('is undefined with one list, with --columns, without a line column or for dropped columns', () => {
    expect(columnAlternatives(desc, desc.columns, [desc.columns], false)).toBeUndefined();
    expect(columnAlternatives(desc, ['raw', 'kafka_line'].map(col), [], true)).toBeUndefined();
    expect(columnAlternatives({ ...desc, hasLine: false }, [col('raw')], [], false)).toBeUndefined();
    expect(columnAlternatives(desc, ['raw', 'kafka_line', 'gone'].map(col), [], false)).toBeUndefined();
  });
});

describe('RowChecker with column projections', () => {
  const digest = (rows: string[]) => createHash('sha256').update(rows.join('')).digest('hex');
  const link = (partition: number, first: number, rows: string[]): LinkRecord =>
    ({
      partition,
      firstOffset: first,
      lastOffset: first,
      rowCount: rows.length,
      batchDigest: digest(rows),
      minTsMs: 0,
      maxTsMs: 0,
    }) as LinkRecord;

  async function check(lines: string[], links: LinkRecord[]) {
    const sink = new FindingSink();
    const it = links[Symbol.iterator]();
    const source = { next: async () => it.next() } as AsyncIterator<LinkRecord>;
    const checker = new RowChecker(new LinkQueue(source), sink, undefined, [
      [0, 1],
      [0, 1, 2],
    ]);
    const buf = Buffer.from(lines.join(''));
    await checker.feed({ buf, start: 0, end: buf.length });
    await checker.finish();
    return { stats: checker.stats, findings: sink.findings };
  }

  it('verifies a batch hashed before the column existed and one hashed with it', async () => {
    const { stats, findings } = await check(
      ['0\t1\ta\t0\t00\n', '0\t2\tb\t0\tff\n'],
      [link(0, 1, ['a\t0\n']), link(0, 2, ['b\t0\tff\n'])],
    );
    expect(findings).toEqual([]);
    expect(stats).toMatchObject({ batchesVerified: 2, batchesVerifiedWithOtherColumns: 1 });
  });

  it('still finds a changed value under every list', async () => {
    const { findings } = await check(
      ['0\t1\tX\t0\t00\n', '0\t2\tb\t0\tee\n'],
      [link(0, 1, ['a\t0\n']), link(0, 2, ['b\t0\tff\n'])],
    );
    expect(findings.map((f) => [f.kind, f.firstOffset])).toEqual([
      ['modified', 1],
      ['modified', 2],
    ]);
  });
});
