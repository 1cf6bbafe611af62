import type { ClickHouseSpec, LogPipelineSpec } from '../../api/types';
import { buildTableDDL, ddlStatements, type TableDDL } from './ddl';
import { buildWorkerColumns, resolveTableSchema } from './schema';
import { resolved } from '../../../../test/fixtures/clickhouse-testing';

function ddl(ch: Partial<ClickHouseSpec> = {}, rest: Partial<LogPipelineSpec> = {}): TableDDL {
  const r = buildTableDDL(resolved(ch, rest));
  if (!r.ok) throw new Error(`${r.reason}: ${r.message}`);
  return r.value;
}

function failure(ch: Partial<ClickHouseSpec>, rest: Partial<LogPipelineSpec> = {}): string {
  const r = buildTableDDL(resolved(ch, rest));
  if (r.ok) throw new Error(`expected a failure, got:\n${ddlStatements(r.value).join('\n')}`);
  return r.reason;
}

const dataCreate = (d: TableDDL) => d.tables[0].create[0];

describe('buildTableDDL: firewall preset defaults', () => {
  const d = ddl();

  it('renders the complete default DDL', () => {
    expect(ddlStatements(d).join(';\n\n')).toMatchSnapshot();
  });

  it('creates the database, the data table and the dead-letter table', () => {
    expect(d.createDatabase).toBe('CREATE DATABASE IF NOT EXISTS `logs`');
    expect(d.tables.map((t) => [t.role, t.name, t.storageName, t.engine])).toEqual([
      ['data', 'fw', 'fw', 'MergeTree'],
      ['deadLetter', 'fw_dlq', 'fw_dlq', 'MergeTree'],
      ['parserStats', 'fw_parser_stats', 'fw_parser_stats', 'MergeTree'],
    ]);
  });

  it('partitions by day, orders for the IP query, and keeps 730 days', () => {
    const sql = dataCreate(d);
    expect(sql).toContain('PARTITION BY toYYYYMMDD(`ts`)\n');
    expect(sql).toContain('ORDER BY (`src_ip`, `ts`)\n');
    expect(sql).toContain('TTL toDateTime(`ts`) + INTERVAL 730 DAY DELETE\n');
    expect(sql).toContain('INDEX `idx_dst_ip` `dst_ip` TYPE bloom_filter(0.01) GRANULARITY 1');
    expect(sql.endsWith('SETTINGS non_replicated_deduplication_window = 10000')).toBe(true);
  });

  it('declares the preset columns with their worker sources', () => {
    const schema = resolveTableSchema(resolved());
    expect(buildWorkerColumns(schema).map((c) => `${c.name}:${c.source}`)).toEqual([
      'ts:timestamp', 'ingest_ts:ingest_time', 'vendor:vendor', 'device:device', 'src_ip:src_ip', 'dst_ip:dst_ip',
      'src_port:src_port', 'dst_port:dst_port', 'nat_src_ip:nat_src_ip', 'nat_src_port:nat_src_port', 'nat_dst_ip:nat_dst_ip', 'nat_dst_port:nat_dst_port', 'proto:proto', 'action:action', 'bytes:bytes', 'rule:rule',
      'severity:severity', 'raw:raw', 'kafka_partition:kafka_partition', 'kafka_offset:kafka_offset', 'kafka_line:kafka_line',
      'sender_ip:sender_ip',
    ]); // prettier-ignore
    const types = Object.fromEntries(schema.columns.map((c) => [c.name, c.type]));
    expect(types.ts).toBe("DateTime64(3, 'UTC')");
    expect(types.src_ip).toBe('IPv6');
    expect(types.action).toBe(
      "Enum8('unknown' = 0, 'allow' = 1, 'deny' = 2, 'drop' = 3, 'reset' = 4, 'close' = 5, 'alert' = 6)",
    );
    expect(types.kafka_offset).toBe('UInt64');
  });
});

