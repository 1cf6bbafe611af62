/**
 * The external parts against the real test bed: Kafka topics through kafkajs admin and ClickHouse
 * tables over HTTP. Every assertion reads the systems' own metadata (topic metadata/configs,
 * system.tables/columns/parts), never the appliers' word for it.
 */
import { randomBytes } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { ConfigResourceTypes, ConfigSource, Kafka, logLevel, type Admin } from 'kafkajs';
import type { ClickHouseSpec, LogPipelineSpec } from '../operator/src/api/types';
import { dropTable, ensureTable } from '../operator/src/apply/clickhouse';
import { ClickHouseApplyError, createClickHouseClient } from '../operator/src/apply/clickhouse-client';
import { observeTable } from '../operator/src/apply/clickhouse-observe';
import { KafkaAdminPool, KafkaApplyError, kafkaConnection } from '../operator/src/apply/kafka-client';
import { deleteTopic, ensureTopic } from '../operator/src/apply/kafka-topic';
import { buildTableDDL, planTableChanges } from '../operator/src/desired/clickhouse';
import { resolved } from './fixtures/clickhouse-testing';
import { buildTopicSpec, type TopicSpec } from '../operator/src/desired/topic';
import { readTestBed } from './env/testbed';

const bed = readTestBed();
const suffix = randomBytes(4).toString('hex');

describe('Kafka topics (kafkajs admin, real broker)', () => {
  const pool = new KafkaAdminPool();
  const conn = { brokers: [bed.kafka!.bootstrap] };
  let raw: Admin;
  let admin: Admin;
  const topic = `it.topic-${suffix}`;

  beforeAll(async () => {
    raw = new Kafka({ brokers: conn.brokers, logLevel: logLevel.NOTHING }).admin();
    await raw.connect();
    admin = await pool.admin(conn);
  });
  afterAll(async () => {
    await raw.disconnect();
    await pool.close();
  });

  async function ownConfigs(name: string): Promise<Record<string, string>> {
    const res = await raw.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name }],
    });
    const own = res.resources[0].configEntries.filter((e) => e.configSource === ConfigSource.TOPIC_CONFIG);
    return Object.fromEntries(own.map((e) => [e.configName, e.configValue]));
  }
  const partitions = async (name: string) =>
    (await raw.fetchTopicMetadata({ topics: [name] })).topics[0].partitions.length;

  function spec(partitionCount: number): TopicSpec {
    const lp = resolved(
      {},
      {
        kafka: {
          bootstrapServers: conn.brokers,
          topic: { name: topic, partitions: partitionCount, config: { 'retention.ms': '86400000' } },
        },
      },
    );
    const built = buildTopicSpec(lp);
    if (!built.ok) throw new Error(built.message);
    return built.value;
  }

  it('creates the topic with the managed configs and reports the cluster id', async () => {
    const out = await ensureTopic(admin, spec(3));
    expect(out).toMatchObject({
      ready: true,
      exists: true,
      reason: 'TopicReady',
      partitions: 3,
      clusterId: bed.kafka!.clusterId,
    });
    expect(out.changes).toEqual(['created with 3 partitions']);
    expect(await partitions(topic)).toBe(3);
    expect(await ownConfigs(topic)).toEqual({ 'compression.type': 'lz4', 'retention.ms': '86400000' });
    expect((await ensureTopic(admin, spec(3))).changes).toEqual([]);
  });

  it('grows partitions and refuses to shrink them', async () => {
    expect((await ensureTopic(admin, spec(5))).changes).toEqual(['partitions 3 -> 5']);
    expect(await partitions(topic)).toBe(5);
    const shrink = await ensureTopic(admin, spec(2));
    expect(shrink).toMatchObject({
      ready: false,
      exists: true,
      reason: 'PartitionDecreaseNotSupported',
      partitions: 5,
    });
    expect(await partitions(topic)).toBe(5);
  });

  it('repairs drift of managed configs and leaves other overrides alone', async () => {
    await raw.alterConfigs({
      validateOnly: false,
      resources: [
        {
          type: ConfigResourceTypes.TOPIC,
          name: topic,
          configEntries: [
            { name: 'compression.type', value: 'gzip' },
            { name: 'retention.ms', value: '1000' },
            { name: 'max.message.bytes', value: '2000000' },
          ],
        },
      ],
    });
    const out = await ensureTopic(admin, spec(5));
    expect(out.ready).toBe(true);
    expect(out.changes.sort()).toEqual(['set compression.type=lz4', 'set retention.ms=86400000']);
    expect(await ownConfigs(topic)).toEqual({
      'compression.type': 'lz4',
      'retention.ms': '86400000',
      'max.message.bytes': '2000000',
    });
  });

  it('reports a rejected creation as an outcome', async () => {
    const out = await ensureTopic(admin, { ...spec(1), topic: `it.rf-${suffix}`, replicationFactor: 3 });
    expect(out).toMatchObject({ ready: false, exists: false, reason: 'TopicCreateRejected' });
    expect(out.message).toContain('INVALID_REPLICATION_FACTOR');
  });

  it('shares one admin client per Kafka cluster across pipelines', async () => {
    const a = kafkaConnection(resolved({}, { kafka: { bootstrapServers: conn.brokers } }).kafka, {});
    const b = kafkaConnection(
      resolved({ table: 'other' }, { kafka: { bootstrapServers: [...conn.brokers] } }).kafka,
      {},
    );
    expect(await pool.admin(a)).toBe(await pool.admin(b));
    expect(pool.size).toBe(1);
  });

  it('deletes only on the cluster it was created on', async () => {
    expect(await deleteTopic(admin, topic, 'another-cluster')).toMatchObject({
      deleted: false,
      reason: 'ClusterIdMismatch',
    });
    expect((await raw.listTopics()).includes(topic)).toBe(true);
    expect(await deleteTopic(admin, topic, bed.kafka!.clusterId)).toMatchObject({
      deleted: true,
      reason: 'TopicDeleted',
    });
    expect((await raw.listTopics()).includes(topic)).toBe(false);
  });

  it('fails with KafkaUnreachable and the connection error for an unreachable broker', async () => {
    const err = await new KafkaAdminPool({ retries: 1 })
      .admin({ brokers: ['127.0.0.1:1'] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KafkaApplyError);
    expect(err).toMatchObject({
      reason: 'KafkaUnreachable',
      message: expect.stringContaining('ECONNREFUSED'),
    });
  });
});

