import type { ResolvedSpec } from '../api/defaults';
import type { LogPipeline } from '../api/types';
import { UNGUARDED } from '../apply/guard';
import { ClickHouseCatalogue } from '../apply/clickhouse-catalogue';
import { silentLogger } from '../../../common/src/log';
import type { ExternalPart, PartContext } from './external';
import { PartMemo, tableIdentities } from './part-memo';

const URL = 'http://ch:8123';

function pipeline(uid: string, table: string) {
  const spec = {
    uid,
    name: uid,
    namespace: 'ns',
    clickhouse: { url: URL, database: 'logs', table },
    deadLetter: { enabled: true, table: `${table}_dlq` },
  } as unknown as ResolvedSpec;
  const ctx: PartContext = {
    pipeline: { metadata: { name: uid, namespace: 'ns', uid, generation: 1 } } as unknown as LogPipeline,
    readSecretKey: async () => undefined,
    log: silentLogger,
    guard: UNGUARDED,
    pipelines: () => [],
  };
  return { spec, ctx };
}

function tablePart(calls: string[]): ExternalPart {
  return {
    name: 'Table',
    ensure: async (spec) => {
      calls.push(spec.uid);
      return { status: 'True', reason: 'TableReady', message: 'ok' };
    },
    delete: async () => undefined,
  };
}

describe('PartMemo and the catalogue (PLAN 18 2b)', () => {
  it('names every table a spec manages, with the ON CLUSTER storage names', () => {
    expect(tableIdentities(pipeline('a', 'fw').spec)).toEqual([
      `${URL} logs.fw`,
      `${URL} logs.fw_local`,
      `${URL} logs.fw_dlq`,
      `${URL} logs.fw_dlq_local`,
    ]);
  });

  it('drops and queues only the memos of pipelines whose tables a round saw change', async () => {
    const calls: string[] = [];
    const queued: string[] = [];
    const memo = new PartMemo({ recheckMs: 3_600_000, jitter: 0, onPeerChanged: (k) => queued.push(k) });
    const part = tablePart(calls);
    const a = pipeline('a', 'fw');
    const b = pipeline('b', 'dns');
    await memo.ensure(part, a.spec, a.ctx, '');
    await memo.ensure(part, b.spec, b.ctx, '');
    memo.tablesChanged(URL, ['logs.fw_dlq', 'logs.unrelated']);
    memo.tablesChanged('http://other:8123', ['logs.dns']);
    expect(queued).toEqual(['ns/a']);
    expect(memo.invalidations).toBe(1);
    await memo.ensure(part, a.spec, a.ctx, '');
    await memo.ensure(part, b.spec, b.ctx, '');
    expect(calls).toEqual(['a', 'b', 'a']);
  });

  it('leaves a pipeline without a memo alone (its own ensure made the change) and forgets deleted ones', async () => {
    const queued: string[] = [];
    const memo = new PartMemo({ recheckMs: 3_600_000, jitter: 0, onPeerChanged: (k) => queued.push(k) });
    const a = pipeline('a', 'fw');
    const failing: ExternalPart = {
      ...tablePart([]),
      ensure: async () => ({ status: 'False', reason: 'TableFailed', message: 'x', retry: true }),
    };
    await memo.ensure(failing, a.spec, a.ctx, '');
    memo.tablesChanged(URL, ['logs.fw']);
    expect(queued).toEqual([]);
    await memo.ensure(tablePart([]), a.spec, a.ctx, '');
    memo.forget('a');
    memo.tablesChanged(URL, ['logs.fw']);
    expect(queued).toEqual([]);
  });

  it('is told by a catalogue round which tables appeared, vanished or changed', async () => {
    let comment = 'v1';
    let tables = ['t1', 't2'];
    const seen: string[][] = [];
    const run = async <T>(query: string): Promise<T[]> => {
      if (query.includes('system.tables'))
        return tables.map((name) => ({
          database: 'logs',
          name,
          engine: 'MergeTree',
          engineFull: 'MergeTree',
          sortingKey: '',
          partitionKey: '',
          storagePolicy: 'default',
          comment: name === 't1' ? comment : '',
        })) as T[];
      if (query.includes('system.databases')) return [{ name: 'logs' }] as T[];
      return [] as T[];
    };
    const cat = new ClickHouseCatalogue(run, { gatherMs: 0, onChange: (t) => seen.push(t) });
    await cat.snapshot(['logs']);
    cat.markDirty();
    await cat.snapshot(['logs']);
    expect(seen).toEqual([]);
    comment = 'v2';
    tables = ['t1', 't3'];
    cat.markDirty();
    await cat.snapshot(['logs']);
    expect(seen).toEqual([['logs.t1', 'logs.t3', 'logs.t2']]);
  });

  it('does not report tables our own statements touched since the last round', async () => {
    let t = 1000;
    let tables = ['t1'];
    const seen: string[][] = [];
    const run = async <T>(query: string): Promise<T[]> => {
      if (query.includes('system.tables'))
        return tables.map((name) => ({ database: 'logs', name, engine: 'MergeTree', comment: '' })) as T[];
      if (query.includes('system.databases')) return [{ name: 'logs' }] as T[];
      return [] as T[];
    };
    const cat = new ClickHouseCatalogue(run, { gatherMs: 0, now: () => t, onChange: (c) => seen.push(c) });
    await cat.snapshot(['logs']);
    // Our CREATE of t2 (touched), someone else's t3 (not).
    t += 10;
    cat.markStale('logs', ['t2']);
    tables = ['t1', 't2', 't3'];
    t += 10;
    cat.markDirty();
    await cat.snapshot(['logs']);
    expect(seen).toEqual([['logs.t3']]);
  });
  it('does not report a table whose creation by us was in flight while a round read (issue 18)', async () => {
    let t = 1000;
    let tables = ['t1'];
    const seen: string[][] = [];
    let during: (() => void) | undefined;
    const run = async <T>(query: string): Promise<T[]> => {
      if (query.includes('system.tables')) {
        // Our CREATE of t2 completes while this round is reading.
        during?.();
        return tables.map((name) => ({ database: 'logs', name, engine: 'MergeTree', comment: '' })) as T[];
      }
      if (query.includes('system.databases')) return [{ name: 'logs' }] as T[];
      return [] as T[];
    };
    const cat = new ClickHouseCatalogue(run, { gatherMs: 0, now: () => t, onChange: (c) => seen.push(c) });
    await cat.snapshot(['logs']);
    t += 10;
    cat.markTouching('logs', ['t2']);
    t += 10;
    during = () => {
      tables = ['t1', 't2'];
      t += 10;
      cat.markStale('logs', ['t2']);
      during = undefined;
    };
    cat.markDirty();
    await cat.snapshot(['logs']);
    // The same with t3, whose CREATE finishes only after the round read: the next round sees it.
    t += 10;
    cat.markTouching('logs', ['t3']);
    cat.markDirty();
    await cat.snapshot(['logs']);
    tables = ['t1', 't2', 't3'];
    t += 10;
    cat.markStale('logs', ['t3']);
    cat.markDirty();
    await cat.snapshot(['logs']);
    // Someone else's table is still reported.
    tables = ['t1', 't2', 't3', 't4'];
    t += 10;
    cat.markDirty();
    await cat.snapshot(['logs']);
    expect(seen).toEqual([['logs.t4']]);
  });
});
