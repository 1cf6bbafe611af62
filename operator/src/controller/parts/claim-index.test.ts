import { resolveSpec } from '../../api/defaults';
import type { LogPipeline } from '../../api/types';
import { ClaimIndex } from './claim-index';
import { olderTableClaimant, olderTopicClaimant, tableClaimKey, topicClaimKeys } from './claims';

function lp(i: number, table: string, topic: string, created = '2026-01-01T00:00:00Z'): LogPipeline {
  const name = `p${i}`;
  return {
    apiVersion: 'logpipeline.io/v1alpha1',
    kind: 'LogPipeline',
    metadata: { namespace: 'ns', name, uid: `uid-${name}`, creationTimestamp: created },
    spec: {
      kafka: { bootstrapServers: ['kafka-0:9092'], topic: { name: topic } },
      clickhouse: { url: 'http://ch:8123', database: 'logs', table },
    },
  } as LogPipeline;
}

const tableKeyOf = (p: LogPipeline) => {
  const s = resolveSpec(p);
  return [tableClaimKey(s.clickhouse.database, s.clickhouse.table)];
};

describe('ClaimIndex', () => {
  it('answers older claimants exactly as a scan of the whole fleet does', () => {
    // Every third pipeline shares a table with its predecessor, every fifth a topic.
    const fleet = Array.from({ length: 60 }, (_, i) =>
      lp(
        i,
        `t${i - (i % 3 === 0 ? 1 : 0)}`,
        `topic${i - (i % 5 === 0 ? 1 : 0)}`,
        `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`,
      ),
    );
    const index = new ClaimIndex();
    for (const p of fleet) index.set(p);
    expect(index.size).toBe(60);
    let found = 0;
    for (const p of fleet) {
      const spec = resolveSpec(p);
      const byScan = [olderTopicClaimant(p, spec, 'c', fleet), olderTableClaimant(p, spec, 's', fleet)];
      const byIndex = [
        olderTopicClaimant(p, spec, 'c', index.naming(topicClaimKeys(spec))),
        olderTableClaimant(p, spec, 's', index.naming(tableKeyOf(p))),
      ];
      expect(byIndex.map((x) => x?.metadata.name)).toEqual(byScan.map((x) => x?.metadata.name));
      found += byScan.filter(Boolean).length;
    }
    expect(found).toBeGreaterThan(20);
  });

  it('follows updates and deletions of the cached objects', () => {
    const index = new ClaimIndex();
    const a = lp(1, 'shared', 'ta');
    const b = lp(2, 'other', 'tb', '2026-02-01T00:00:00Z');
    index.set(a);
    index.set(b);
    expect(index.naming(tableKeyOf(a)).map((p) => p.metadata.name)).toEqual(['p1']);
    // b moves to a's table: a new object in the informer's cache, judged by its new spec.
    const moved = { ...b, spec: { ...b.spec, clickhouse: { ...b.spec.clickhouse, table: 'shared' } } };
    index.set(moved as LogPipeline);
    expect(
      index
        .naming(tableKeyOf(a))
        .map((p) => p.metadata.name)
        .sort(),
    ).toEqual(['p1', 'p2']);
    expect(index.naming(tableKeyOf(b))).toEqual([]);
    expect(
      olderTableClaimant(
        moved as LogPipeline,
        resolveSpec(moved as LogPipeline),
        's',
        index.naming(tableKeyOf(a)),
      )?.metadata.name,
    ).toBe('p1');
    index.remove('ns/p1');
    expect(index.naming(tableKeyOf(a)).map((p) => p.metadata.name)).toEqual(['p2']);
    expect(index.size).toBe(1);
  });
});
