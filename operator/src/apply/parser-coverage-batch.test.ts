import { resolveSpec } from '../api/defaults';
import type { LogPipeline } from '../api/types';
import { buildBatchedCoverageQuery, CoverageReader, type CoverageExecutor } from './parser-coverage';

const spec = (table: string) =>
  resolveSpec({
    apiVersion: 'logpipeline.io/v1alpha1',
    kind: 'LogPipeline',
    metadata: { name: table, namespace: 'isp', uid: 'u' },
    spec: {
      kafka: { bootstrapServers: ['k:9092'] },
      clickhouse: { url: 'http://ch:8123', database: 'logs', table },
    },
  } as LogPipeline);

describe('CoverageReader', () => {
  it('reads the coverage of many pipelines in one query and reuses it', async () => {
    const queries: string[] = [];
    const run: CoverageExecutor = async <T>(query: string) => {
      queries.push(query);
      const n = query.split(' UNION ALL ').length;
      return Array.from({ length: n }, (_, i) => ({
        i,
        rows: String(10 * (i + 1)),
        missing: '1',
        shapes: {},
      })) as T[];
    };
    const reader = new CoverageReader(run, { gatherMs: 1 });
    const specs = ['a', 'b', 'c'].map(spec);
    const out = await Promise.all(specs.map((s) => reader.read(s)));
    expect(queries).toHaveLength(1);
    expect(out.map((c) => c?.rows)).toEqual([10, 20, 30]);
    await reader.read(specs[1]);
    expect(reader.queryCount()).toBe(1);
  });

  it('falls back to one query per table when the batch fails', async () => {
    const run: CoverageExecutor = async <T>(query: string) => {
      if (query.includes('UNION ALL') || query.includes('`b_parser_stats`')) throw new Error('missing table');
      return [{ i: 0, rows: '5', missing: '0', shapes: {} }] as T[];
    };
    const reader = new CoverageReader(run, { gatherMs: 1 });
    const [a, b] = await Promise.all([reader.read(spec('a')), reader.read(spec('b'))]);
    expect(a?.rows).toBe(5);
    expect(b).toBeUndefined();
  });

  it('tags every branch with its index', () => {
    const q = buildBatchedCoverageQuery([spec('a'), spec('b')]);
    expect(q).toContain('SELECT 0 AS i');
    expect(q).toContain('UNION ALL SELECT 1 AS i');
    expect(q).toContain('{w1:UInt64}');
  });
});
