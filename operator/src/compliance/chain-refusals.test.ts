import type { ClickHouseClient } from '@clickhouse/client';
import { resolved } from '../../../test/fixtures/clickhouse-testing';
import {
  buildLastLinkedQuery,
  buildRefusalQuery,
  batchedRefusalParams,
  buildBatchedRefusalQuery,
  chainLinkedCondition,
  openRanges,
  refusedRanges,
  readChainConditions,
  type RefusedRange,
} from './chain-refusals';

const spec = resolved(
  { database: 'logs', table: 'fw' },
  { integrity: { enabled: true, signingKeySecretRef: { name: 'k', key: 'k' } } },
);
const refusal = 'ClickHouse refused the integrity link 3 times: Code: 469. Constraint `c` violated';
const range = (first: number, last: number, partition = 0, chain = 'fw'): RefusedRange => ({
  partition,
  first_offset: first,
  last_offset: last,
  reason: refusal,
  chain,
  atMs: Date.parse('2026-12-04T05:00:00Z'),
});

describe('ChainLinked: ranges the workers signed as unlinked', () => {
  it('reads only this pipeline’s checkpoints of the window that carry unlinked ranges, with parameters', () => {
    const q = buildRefusalQuery(spec);
    expect(q).toContain('FROM `logs`.`fw_checkpoints`');
    expect(q).toContain("JSONHas(heads, 'unlinked')");
    expect(q).toContain('{pipeline:String}');
    expect(q).toContain('toIntervalMillisecond({window:UInt64})');
    expect(buildLastLinkedQuery(spec)).toContain(
      'FROM `logs`.`fw_integrity` WHERE pipeline = {pipeline:String}',
    );
  });

  it('turns checkpoint rows into ranges, newest first, skipping malformed notes', () => {
    const rows = [
      {
        at: '2000',
        chain: 'fw',
        unlinked: JSON.stringify([
          { partition: 0, first_offset: 10, last_offset: 19, reason: 'a' },
          { partition: 0, first_offset: 20, last_offset: 29, reason: 'b' },
          { partition: 'x' },
        ]),
      },
      {
        at: 1000,
        chain: 'fw_dlq',
        unlinked: '[{"partition":1,"first_offset":0,"last_offset":4,"reason":"c"}]',
      },
      { at: 500, chain: 'fw', unlinked: 'not json' },
    ];
    expect(refusedRanges(rows).map((r) => [r.chain, r.first_offset, r.reason, r.atMs])).toEqual([
      ['fw', 20, 'b', 2000],
      ['fw', 10, 'a', 2000],
      ['fw_dlq', 0, 'c', 1000],
    ]);
  });

  it('keeps a range open until its chain and partition hold a link at or past its last offset', () => {
    const ranges = [range(10, 19, 0), range(5, 9, 1), range(0, 4, 0, 'fw_dlq')];
    const linked = new Map([
      ['fw|0', 9],
      ['fw|1', 20],
    ]);
    expect(openRanges(ranges, linked).map((r) => `${r.chain}|${r.partition}`)).toEqual(['fw|0', 'fw_dlq|0']);
    expect(
      openRanges(
        ranges,
        new Map([
          ['fw|0', 19],
          ['fw|1', 9],
          ['fw_dlq|0', 4],
        ]),
      ),
    ).toEqual([]);
  });

  it('is False ChainLinkRefused naming the partition, the offsets and ClickHouse’s error', () => {
    const c = chainLinkedCondition(spec, [range(10, 19)], [range(10, 19)]);
    expect(c).toMatchObject({ type: 'ChainLinked', status: 'False', reason: 'ChainLinkRefused' });
    expect(c.message).toContain('partition 0 offsets 10–19 stored without an integrity link: ' + refusal);
    expect(c.message).toContain('clears once a later batch of the partition is linked');
    const two = chainLinkedCondition(
      spec,
      [range(20, 29), range(10, 19)],
      [range(20, 29), range(0, 4, 1, 'fw_dlq')],
    );
    expect(two.message).toMatch(/^partition 0 offsets 20–29 stored without an integrity link \(2 ranges/);
    const dl = chainLinkedCondition(spec, [range(0, 4, 1, 'fw_dlq')], [range(0, 4, 1, 'fw_dlq')]);
    expect(dl.message).toMatch(/^dead letters \(fw_dlq\) of partition 1 offsets 0–4/);
  });

  it('is True once links are stored again, naming the range verify still reports', () => {
    const c = chainLinkedCondition(spec, [range(10, 19)], []);
    expect(c).toMatchObject({ status: 'True', reason: 'ChainLinked' });
    expect(c.message).toContain(
      'after partition 0 offsets 10–19 was left unlinked (2026-12-04T05:00:00.000Z: ' + refusal,
    );
    expect(chainLinkedCondition(spec, [], [])).toMatchObject({ status: 'True', reason: 'ChainLinked' });
  });
});

describe('readChainConditions: one query per server for many pipelines', () => {
  const other = resolved(
    { database: 'logs', table: 'fw2' },
    { integrity: { enabled: true, signingKeySecretRef: { name: 'k', key: 'k' } } },
  );
  const unlinked = JSON.stringify([{ partition: 0, first_offset: 10, last_offset: 19, reason: refusal }]);

  /** A client that answers the batched read with `batch` (or fails it) and records every query. */
  function client(
    batch: unknown[] | Error,
    perTable: Record<string, unknown[]> = {},
    linked: unknown[] = [],
  ) {
    const queries: string[] = [];
    const c = {
      query: async (o: { query: string }) => {
        queries.push(o.query);
        if (o.query.includes('UNION ALL') || o.query.startsWith('SELECT 0 AS i')) {
          if (batch instanceof Error) throw batch;
          return { json: async () => batch };
        }
        if (o.query.includes('_integrity')) return { json: async () => linked };
        const table = Object.keys(perTable).find((t) => o.query.includes(`\`${t}\``));
        if (!table) throw new Error('Code: 60. Table does not exist');
        return { json: async () => perTable[table] };
      },
    };
    return { client: c as unknown as ClickHouseClient, queries };
  }

  it('reads every pipeline’s checkpoints in one UNION ALL, each with its own pipeline parameter', () => {
    const q = buildBatchedRefusalQuery([spec, other]);
    expect(q.split(' UNION ALL ')).toHaveLength(2);
    expect(q).toContain('SELECT 1 AS i, * FROM (SELECT');
    expect(q).toContain('`fw2_checkpoints`');
    expect(q).toContain('{p1:String}');
    expect(batchedRefusalParams([spec, other], 5)).toEqual({
      window: 5,
      p0: `${spec.namespace}/${spec.name}`,
      p1: `${other.namespace}/${other.name}`,
    });
  });

  it('gives each pipeline its condition, reading links only for the one with a noted range', async () => {
    const { client: c, queries } = client([{ i: 1, at: '1000', chain: 'fw2', unlinked }], {}, [
      { chain: 'fw2', p: 0, last: '9' },
    ]);
    const [a, b] = await readChainConditions(c, [spec, other]);
    expect(a).toMatchObject({ status: 'True', reason: 'ChainLinked' });
    expect(b).toMatchObject({ status: 'False', reason: 'ChainLinkRefused' });
    expect(queries).toHaveLength(2);
  });

  it('falls back to one query per pipeline when the batch fails, so one missing table hides nothing else', async () => {
    const { client: c } = client(new Error('Code: 60. Table logs.fw2_checkpoints does not exist'), {
      fw_checkpoints: [],
    });
    const [a, b] = await readChainConditions(c, [spec, other]);
    expect(a).toMatchObject({ status: 'True', reason: 'ChainLinked' });
    expect(b).toMatchObject({ status: 'Unknown', reason: 'ChainNotChecked' });
    expect(b.message).toContain('does not exist');
  });
});
