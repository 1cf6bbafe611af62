import { CatalogueInterner } from './catalogue-interner';
import type { CatalogueTable } from './clickhouse-catalogue';

function row(comment: string): CatalogueTable {
  // Built the way JSON rows arrive: equal text, distinct copies.
  const fresh = (s: string) => JSON.parse(JSON.stringify(s)) as string;
  return {
    engine: fresh('MergeTree'),
    engineFull: fresh('MergeTree PARTITION BY toYYYYMMDD(ts) ORDER BY (src_ip, ts)'),
    sortingKey: fresh('src_ip, ts'),
    partitionKey: fresh('toYYYYMMDD(ts)'),
    storagePolicy: fresh('default'),
    comment,
    columns: [
      { name: fresh('ts'), type: fresh("DateTime64(3, 'UTC')") },
      { name: fresh('src_ip'), type: fresh('IPv4') },
    ],
    skipIndexes: [fresh('idx_src')],
  };
}

describe('CatalogueInterner', () => {
  it('gives tables of one schema one column list, frozen, and keeps each comment', () => {
    const i = new CatalogueInterner();
    const a = i.table(row('owner a'));
    const b = i.table(row('owner b'));
    expect(a).toEqual({ ...row('owner a') });
    expect(b.columns).toBe(a.columns);
    expect(b.skipIndexes).toBe(a.skipIndexes);
    expect(Object.isFrozen(a.columns) && Object.isFrozen(a.columns[0])).toBe(true);
    expect(b.comment).toBe('owner b');
    // A different column list is its own entry.
    const c = i.table({ ...row('owner c'), columns: [{ name: 'ts', type: 'DateTime' }] });
    expect(c.columns).not.toBe(a.columns);
    expect(c.columns).toEqual([{ name: 'ts', type: 'DateTime' }]);
  });
});
