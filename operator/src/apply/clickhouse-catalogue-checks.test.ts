import { ClickHouseCatalogue, QUERIES_PER_ROUND, type CatalogueExecutor } from './clickhouse-catalogue';
import { checkCluster, checkStorage } from './clickhouse-observe';

/** A fake server with two clusters, a hot_cold policy and three disks; counts queries by table. */
function fakeServer() {
  const queries: string[] = [];
  const run: CatalogueExecutor = async <T>(query: string) => {
    queries.push(query);
    if (query.includes('system.clusters')) return [{ cluster: 'main' }, { cluster: 'backup' }] as T[];
    if (query.includes('system.storage_policies'))
      return [
        { policy: 'default', volume: 'default', disks: ['default'] },
        { policy: 'hot_cold', volume: 'hot', disks: ['default'] },
        { policy: 'hot_cold', volume: 'cold', disks: ['cold'] },
      ] as T[];
    if (query.includes('system.disks'))
      return [{ name: 'default' }, { name: 'cold' }, { name: 'archive' }] as T[];
    if (query.includes('version()')) return [{ version: '25.1.1', host: 'h', uuid: '' }] as T[];
    return [] as T[];
  };
  return { run, queries };
}

describe('storage and cluster checks from the catalogue', () => {
  it('answer every pipeline from one round, with the same refusals as the direct queries', async () => {
    const server = fakeServer();
    const catalogue = new ClickHouseCatalogue(server.run, { gatherMs: 1 });
    const src = { client: {} as never, catalogue };
    const results = await Promise.all(
      Array.from({ length: 10 }, async () => ({
        cluster: await checkCluster(src, 'main'),
        noCluster: await checkCluster(src, 'nope'),
        ok: await checkStorage(src, 'hot_cold', [{ after: '7d', toVolume: 'cold' } as never]),
        noPolicy: await checkStorage(src, 'ssd', []),
        noVolume: await checkStorage(src, 'hot_cold', [{ after: '7d', toVolume: 'warm' } as never]),
        foreignDisk: await checkStorage(src, 'hot_cold', [{ after: '7d', toDisk: 'archive' } as never]),
        noDisk: await checkStorage(src, undefined, [{ after: '7d', toDisk: 'tape' } as never]),
      })),
    );
    expect(results[9]).toEqual({
      cluster: undefined,
      noCluster: { reason: 'ClusterNotFound', message: "cluster 'nope' is not defined in system.clusters" },
      ok: undefined,
      noPolicy: {
        reason: 'StoragePolicyNotFound',
        message: "storage policy 'ssd' does not exist on the server",
      },
      noVolume: {
        reason: 'VolumeNotFound',
        message: "storage policy 'hot_cold' has no volume 'warm' (volumes: hot, cold)",
      },
      foreignDisk: {
        reason: 'ColdDiskNotFound',
        message: "disk 'archive' is not part of storage policy 'hot_cold'",
      },
      noDisk: { reason: 'ColdDiskNotFound', message: "disk 'tape' does not exist on the server" },
    });
    // Ten pipelines, every check: the first round(s) add the extras once; later checks read the snapshot.
    expect(server.queries.filter((q) => q.includes('system.clusters'))).toHaveLength(catalogue.roundCount());
    expect(catalogue.roundCount()).toBeLessThanOrEqual(2);
    const before = server.queries.length;
    await checkStorage(src, 'hot_cold', []);
    await checkCluster(src, 'main');
    expect(server.queries.length).toBe(before);
  });

  it('reads no cluster or storage tables in a round nobody asked them of', async () => {
    const server = fakeServer();
    const catalogue = new ClickHouseCatalogue(server.run, { gatherMs: 0 });
    await catalogue.snapshot(['logs']);
    expect(server.queries).toHaveLength(QUERIES_PER_ROUND);
  });
});