describe('buildTableDDL: options', () => {
  it('appends user columns after the preset, with default and codec', () => {
    const d = ddl({
      columns: [
        {
          name: 'zone',
          type: 'LowCardinality(String)',
          source: 'field:zone',
          default: 'dmz',
          codec: ['ZSTD(3)'],
        },
      ],
    });
    const schema = d.tables[0].schema;
    expect(schema.columns[schema.columns.length - 1]).toMatchObject({
      name: 'zone',
      default: "'dmz'",
      source: 'field:zone',
    });
    expect(dataCreate(d)).toContain("  `zone` LowCardinality(String) DEFAULT 'dmz' CODEC(ZSTD(3)),\n  INDEX");
  });

  it('uses only user columns with preset custom, defaulting keys to the time column', () => {
    const d = ddl({
      preset: 'custom',
      timeColumn: 'at',
      columns: [
        { name: 'at', type: 'DateTime', source: 'timestamp' },
        { name: 'msg', type: 'String', source: 'raw' },
      ],
    });
    const sql = dataCreate(d);
    expect(d.tables[0].schema.columns.map((c) => c.name)).toEqual(['at', 'msg']);
    expect(sql).toContain('PARTITION BY toYYYYMMDD(`at`)\nORDER BY `at`\nTTL `at` + INTERVAL 730 DAY DELETE');
    expect(sql).not.toContain('INDEX');
  });

  it('honours partitionBy and orderBy expressions', () => {
    const sql = dataCreate(
      ddl({
        partitionBy: { column: 'ts', function: 'toYYYYMM' },
        orderBy: [{ column: 'ts', function: 'toStartOfHour' }, { column: 'src_ip' }],
      }),
    );
    expect(sql).toContain('PARTITION BY toYYYYMM(`ts`)\nORDER BY (toStartOfHour(`ts`), `src_ip`)\n');
  });

  it('renders tiered moves before the delete with the storage policy', () => {
    const d = ddl({
      storagePolicy: 'hot_cold',
      retention: {
        deleteAfter: '730d',
        moves: [
          { after: '90d', toVolume: 'cold' },
          { after: '7d', toDisk: 'warm' },
        ],
      },
    });
    expect(dataCreate(d)).toContain(
      "TTL toDateTime(`ts`) + INTERVAL 7 DAY TO DISK 'warm', toDateTime(`ts`) + INTERVAL 90 DAY TO VOLUME 'cold', toDateTime(`ts`) + INTERVAL 730 DAY DELETE\n" +
        "SETTINGS storage_policy = 'hot_cold', non_replicated_deduplication_window = 10000",
    );
  });

  it.each([
    ['36h', 'INTERVAL 36 HOUR'],
    ['1d12h', 'INTERVAL 36 HOUR'],
    ['48h', 'INTERVAL 2 DAY'],
    ['90m', 'INTERVAL 90 MINUTE'],
    ['45s', 'INTERVAL 45 SECOND'],
    ['2000ms', 'INTERVAL 2 SECOND'],
  ])('renders deleteAfter %s as %s', (after, interval) => {
    expect(dataCreate(ddl({ retention: { deleteAfter: after } }))).toContain(`+ ${interval} DELETE`);
  });

  it('sets the dedup window the worker relies on', () => {
    expect(dataCreate(ddl({ dedupWindow: 5000 }))).toContain('non_replicated_deduplication_window = 5000');
  });

  it('adds the integrity tables and drops the dead-letter table as asked', () => {
    const d = ddl({}, { deadLetter: { enabled: false }, integrity: { enabled: true } });
    expect(d.tables.map((t) => t.name)).toEqual([
      'fw',
      'fw_integrity',
      'fw_checkpoints',
      'fw_seals',
      'fw_parser_stats',
    ]);
    expect(d.tables[3].create[0]).toContain(
      'PARTITION BY toYear(`day`)\nORDER BY (`table_name`, `day`)\nSETTINGS',
    );
    expect(d.tables[1].create[0]).toContain(
      'ORDER BY (`partition`, `first_offset`)\nTTL toDateTime(`inserted_at`) + INTERVAL 730 DAY DELETE',
    );
    expect(d.tables[1].schema.columns.find((c) => c.name === 'batch_digest')?.type).toBe('FixedString(64)');
    expect(d.tables[2].create[0]).not.toContain('TTL');
  });

  it('builds replicated local tables behind Distributed ones in cluster mode', () => {
    const d = ddl({ cluster: 'main' }, { integrity: { enabled: true } });
    expect(d.createDatabase).toBe("CREATE DATABASE IF NOT EXISTS `logs` ON CLUSTER 'main'");
    const data = d.tables[0];
    expect([data.name, data.storageName, data.engine]).toEqual(['fw', 'fw_local', 'ReplicatedMergeTree']);
    expect(data.create[0]).toContain("CREATE TABLE IF NOT EXISTS `logs`.`fw_local` ON CLUSTER 'main'\n(");
    expect(data.create[0]).toContain(
      "ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/logs/fw_local', '{replica}')",
    );
    expect(data.create[0]).toContain('SETTINGS replicated_deduplication_window = 10000');
    expect(data.create[1]).toBe(
      "CREATE TABLE IF NOT EXISTS `logs`.`fw` ON CLUSTER 'main' AS `logs`.`fw_local`\n" +
        "ENGINE = Distributed('main', 'logs', 'fw_local', cityHash64(`kafka_partition`, `kafka_offset`))",
    );
    expect(d.tables.find((t) => t.role === 'integrity')?.create[1]).toContain(
      'cityHash64(`partition`, `first_offset`)',
    );
  });

  it('hashes the sort key for sharding when provenance columns are absent', () => {
    const d = ddl({
      cluster: 'main',
      preset: 'custom',
      columns: [
        { name: 'ts', type: 'DateTime', source: 'timestamp' },
        { name: 'host', type: 'String' },
      ],
      orderBy: [{ column: 'host' }, { column: 'ts' }],
    });
    expect(d.tables[0].create[1]).toContain(
      "Distributed('main', 'logs', 'fw_local', cityHash64(`host`, `ts`))",
    );
  });
});

