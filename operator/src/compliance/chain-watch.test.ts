import type { ClickHouseClient } from '@clickhouse/client';
import { resolved } from '../../../test/fixtures/clickhouse-testing';
import type { PartContext, SealingPart } from '../controller/external';
import { withChainWatch } from '../controller/parts/chain-part';
import {
  buildLastLinkedQuery,
  buildRefusalQuery,
  ChainWatch,
  chainLinkedCondition,
  openRanges,
  refusedRanges,
  type RefusedRange,
} from './chain-watch';

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

describe('ChainWatch', () => {
  const ctx = { pipeline: { metadata: { uid: 'u1' } } } as unknown as PartContext;

  /** A client answering the refusal read with `rows` and the link read with `linked`; counts queries. */
  function client(rows: unknown[], linked: unknown[] = []) {
    const calls = { queries: 0 };
    const c = {
      query: async (o: { query: string }) => {
        calls.queries++;
        if (rows === null) throw new Error('Code: 60. Table logs.fw_checkpoints does not exist');
        return { json: async () => (o.query.includes('_checkpoints') ? rows : linked) };
      },
    };
    return {
      get: async () => c as unknown as ClickHouseClient,
      calls,
      pool: { client: async () => c as unknown as ClickHouseClient },
    };
  }

  it('reads at most once per interval and asks to be called again when it ends', async () => {
    let now = 1_000_000;
    const { get, calls } = client([]);
    const watch = new ChainWatch({ intervalMs: 60_000, now: () => now });
    expect(await watch.evaluate(spec, 'u1', get)).toMatchObject({
      requeueAfterMs: 60_000,
      condition: { status: 'True' },
    });
    now += 20_000;
    expect((await watch.evaluate(spec, 'u1', get))?.requeueAfterMs).toBe(40_000);
    expect(calls.queries).toBe(1);
    now += 40_000;
    await watch.evaluate(spec, 'u1', get);
    expect(calls.queries).toBe(2);
  });

  it('reads the partitions’ links only when a range was noted, and reports an open one', async () => {
    const unlinked = JSON.stringify([{ partition: 0, first_offset: 10, last_offset: 19, reason: refusal }]);
    const { get, calls } = client(
      [{ at: '1000', chain: 'fw', unlinked }],
      [{ chain: 'fw', p: 0, last: '9' }],
    );
    const out = await new ChainWatch().evaluate(spec, 'u1', get);
    expect(calls.queries).toBe(2);
    expect(out?.condition).toMatchObject({ status: 'False', reason: 'ChainLinkRefused' });
  });

  it('is Unknown ChainNotChecked when the checkpoints cannot be read, and absent without integrity', async () => {
    const { get } = client(null as unknown as unknown[]);
    expect((await new ChainWatch().evaluate(spec, 'u1', get))?.condition).toMatchObject({
      status: 'Unknown',
      reason: 'ChainNotChecked',
    });
    expect(await new ChainWatch().evaluate(resolved(), 'u1', get)).toBeUndefined();
  });

  it('sits beside the scheduled seal: both conditions, the sooner requeue', async () => {
    const sealed = { type: 'Sealed' as const, status: 'True' as const, reason: 'DaySealed', message: 'm' };
    const sealer: SealingPart = {
      evaluate: async () => ({ condition: sealed, observed: {}, events: [], requeueAfterMs: 30_000 }),
    };
    const none: SealingPart = { evaluate: async () => undefined };
    const { pool } = client([]);
    const watch = () => new ChainWatch({ intervalMs: 60_000 });
    const both = await withChainWatch(sealer, watch(), pool).evaluate(spec, ctx);
    expect(both).toMatchObject({
      condition: sealed,
      chainLinked: { type: 'ChainLinked' },
      requeueAfterMs: 30_000,
    });
    const chainOnly = await withChainWatch(none, watch(), pool).evaluate(spec, ctx);
    expect(chainOnly).toMatchObject({ events: [], chainLinked: { status: 'True' }, requeueAfterMs: 60_000 });
    expect(chainOnly?.condition).toBeUndefined();
    expect(await withChainWatch(none, watch(), pool).evaluate(resolved(), ctx)).toBeUndefined();
  });
});
