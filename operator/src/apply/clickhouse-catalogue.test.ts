import {
  ClickHouseCatalogue,
  QUERIES_PER_ROUND,
  tableKey,
  type CatalogueExecutor,
} from './clickhouse-catalogue';
import {
  databaseExists,
  observeTable,
  serverIdentity,
  serverVersion,
  tableComments,
  tableExists,
} from './clickhouse-observe';

/** A fake server: answers the five catalogue queries from an in-memory table list. */
function fakeServer() {
  const tables = new Map<string, { comment: string; columns: string[] }>([
    ['logs.fw', { comment: 'logpipeline.io/owner=v1:isp/fw/u1', columns: ['ts', 'msg'] }],
    ['logs.fw_dlq', { comment: '', columns: ['raw'] }],
    ['other.x', { comment: '', columns: ['a'] }],
  ]);
  const queries: string[] = [];
  const run: CatalogueExecutor = async <T>(query: string, params: Record<string, unknown>) => {
    queries.push(query);
    const dbs = (params.dbs as string[] | undefined) ?? [];
    const rows = [...tables.entries()]
      .map(([k, v]) => ({ database: k.split('.')[0], name: k.split('.')[1], ...v }))
      .filter((t) => dbs.includes(t.database));
    if (query.includes('version()'))
      return [{ version: '25.1.1', host: 'h1', uuid: '00000000-0000-0000-0000-000000000000' }] as T[];
    if (query.includes('system.databases'))
      return [...new Set(rows.map((r) => r.database))].map((name) => ({ name })) as T[];
    if (query.includes('system.tables'))
      return rows.map((r) => ({
        database: r.database,
        name: r.name,
        engine: 'MergeTree',
        engineFull: 'MergeTree',
        sortingKey: 'ts',
        partitionKey: '',
        storagePolicy: 'default',
        comment: r.comment,
      })) as T[];
    if (query.includes('system.columns'))
      return rows.flatMap((r) =>
        r.columns.map((c) => ({ database: r.database, table: r.name, name: c, type: 'String' })),
      ) as T[];
    if (query.includes('data_skipping_indices')) return [] as T[];
    throw new Error(`unexpected query ${query}`);
  };
  return { run, queries, tables };
}

describe('ClickHouseCatalogue', () => {
  it('answers every observation of many pipelines from one round', async () => {
    const server = fakeServer();
    const catalogue = new ClickHouseCatalogue(server.run, { gatherMs: 1 });
    const src = { client: {} as never, catalogue };
    const results = await Promise.all(
      Array.from({ length: 20 }, async () => ({
        version: await serverVersion(src, 'logs'),
        identity: await serverIdentity(src, undefined, 'logs'),
        db: await databaseExists(src, 'logs'),
        fw: await observeTable(src, 'logs', 'fw'),
        missing: await tableExists(src, 'logs', 'nope'),
        comments: await tableComments(src, 'logs', ['fw', 'fw_dlq', 'nope']),
      })),
    );
    expect(server.queries).toHaveLength(QUERIES_PER_ROUND);
    expect(catalogue.roundCount()).toBe(1);
    expect(results[19]).toEqual({
      version: '25.1.1',
      identity: 'host:h1',
      db: true,
      fw: {
        engine: 'MergeTree',
        engineFull: 'MergeTree',
        sortingKey: 'ts',
        partitionKey: '',
        storagePolicy: 'default',
        columns: [
          { name: 'ts', type: 'String' },
          { name: 'msg', type: 'String' },
        ],
        skipIndexes: [],
      },
      missing: false,
      comments: new Map([
        ['fw', 'logpipeline.io/owner=v1:isp/fw/u1'],
        ['fw_dlq', ''],
      ]),
    });
    // Only the databases of the pipelines are read.
    expect((await catalogue.snapshot(['logs'])).tables.has(tableKey('other', 'x'))).toBe(false);
  });

  it('reads again after our own statement (dirty) and after maxAge, not before', async () => {
    const server = fakeServer();
    let t = 0;
    const catalogue = new ClickHouseCatalogue(server.run, { gatherMs: 0, maxAgeMs: 1000, now: () => t });
    const src = { client: {} as never, catalogue };
    expect(await tableExists(src, 'logs', 'new')).toBe(false);
    server.tables.set('logs.new', { comment: '', columns: ['a'] });
    t = 500;
    expect(await tableExists(src, 'logs', 'new')).toBe(false); // cached: not our change
    catalogue.markDirty();
    expect(await tableExists(src, 'logs', 'new')).toBe(true);
    expect(catalogue.roundCount()).toBe(2);
    server.tables.delete('logs.new');
    t = 1600;
    expect(await tableExists(src, 'logs', 'new')).toBe(false);
    expect(catalogue.roundCount()).toBe(3);
  });

  it('a new database joins the next round; a failed round is retried', async () => {
    const server = fakeServer();
    let fail = true;
    const flaky: CatalogueExecutor = async (q, p) => {
      if (fail) {
        fail = false;
        throw new Error('down');
      }
      return server.run(q, p);
    };
    const catalogue = new ClickHouseCatalogue(flaky, { gatherMs: 0 });
    await expect(catalogue.snapshot(['logs'])).rejects.toThrow('down');
    expect((await catalogue.snapshot(['logs'])).databases.has('logs')).toBe(true);
    expect((await catalogue.snapshot(['other'])).tables.has(tableKey('other', 'x'))).toBe(true);
  });
});