describe('buildTableDDL: spec errors', () => {
  it.each<[string, Partial<ClickHouseSpec>, string]>([
    ['custom without columns', { preset: 'custom' }, 'InvalidSchema'],
    [
      'custom without the time column',
      { preset: 'custom', columns: [{ name: 'msg', type: 'String' }] },
      'InvalidTimeColumn',
    ],
    ['time column of a non-time type', { timeColumn: 'rule' }, 'InvalidTimeColumn'],
    ['duplicate of a preset column', { columns: [{ name: 'ts', type: 'DateTime' }] }, 'DuplicateColumn'],
    ['unknown order column', { orderBy: [{ column: 'nope' }] }, 'InvalidKey'],
    ['date function on a string', { partitionBy: { column: 'rule', function: 'toYYYYMM' } }, 'InvalidKey'],
    [
      'Nullable key',
      { columns: [{ name: 'n', type: 'Nullable(String)' }], orderBy: [{ column: 'n' }] },
      'InvalidKey',
    ],
    ['unknown key function', { orderBy: [{ column: 'ts', function: 'sleep' as never }] }, 'InvalidKey'],
    ['empty orderBy', { orderBy: [] }, 'InvalidKey'],
    ['sub-second retention', { retention: { deleteAfter: '1500ms' } }, 'InvalidRetention'],
    [
      'move after delete',
      { retention: { deleteAfter: '30d', moves: [{ after: '30d', toDisk: 'cold' }] } },
      'InvalidRetention',
    ],
    [
      'move with disk and volume',
      { retention: { moves: [{ after: '1d', toDisk: 'a', toVolume: 'b' }] } },
      'InvalidRetention',
    ],
    ['move without target', { retention: { moves: [{ after: '1d' }] } }, 'InvalidRetention'],
    ['dedup window 0', { dedupWindow: 0 }, 'InvalidDedupWindow'],
    [
      'static source without field',
      { columns: [{ name: 'site', type: 'String', source: 'static:site' }] },
      'InvalidColumnSource',
    ],
  ])('%s → %s', (_label, ch, reason) => {
    expect(failure(ch)).toBe(reason);
  });
});

describe('buildTableDDL: injection attempts are rejected, never escaped', () => {
  const payloads = [
    "x'; DROP TABLE t; --",
    'x`; DROP TABLE t; --',
    'x -- c',
    'x /* c */',
    'a\nb',
    'x;y',
    "x'y",
    'x\\y',
    ' x',
    '',
  ];
  // Inside a quoted literal only a quote, a backslash or a control character could break out;
  // other payload characters are plain content there, so literal fields are tested with those three.
  const breaksLiteral = (p: string) => /['\\\n]/.test(p);
  const nonEmpty = (p: string) => p !== '';
  const all = () => true;
  const fields: Array<[string, (p: string) => Partial<ClickHouseSpec>, (p: string) => boolean]> = [
    ['database', (p) => ({ database: p }), all],
    ['table', (p) => ({ table: p }), all],
    ['column name', (p) => ({ columns: [{ name: p, type: 'String' }] }), all],
    ['column type', (p) => ({ columns: [{ name: 'c', type: `String${p}` }] }), nonEmpty],
    ['enum label', (p) => ({ columns: [{ name: 'c', type: `Enum8('${p}' = 1)` }] }), breaksLiteral],
    ['timezone', (p) => ({ columns: [{ name: 'c', type: `DateTime('${p}')` }] }), all],
    ['codec', (p) => ({ columns: [{ name: 'c', type: 'String', codec: [`ZSTD(1)${p}`] }] }), nonEmpty],
    ['default', (p) => ({ columns: [{ name: 'c', type: 'UInt8', default: `1${p}` }] }), nonEmpty],
    [
      'string default',
      (p) => ({ columns: [{ name: 'c', type: 'String', default: `'${p}'` }] }),
      breaksLiteral,
    ],
    ['cluster', (p) => ({ cluster: p }), all],
    ['storage policy', (p) => ({ storagePolicy: p }), all],
    ['disk', (p) => ({ retention: { moves: [{ after: '1d', toDisk: p }] } }), all],
    ['volume', (p) => ({ retention: { moves: [{ after: '1d', toVolume: p }] } }), all],
    ['time column', (p) => ({ timeColumn: p }), all],
    ['order column', (p) => ({ orderBy: [{ column: p }] }), all],
    [
      'partition function',
      (p) => ({ partitionBy: { column: 'ts', function: `toYYYYMM${p}` as never } }),
      nonEmpty,
    ],
  ];
  for (const [field, make, applies] of fields) {
    it.each(payloads.filter(applies))(`${field}: %j`, (p) => {
      const r = buildTableDDL(resolved(make(p)));
      expect(r.ok).toBe(false);
    });
  }

  it('rejects a malicious dead-letter table name', () => {
    expect(buildTableDDL(resolved({}, { deadLetter: { table: 'x`; DROP DATABASE logs; --' } })).ok).toBe(
      false,
    );
  });

  it('rejects names that would overflow 63 characters with the _local suffix', () => {
    expect(failure({ cluster: 'c', table: 'a'.repeat(60) })).toBe('InvalidIdentifier');
  });
});
