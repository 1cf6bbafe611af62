import type { ClickHouseSpec } from '../../api/types';
import { buildTableDDL, type DesiredTable } from './ddl';
import { planTableChanges, splitEngineFull, type ObservedTable } from './plan';
import { FIREWALL_ACTION_TYPE } from './presets';
import { resolved } from '../../../../test/fixtures/clickhouse-testing';
import { parseTtl, sameTtl } from './ttl';

function desired(ch: Partial<ClickHouseSpec> = {}): DesiredTable {
  const r = buildTableDDL(resolved(ch));
  if (!r.ok) throw new Error(r.message);
  return r.value.tables[0];
}

// What ClickHouse 26.x reports for the default firewall table (copied from system.tables/columns).
function observedDefault(): ObservedTable {
  const before = observedBeforeNat();
  const at = before.columns.findIndex((c) => c.name === 'proto');
  const nat = [
    { name: 'nat_src_ip', type: 'IPv6' },
    { name: 'nat_src_port', type: 'UInt16' },
    { name: 'nat_dst_ip', type: 'IPv6' },
    { name: 'nat_dst_port', type: 'UInt16' },
  ];
  return {
    ...before,
    skipIndexes: ['idx_dst_ip', 'idx_nat_src'],
    // sender_ip (issue 16) came after the NAT columns; ADD COLUMN appends it.
    columns: [
      ...before.columns.slice(0, at),
      ...nat,
      ...before.columns.slice(at),
      { name: 'sender_ip', type: 'IPv6' },
    ],
  };
}

// A firewall table created before the NAT identity columns existed (the previous preset).
function observedBeforeNat(): ObservedTable {
  return {
    engine: 'MergeTree',
    engineFull:
      'MergeTree PARTITION BY toYYYYMMDD(ts) ORDER BY (src_ip, ts) TTL toDateTime(ts) + toIntervalDay(730) ' +
      'SETTINGS non_replicated_deduplication_window = 10000, index_granularity = 8192',
    sortingKey: 'src_ip, ts',
    partitionKey: 'toYYYYMMDD(ts)',
    storagePolicy: 'default',
    skipIndexes: ['idx_dst_ip'],
    columns: [
      ['ts', "DateTime64(3, 'UTC')"], ['ingest_ts', "DateTime64(3, 'UTC')"], ['vendor', 'LowCardinality(String)'],
      ['device', 'LowCardinality(String)'], ['src_ip', 'IPv6'], ['dst_ip', 'IPv6'], ['src_port', 'UInt16'],
      ['dst_port', 'UInt16'], ['proto', 'LowCardinality(String)'], ['action', FIREWALL_ACTION_TYPE], ['bytes', 'UInt64'],
      ['rule', 'String'], ['severity', 'LowCardinality(String)'], ['raw', 'String'], ['kafka_partition', 'UInt16'],
      ['kafka_offset', 'UInt64'],
      ['kafka_line', 'UInt32'],
    ].map(([name, type]) => ({ name, type })), // prettier-ignore
  };
}