describe('ClickHouse tables (real engine over HTTP)', () => {
  const ch = bed.clickhouse!;
  let client: ClickHouseClient;
  const databases: string[] = [];

  beforeAll(() => {
    client = createClickHouseClient({ url: ch.url, username: ch.username, password: ch.password });
  });
  afterAll(async () => {
    for (const db of databases) await client.command({ query: `DROP DATABASE IF EXISTS \`${db}\` SYNC` });
    await client.close();
  });

  function pipeline(db: string, chSpec: Partial<ClickHouseSpec> = {}, rest: Partial<LogPipelineSpec> = {}) {
    return resolved({ url: ch.url, database: db, ...chSpec }, rest);
  }
  function newDatabase(): string {
    const db = `it_${suffix}_${databases.length}`;
    databases.push(db);
    return db;
  }
  async function rows<T>(query: string, params: Record<string, unknown> = {}): Promise<T[]> {
    return (await client.query({ query, format: 'JSONEachRow', query_params: params })).json<T>();
  }
  const tableInfo = async (db: string, t = 'fw') =>
    (
      await rows<{ engine_full: string; create_table_query: string }>(
        'SELECT engine_full, create_table_query FROM system.tables WHERE database = {db:String} AND name = {t:String}',
        { db, t },
      )
    )[0];
  const fmt = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
  async function insertAged(db: string, daysAgo: number[]): Promise<void> {
    const now = Date.now();
    const values = daysAgo.map((d, i) => ({
      ts: fmt(now - d * 86_400_000),
      src_ip: '::ffff:10.0.0.1',
      raw: `age ${d}d`,
      kafka_offset: i,
    }));
    await client.insert({ table: `${db}.fw`, format: 'JSONEachRow', values });
  }

  it('creates database and tables; observing them plans nothing and a second reconcile applies nothing', async () => {
    const db = newDatabase();
    const spec = pipeline(db, {}, { integrity: { enabled: true } });
    const first = await ensureTable(client, spec);
    expect(first).toMatchObject({ ready: true, reason: 'TableReady', version: ch.version, refusals: [] });
    expect(first.applied[0]).toBe(`CREATE DATABASE IF NOT EXISTS \`${db}\``);
    // The database, then fw, fw_dlq, fw_integrity, fw_checkpoints, fw_seals and fw_parser_stats.
    expect(first.applied).toHaveLength(7);
    const tables = await rows<{ name: string }>(
      'SELECT name FROM system.tables WHERE database = {db:String} ORDER BY name',
      { db },
    );
    expect(tables.map((t) => t.name)).toEqual([
      'fw',
      'fw_checkpoints',
      'fw_dlq',
      'fw_integrity',
      'fw_parser_stats',
      'fw_seals',
    ]);
    const ddl = buildTableDDL(spec);
    if (!ddl.ok) throw new Error(ddl.message);
    for (const table of ddl.value.tables) {
      expect(planTableChanges(table, await observeTable(client, db, table.storageName))).toEqual({
        actions: [],
        refusals: [],
      });
    }
    expect((await ensureTable(client, spec)).applied).toEqual([]);
    expect((await tableInfo(db)).engine_full).toContain('non_replicated_deduplication_window = 1000');
  });

  it('leaves the parser-stats table to the first worker when asked to, and keeps one that exists (issue 18)', async () => {
    const db = newDatabase();
    const spec = pipeline(db);
    const names = async () =>
      (
        await rows<{ name: string }>(
          'SELECT name FROM system.tables WHERE database = {db:String} ORDER BY name',
          {
            db,
          },
        )
      ).map((t) => t.name);
    const atZero = await ensureTable(client, spec, undefined, undefined, { deferWorkerTables: true });
    expect(atZero).toMatchObject({ ready: true, reason: 'TableReady', deferred: ['fw_parser_stats'] });
    expect(atZero.message).toContain('fw_parser_stats: created with the first worker');
    expect(await names()).toEqual(['fw', 'fw_dlq']);
    // Still at zero: nothing to do, nothing sent.
    expect(
      (await ensureTable(client, spec, undefined, undefined, { deferWorkerTables: true })).applied,
    ).toEqual([]);
    // The workers ask for pods: the reconcile creates it.
    const woken = await ensureTable(client, spec);
    expect(woken.applied).toHaveLength(1);
    expect(woken.applied[0]).toMatch(/^CREATE TABLE .*\.`fw_parser_stats`/);
    expect(woken.deferred).toBeUndefined();
    expect(await names()).toEqual(['fw', 'fw_dlq', 'fw_parser_stats']);
    // Back at zero it stays, kept as desired: no statement, nothing deferred.
    const again = await ensureTable(client, spec, undefined, undefined, { deferWorkerTables: true });
    expect(again).toMatchObject({ ready: true, applied: [] });
    expect(again.deferred).toBeUndefined();
  });

  it('applies a TTL change and an added column, visible in system.tables and system.columns', async () => {
    const db = newDatabase();
    await ensureTable(client, pipeline(db));
    const changed = pipeline(db, {
      retention: { deleteAfter: '1095d' },
      columns: [{ name: 'zone', type: 'LowCardinality(String)', default: 'dmz' }],
    });
    const out = await ensureTable(client, changed);
    expect(out.ready).toBe(true);
    expect((await tableInfo(db)).engine_full).toContain('TTL toDateTime(ts) + toIntervalDay(1095)');
    const zone = await rows<{ type: string; default_expression: string }>(
      "SELECT type, default_expression FROM system.columns WHERE database = {db:String} AND table = 'fw' AND name = 'zone'",
      { db },
    );
    expect(zone).toEqual([{ type: 'LowCardinality(String)', default_expression: "'dmz'" }]);
    expect((await ensureTable(client, changed)).applied).toEqual([]);
  });

  it('refuses destructive changes and leaves the table untouched', async () => {
    const db = newDatabase();
    await ensureTable(client, pipeline(db, { columns: [{ name: 'zone', type: 'String' }] }));
    const before = (await tableInfo(db)).create_table_query;
    const cases: Array<[Partial<ClickHouseSpec>, string]> = [
      [{ columns: [{ name: 'zone', type: 'UInt32' }] }, 'retyping'],
      [{ columns: [] }, 'no longer declares'],
      [{ columns: [{ name: 'zone', type: 'String' }], orderBy: [{ column: 'ts' }] }, 'ordered by'],
      [
        { columns: [{ name: 'zone', type: 'String' }], partitionBy: { column: 'ts', function: 'toYYYYMM' } },
        'partitioned by',
      ],
    ];
    for (const [change, words] of cases) {
      // Each refused spec also asks for a harmless change, which must not be applied either.
      const out = await ensureTable(client, pipeline(db, { ...change, retention: { deleteAfter: '100d' } }));
      expect(out).toMatchObject({ ready: false, reason: 'DestructiveChangeRefused' });
      expect(out.message).toContain(words);
      expect(out.applied.filter((s) => s.includes('`fw`'))).toEqual([]);
      expect((await tableInfo(db)).create_table_query).toBe(before);
    }
  });

  it('refuses to shorten the retention without the override, applies it with (issue 13)', async () => {
    const db = newDatabase();
    await ensureTable(client, pipeline(db));
    const shorter = { deleteAfter: '365d', minimumDeleteAfter: '1d' };
    const refused = await ensureTable(client, pipeline(db, { retention: shorter }));
    expect(refused).toMatchObject({ ready: false, reason: 'DestructiveChangeRefused' });
    expect(refused.message).toMatch(/shortening that to 365d .*allowShortening/);
    expect(refused.applied.filter((s) => s.includes('TTL'))).toEqual([]);
    // The integrity and DLQ tables follow the same retention: none of them was shortened.
    for (const t of ['fw', 'fw_dlq', 'fw_integrity']) {
      const info = await rows<{ e: string }>(
        'SELECT engine_full AS e FROM system.tables WHERE database = {db:String} AND name = {t:String}',
        { db, t },
      );
      if (info.length > 0) expect(info[0].e).toContain('toIntervalDay(730)');
    }
    const allowed = await ensureTable(
      client,
      pipeline(db, { retention: { ...shorter, allowShortening: true } }),
    );
    expect(allowed.ready).toBe(true);
    expect((await tableInfo(db)).engine_full).toContain('TTL toDateTime(ts) + toIntervalDay(365)');
  });

  it('deletes rows older than the TTL on OPTIMIZE … FINAL', async () => {
    const db = newDatabase();
    await ensureTable(client, pipeline(db, { retention: { deleteAfter: '5d' } }));
    await insertAged(db, [0, 2, 10, 30]);
    await client.command({ query: `OPTIMIZE TABLE \`${db}\`.fw FINAL` });
    const left = await rows<{ raw: string }>(`SELECT raw FROM \`${db}\`.fw ORDER BY raw`);
    expect(left.map((r) => r.raw)).toEqual(['age 0d', 'age 2d']);
  });

  it('moves parts past the move age to the cold disk', async () => {
    const db = newDatabase();
    await ensureTable(client, pipeline(db, { storagePolicy: 'hot_cold', retention: { deleteAfter: '30d' } }));
    await insertAged(db, [0, 3]);
    const disks = async () =>
      rows<{ partition: string; disk_name: string }>(
        "SELECT partition, disk_name FROM system.parts WHERE database = {db:String} AND table = 'fw' AND active AND rows > 0 ORDER BY partition",
        { db },
      );
    expect((await disks()).map((p) => p.disk_name)).toEqual(['default', 'default']);
    const out = await ensureTable(
      client,
      pipeline(db, {
        storagePolicy: 'hot_cold',
        retention: {
          deleteAfter: '30d',
          moves: [{ after: '1d', toDisk: 'cold' }],
          materializeOnChange: true,
        },
      }),
    );
    expect(out.applied.some((s) => s.endsWith('MATERIALIZE TTL'))).toBe(true);
    const deadline = Date.now() + 60_000;
    let placed = await disks();
    while (placed[0]?.disk_name !== 'cold' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      placed = await disks();
    }
    // Partitions sort by day: the 3-day-old part is first and must be on cold, today's stays hot.
    expect(placed.map((p) => p.disk_name)).toEqual(['cold', 'default']);
  });

  it.each<[string, string, Partial<ClickHouseSpec>]>([
    [
      'a missing cold disk',
      'ColdDiskNotFound',
      { storagePolicy: 'hot_cold', retention: { moves: [{ after: '1d', toDisk: 'archive' }] } },
    ],
    [
      'a disk outside the default policy',
      'ColdDiskNotFound',
      { retention: { moves: [{ after: '1d', toDisk: 'cold' }] } },
    ],
    [
      'a missing volume',
      'VolumeNotFound',
      { storagePolicy: 'hot_cold', retention: { moves: [{ after: '1d', toVolume: 'glacier' }] } },
    ],
    ['a missing storage policy', 'StoragePolicyNotFound', { storagePolicy: 'tiered_nowhere' }],
    ['an undefined cluster', 'ClusterNotFound', { cluster: 'nowhere' }],
  ])('reports %s as %s without creating anything', async (_label, reason, chSpec) => {
    const db = newDatabase();
    const out = await ensureTable(client, pipeline(db, chSpec));
    expect(out).toMatchObject({ ready: false, reason, applied: [] });
    expect(await rows('SELECT name FROM system.databases WHERE name = {db:String}', { db })).toEqual([]);
  });

  it('drops tables only on the server they were created on', async () => {
    const db = newDatabase();
    const spec = pipeline(db);
    const owner = { namespace: 'tt', name: 'drop', uid: 'b0c1e2d3-0000-4000-8000-000000000001' };
    const created = await ensureTable(client, spec, { owner, adopt: false });
    expect(created.identity).toMatch(/^(server|host):/);
    const other = { owner: { ...owner, name: 'other', uid: 'b0c1e2d3-0000-4000-8000-000000000002' } };
    expect(await dropTable(client, spec, created.identity!, other)).toMatchObject({
      dropped: false,
      reason: 'TablesNotOwned',
    });
    expect(await rows('SELECT name FROM system.tables WHERE database = {db:String}', { db })).toHaveLength(3);
    expect(
      await dropTable(client, spec, 'server:00000000-0000-0000-0000-00000000beef', { owner }),
    ).toMatchObject({
      dropped: false,
      reason: 'ServerIdentityMismatch',
    });
    expect(await rows('SELECT name FROM system.tables WHERE database = {db:String}', { db })).toHaveLength(3);
    expect(await dropTable(client, spec, created.identity!, { owner })).toMatchObject({
      dropped: true,
      reason: 'TablesDropped',
    });
    expect(await rows('SELECT name FROM system.tables WHERE database = {db:String}', { db })).toEqual([]);
  });

  it('throws ClickHouseUnreachable with the connection error for an unreachable server', async () => {
    const down = createClickHouseClient({ url: 'http://127.0.0.1:1', requestTimeoutMs: 5_000 });
    const err = await ensureTable(down, pipeline('unreachable')).catch((e: unknown) => e);
    await down.close();
    expect(err).toBeInstanceOf(ClickHouseApplyError);
    expect(err).toMatchObject({
      reason: 'ClickHouseUnreachable',
      message: expect.stringContaining('ECONNREFUSED'),
    });
  });

  it('throws ClickHouseAuthFailed with the server message for wrong credentials', async () => {
    const wrong = createClickHouseClient({
      url: ch.url,
      username: ch.username,
      password: `${ch.password}-wrong`,
    });
    const err = await ensureTable(wrong, pipeline('denied')).catch((e: unknown) => e);
    await wrong.close();
    expect(err).toMatchObject({ reason: 'ClickHouseAuthFailed' });
  });
});
