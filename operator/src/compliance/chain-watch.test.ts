import type { ClickHouseClient } from '@clickhouse/client';
import { resolved } from '../../../test/fixtures/clickhouse-testing';
import type { PartContext, SealingPart } from '../controller/external';
import { withChainWatch } from '../controller/parts/chain-part';
import { ChainWatch } from './chain-watch';

const integrity = { integrity: { enabled: true, signingKeySecretRef: { name: 'k', key: 'k' } } };
const spec = resolved({ database: 'logs', table: 'fw' }, integrity);
const refusal = 'ClickHouse refused the integrity link 3 times: Code: 469. Constraint `c` violated';
const unlinked = JSON.stringify([{ partition: 0, first_offset: 10, last_offset: 19, reason: refusal }]);

/** A ClickHouse server whose checkpoint rows and newest links the test changes; counts queries. */
function server() {
  const state = { rows: [] as unknown[], linked: [] as unknown[], queries: 0 };
  const c = {
    query: async (o: { query: string }) => {
      state.queries++;
      return { json: async () => (o.query.includes('_checkpoints') ? state.rows : state.linked) };
    },
  };
  return { state, connect: async () => c as unknown as ClickHouseClient };
}

describe('ChainWatch', () => {
  it('reads a pipeline at once on its first reconcile, then only in rounds', async () => {
    const { state, connect } = server();
    const watch = new ChainWatch();
    expect(await watch.evaluate(spec, connect)).toMatchObject({ status: 'True', reason: 'ChainLinked' });
    expect(await watch.evaluate(spec, connect)).toMatchObject({ status: 'True' });
    expect(state.queries).toBe(1);
    watch.close();
  });

  it('queues the reconcile of a pipeline whose condition a round changed, and only then', async () => {
    const { state, connect } = server();
    const changed: string[] = [];
    const watch = new ChainWatch({ onChange: (k) => changed.push(k) });
    await watch.evaluate(spec, connect);
    await watch.round();
    expect(changed).toEqual([]);
    state.rows = [{ i: 0, at: '1000', chain: 'fw', unlinked }];
    state.linked = [{ chain: 'fw', p: 0, last: '9' }];
    await watch.round();
    expect(changed).toEqual([`${spec.namespace}/${spec.name}`]);
    expect(await watch.evaluate(spec, connect)).toMatchObject({
      status: 'False',
      reason: 'ChainLinkRefused',
    });
    await watch.round();
    expect(changed).toHaveLength(1);
    // The partition links again: the condition clears, one more reconcile.
    state.linked = [{ chain: 'fw', p: 0, last: '29' }];
    await watch.round();
    expect(changed).toHaveLength(2);
    expect(await watch.evaluate(spec, connect)).toMatchObject({ status: 'True', reason: 'ChainLinked' });
    watch.close();
  });

  it('reads nothing while not leading, and forgets a pipeline without integrity', async () => {
    const { state, connect } = server();
    let leading = false;
    const watch = new ChainWatch({ active: () => leading });
    await watch.evaluate(spec, connect);
    await watch.round();
    expect(state.queries).toBe(1);
    leading = true;
    await watch.round();
    expect(state.queries).toBe(2);
    expect(await watch.evaluate(resolved({ database: 'logs', table: 'fw' }), connect)).toBeUndefined();
    await watch.round();
    expect(state.queries).toBe(2);
    watch.close();
  });

  it('is Unknown ChainNotChecked when the server cannot be reached', async () => {
    const watch = new ChainWatch();
    const down = async () => {
      throw new Error('connect ECONNREFUSED 127.0.0.1:8123');
    };
    expect(await watch.evaluate(spec, down)).toMatchObject({ status: 'Unknown', reason: 'ChainNotChecked' });
    watch.close();
  });

  it('sits beside the scheduled seal: both conditions, the seal’s requeue', async () => {
    const ctx = { pipeline: { metadata: { uid: 'u1' } } } as unknown as PartContext;
    const pool = { client: server().connect };
    const sealed = { type: 'Sealed' as const, status: 'True' as const, reason: 'DaySealed', message: 'm' };
    const sealer: SealingPart = {
      evaluate: async () => ({ condition: sealed, observed: {}, events: [], requeueAfterMs: 30_000 }),
    };
    const none: SealingPart = { evaluate: async () => undefined };
    const watch = new ChainWatch();
    const both = await withChainWatch(sealer, watch, pool).evaluate(spec, ctx);
    expect(both).toMatchObject({
      condition: sealed,
      chainLinked: { type: 'ChainLinked' },
      requeueAfterMs: 30_000,
    });
    const chainOnly = await withChainWatch(none, watch, pool).evaluate(spec, ctx);
    expect(chainOnly).toMatchObject({ events: [], chainLinked: { status: 'True' }, requeueAfterMs: 0 });
    expect(chainOnly?.condition).toBeUndefined();
    expect(await withChainWatch(none, watch, pool).evaluate(resolved(), ctx)).toBeUndefined();
    watch.close();
  });
});