describe('planTableChanges', () => {
  it('plans the CREATE statements for a missing table', () => {
    const d = desired();
    const plan = planTableChanges(d, undefined);
    expect(plan.refusals).toEqual([]);
    expect(plan.actions.map((a) => [a.kind, a.sql])).toEqual([['create', d.create[0]]]);
  });

  it('plans nothing when ClickHouse reports the desired table in its own spelling', () => {
    expect(planTableChanges(desired(), observedDefault())).toEqual({ actions: [], refusals: [] });
  });

  it('evolves a table created before the NAT columns: ADD COLUMN for each, ADD INDEX for new parts', () => {
    const plan = planTableChanges(desired(), observedBeforeNat());
    expect(plan.refusals).toEqual([]);
    expect(plan.actions.map((a) => a.sql)).toEqual([
      'ALTER TABLE `logs`.`fw` ADD COLUMN IF NOT EXISTS `nat_src_ip` IPv6 CODEC(ZSTD(1))',
      'ALTER TABLE `logs`.`fw` ADD COLUMN IF NOT EXISTS `nat_src_port` UInt16 CODEC(ZSTD(1))',
      'ALTER TABLE `logs`.`fw` ADD COLUMN IF NOT EXISTS `nat_dst_ip` IPv6 CODEC(ZSTD(1))',
      'ALTER TABLE `logs`.`fw` ADD COLUMN IF NOT EXISTS `nat_dst_port` UInt16 CODEC(ZSTD(1))',
      'ALTER TABLE `logs`.`fw` ADD COLUMN IF NOT EXISTS `sender_ip` IPv6 CODEC(ZSTD(1))',
      'ALTER TABLE `logs`.`fw` ADD INDEX IF NOT EXISTS `idx_nat_src` cityHash64(`nat_src_ip`, `nat_src_port`) TYPE bloom_filter(0.01) GRANULARITY 1',
    ]);
    // Once applied, the same table plans nothing.
    expect(planTableChanges(desired(), observedDefault())).toEqual({ actions: [], refusals: [] });
  });

  it('adds a new column with its default and codec', () => {
    const plan = planTableChanges(
      desired({
        columns: [{ name: 'zone', type: 'LowCardinality(String)', default: 'dmz', codec: ['ZSTD(3)'] }],
      }),
      observedDefault(),
    );
    expect(plan.refusals).toEqual([]);
    expect(plan.actions.map((a) => a.sql)).toEqual([
      "ALTER TABLE `logs`.`fw` ADD COLUMN IF NOT EXISTS `zone` LowCardinality(String) DEFAULT 'dmz' CODEC(ZSTD(3))",
    ]);
  });

  it('alters both the local and the Distributed table in cluster mode', () => {
    const observed = { ...observedDefault(), engine: 'ReplicatedMergeTree' };
    observed.engineFull = observed.engineFull.replace(
      'non_replicated_deduplication_window',
      'replicated_deduplication_window',
    );
    const plan = planTableChanges(
      desired({ cluster: 'c', columns: [{ name: 'zone', type: 'String' }] }),
      observed,
    );
    expect(plan.actions.map((a) => a.sql)).toEqual([
      "ALTER TABLE `logs`.`fw_local` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `zone` String",
      "ALTER TABLE `logs`.`fw` ON CLUSTER 'c' ADD COLUMN IF NOT EXISTS `zone` String",
    ]);
  });

  it('modifies the TTL without materializing unless asked', () => {
    const d = desired({ retention: { deleteAfter: '1095d' } });
    const plan = planTableChanges(d, observedDefault());
    expect(plan.actions).toEqual([
      {
        kind: 'modifyTtl',
        sql: 'ALTER TABLE `logs`.`fw` MODIFY TTL toDateTime(`ts`) + INTERVAL 1095 DAY DELETE',
        settings: { materialize_ttl_after_modify: '0' },
        description: expect.any(String),
      },
    ]);
    const materialized = planTableChanges(d, observedDefault(), { materializeOnChange: true });
    expect(materialized.actions.map((a) => a.kind)).toEqual(['modifyTtl', 'materializeTtl']);
    expect(materialized.actions[1].sql).toBe('ALTER TABLE `logs`.`fw` MATERIALIZE TTL');
  });

  it('refuses to shorten the retention unless the override is set (issue 13)', () => {
    // The base code planned `MODIFY TTL … 365 DAY` here: a silent deletion of a year of logs.
    const d = desired({ retention: { deleteAfter: '365d', minimumDeleteAfter: '1d' } });
    const plan = planTableChanges(d, observedDefault());
    expect(plan.actions).toEqual([]);
    expect(plan.refusals).toEqual([
      {
        reason: 'DestructiveChangeRefused',
        kind: 'shortenRetention',
        message: expect.stringMatching(/after 730d; shortening that to 365d .*allowShortening/),
      },
    ]);
    const allowed = planTableChanges(d, observedDefault(), { allowShortening: true });
    expect(allowed.refusals).toEqual([]);
    expect(allowed.actions.map((a) => a.sql)).toEqual([
      'ALTER TABLE `logs`.`fw` MODIFY TTL toDateTime(`ts`) + INTERVAL 365 DAY DELETE',
    ]);
  });

  it('sets a missing or changed dedup window and adds a missing skip index', () => {
    const observed = { ...observedDefault(), skipIndexes: ['idx_nat_src'] };
    observed.engineFull = observed.engineFull.replace('non_replicated_deduplication_window = 10000, ', '');
    expect(planTableChanges(desired(), observed).actions.map((a) => a.sql)).toEqual([
      'ALTER TABLE `logs`.`fw` ADD INDEX IF NOT EXISTS `idx_dst_ip` `dst_ip` TYPE bloom_filter(0.01) GRANULARITY 1',
      'ALTER TABLE `logs`.`fw` MODIFY SETTING non_replicated_deduplication_window = 10000',
    ]);
  });

  it.each<[string, (o: ObservedTable) => void, string]>([
    ['a column the spec dropped', (o) => o.columns.push({ name: 'legacy', type: 'String' }), 'dropColumn'],
    ['a retyped column', (o) => (o.columns.find((c) => c.name === 'bytes')!.type = 'UInt32'), 'retypeColumn'],
    ['another sort key', (o) => (o.sortingKey = 'ts, src_ip'), 'orderBy'],
    ['another partition key', (o) => (o.partitionKey = 'toYYYYMM(ts)'), 'partitionBy'],
    ['another engine', (o) => (o.engine = 'ReplacingMergeTree'), 'engine'],
  ])('refuses %s and plans nothing else', (_label, mutate, kind) => {
    const observed = observedDefault();
    mutate(observed);
    const plan = planTableChanges(
      desired({ retention: { deleteAfter: '1095d' }, columns: [{ name: 'zone', type: 'String' }] }),
      observed,
    );
    expect(plan.actions).toEqual([]);
    expect(plan.refusals).toEqual([
      { reason: 'DestructiveChangeRefused', kind, message: expect.stringContaining('logs.fw') },
    ]);
  });

  it('refuses a storage policy change', () => {
    const plan = planTableChanges(desired({ storagePolicy: 'hot_cold' }), observedDefault());
    expect(plan.refusals.map((r) => r.kind)).toEqual(['storagePolicy']);
  });
});