describe('ClickHouseCatalogue single flight', () => {
  it('callers arriving during a round share it unless something changed', async () => {
    const server = fakeServer();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow: CatalogueExecutor = async (q, p) => {
      await gate;
      return server.run(q, p);
    };
    const catalogue = new ClickHouseCatalogue(slow, { gatherMs: 0 });
    const first = catalogue.snapshot(['logs']);
    await new Promise((r) => setTimeout(r, 5));
    const joined = catalogue.snapshot(['logs']);
    catalogue.markDirty();
    const fresh = catalogue.snapshot(['logs']);
    release();
    const [a, b, c] = await Promise.all([first, joined, fresh]);
    expect(a).toBe(b);
    expect(c).not.toBe(a);
    expect(catalogue.roundCount()).toBe(2);
  });
});

describe('ClickHouseCatalogue before creating', () => {
  it('probes only the tables the snapshot lacks, shared by every caller of the moment', async () => {
    const server = fakeServer();
    const catalogue = new ClickHouseCatalogue(server.run, { gatherMs: 1 });
    const src = { client: {} as never, catalogue };
    await catalogue.snapshot(['logs']);
    // All present: no probe, no new round.
    await catalogue.lookup('logs', ['fw', 'fw_dlq'], { freshMissing: true });
    expect(catalogue.roundCount()).toBe(1);
    expect(catalogue.probeCount()).toBe(0);
    // Created by hand since the last round: seen before anything is created, by one probe for all.
    server.tables.set('logs.byhand', { comment: 'x', columns: ['a'] });
    await Promise.all([
      catalogue.lookup('logs', ['fw', 'byhand'], { freshMissing: true }),
      catalogue.lookup('logs', ['fw', 'missing'], { freshMissing: true }),
    ]);
    expect(catalogue.probeCount()).toBe(1);
    expect(await tableExists(src, 'logs', 'byhand')).toBe(true);
    expect(await tableExists(src, 'logs', 'missing')).toBe(false);
    expect(catalogue.roundCount()).toBe(1);
  });

  it('re-reads only the tables our statements touched, not the whole catalogue', async () => {
    const server = fakeServer();
    let t = 0;
    const catalogue = new ClickHouseCatalogue(server.run, { gatherMs: 0, now: () => t });
    const src = { client: {} as never, catalogue };
    await catalogue.snapshot(['logs']);
    t = 10;
    server.tables.set('logs.fw_dlq', { comment: 'logpipeline.io/owner=v1:isp/fw/u1', columns: ['raw'] });
    catalogue.markStale('logs', ['fw_dlq']);
    t = 11;
    expect((await tableComments(src, 'logs', ['fw_dlq'])).get('fw_dlq')).toBe(
      'logpipeline.io/owner=v1:isp/fw/u1',
    );
    expect(catalogue.probeCount()).toBe(1);
    // Untouched tables come from the snapshot; the probed one is not read again.
    expect(await tableExists(src, 'logs', 'fw')).toBe(true);
    await tableComments(src, 'logs', ['fw_dlq']);
    expect(catalogue.probeCount()).toBe(1);
    // That probe read the row only: planning changes reads columns and indexes too, once.
    expect((await observeTable(src, 'logs', 'fw_dlq'))?.columns.map((c) => c.name)).toEqual(['raw']);
    await observeTable(src, 'logs', 'fw_dlq');
    expect(catalogue.probeCount()).toBe(2);
    expect(catalogue.roundCount()).toBe(1);
  });
  it('sends pre-create probes and post-create ownership rechecks in one batch (issue 18)', async () => {
    const server = fakeServer();
    let t = 0;
    const catalogue = new ClickHouseCatalogue(server.run, { gatherMs: 1, now: () => t });
    const src = { client: {} as never, catalogue };
    await catalogue.snapshot(['logs']);
    t = 10;
    // One pipeline just created fw_dlq (a row-only recheck), another is about to create `new`.
    server.tables.set('logs.fw_dlq', { comment: 'logpipeline.io/owner=v1:isp/fw/u1', columns: ['raw'] });
    catalogue.markStale('logs', ['fw_dlq']);
    t = 11;
    server.queries.length = 0;
    const [comments, fresh] = await Promise.all([
      tableComments(src, 'logs', ['fw_dlq']),
      catalogue.lookup('logs', ['new', 'fw_dlq'], { freshMissing: true }),
    ]);
    expect(catalogue.probeCount()).toBe(1);
    expect(comments.get('fw_dlq')).toBe('logpipeline.io/owner=v1:isp/fw/u1');
    expect(fresh.has('new')).toBe(false);
    // The full read of fw_dlq (asked by the pre-create lookup) carries its columns.
    expect(fresh.get('fw_dlq')?.columns.map((c) => c.name)).toEqual(['raw']);
    expect(server.queries.filter((q) => q.includes('system.tables'))).toHaveLength(1);
    expect(catalogue.roundCount()).toBe(1);
  });
});