describe('TTL normalisation', () => {
  it('reads ClickHouse rendering and ours as the same rules', () => {
    const ours =
      "toDateTime(`ts`) + INTERVAL 30 DAY TO DISK 'cold', toDateTime(`ts`) + INTERVAL 730 DAY DELETE";
    const theirs = "toDateTime(ts) + toIntervalDay(30) TO DISK 'cold', toDateTime(ts) + toIntervalDay(730)";
    expect(sameTtl(ours, theirs)).toBe(true);
    expect(parseTtl(theirs)?.rules).toEqual([
      { seconds: 30 * 86400, action: { kind: 'disk', name: 'cold' } },
      { seconds: 730 * 86400, action: { kind: 'delete' } },
    ]);
  });

  it('compares durations, not units', () => {
    expect(sameTtl('ts + INTERVAL 36 HOUR DELETE', 'ts + toIntervalDay(1) , ts + toIntervalHour(12)')).toBe(
      false,
    );
    expect(sameTtl('ts + INTERVAL 1 DAY DELETE', 'ts + toIntervalHour(24)')).toBe(true);
  });

  it('treats another target, expression or unknown TTL syntax as different', () => {
    expect(sameTtl("ts + INTERVAL 1 DAY TO DISK 'a'", "ts + toIntervalDay(1) TO VOLUME 'a'")).toBe(false);
    expect(sameTtl('ts + INTERVAL 1 DAY', 'ingest_ts + toIntervalDay(1)')).toBe(false);
    expect(sameTtl('ts + INTERVAL 1 DAY', "ts + toIntervalDay(1) WHERE vendor = 'x'")).toBe(false);
  });

  it('splits engine_full into TTL and settings', () => {
    expect(splitEngineFull(observedDefault().engineFull)).toEqual({
      ttl: 'toDateTime(ts) + toIntervalDay(730)',
      settings: { non_replicated_deduplication_window: '10000', index_granularity: '8192' },
    });
    expect(splitEngineFull('MergeTree ORDER BY ts')).toEqual({ ttl: '', settings: {} });
  });
});
