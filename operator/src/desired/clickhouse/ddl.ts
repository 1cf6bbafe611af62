/**
 * CREATE statements for a pipeline's ClickHouse objects, built from a ResolvedSpec without I/O.
 *
 * Exactly-once: the worker inserts every batch with `insert_deduplication_token`; MergeTree honours
 * tokens only with `non_replicated_deduplication_window` > 0 (ReplicatedMergeTree: the
 * `replicated_deduplication_window`), so every table sets it to `clickhouse.dedupWindow`.
 *
 * Cluster mode (`clickhouse.cluster`): every statement runs ON CLUSTER; the data lives in
 * `<table>_local` (ReplicatedMergeTree, one ZooKeeper path per shard) and `<table>` is a Distributed
 * table in front. Its sharding key is a hash of row content, not rand(): a retried batch must split
 * into the same per-shard blocks, or each shard would see a different block under the same
 * deduplication token and either drop new rows or keep duplicates. The Kafka provenance columns make
 * a cheap, evenly spread key; without them the sort key is hashed.
 */
import type { ResolvedSpec } from '../../api/defaults';
import {
  checkpointSchema,
  deadLetterSchema,
  integritySchema,
  parserStatsSchema,
  sealSchema,
} from './aux-tables';
import {
  SchemaError,
  catchSchemaError,
  checkIdentifier,
  qualifiedName,
  quoteIdentifier,
  type Result,
} from '../../../../common/src/sql/identifiers';
import {
  renderColumnDefinition,
  renderIndexExpression,
  resolveTableSchema,
  type TableSchema,
} from './schema';

/** Which companion a table is. */
export type TableRole = 'data' | 'deadLetter' | 'integrity' | 'checkpoints' | 'seals' | 'parserStats';

/** One desired table: its schema, names, engine settings and CREATE statements. */
export interface DesiredTable {
  role: TableRole;
  database: string;
  /** The name writers and readers use (the Distributed table in cluster mode). */
  name: string;
  /** The MergeTree table holding the parts (`<name>_local` in cluster mode, else `name`). */
  storageName: string;
  schema: TableSchema;
  /** 'MergeTree' or 'ReplicatedMergeTree'. */
  engine: string;
  /** Table-level settings we manage, by name, as rendered values. */
  settings: Record<string, string>;
  /** ` ON CLUSTER 'c'` or '' (every statement about this table carries it). */
  onCluster: string;
  /** CREATE statements in order (storage table, then the Distributed table). */
  create: string[];
  /** The owner record every physical table carries as its COMMENT (absent: no ownership, e.g. plan). */
  comment?: string;
}

/** All of a pipeline's ClickHouse DDL. */
export interface TableDDL {
  database: string;
  cluster?: string;
  /** ` ON CLUSTER 'c'` or ''. */
  onCluster: string;
  createDatabase: string;
  tables: DesiredTable[];
}

const MAX_DEDUP_WINDOW = 100_000;

function settingsFor(spec: ResolvedSpec, replicated: boolean): Record<string, string> {
  const ch = spec.clickhouse;
  const window = ch.dedupWindow;
  if (!Number.isSafeInteger(window) || window < 1 || window > MAX_DEDUP_WINDOW) {
    throw new SchemaError(
      'InvalidDedupWindow',
      `dedupWindow must be an integer in 1..${MAX_DEDUP_WINDOW} (0 would disable exactly-once)`,
    );
  }
  const settings: Record<string, string> = {};
  if (ch.storagePolicy !== undefined)
    settings.storage_policy = `'${checkIdentifier(ch.storagePolicy, 'storagePolicy')}'`;
  settings[replicated ? 'replicated_deduplication_window' : 'non_replicated_deduplication_window'] =
    String(window);
  return settings;
}

function shardingKey(schema: TableSchema): string {
  const names = schema.columns.map((c) => c.name);
  const provenance = ['kafka_partition', 'kafka_offset'];
  const key = provenance.every((p) => names.includes(p))
    ? provenance.map((p) => quoteIdentifier(p))
    : schema.orderBy;
  return `cityHash64(${key.join(', ')})`;
}

/** ` COMMENT '<record>'`: owner records hold only [a-z0-9./=:-], so no escaping is needed (checked). */
function commentClause(comment: string | undefined): string {
  if (comment === undefined) return '';
  if (!/^[A-Za-z0-9./=:_-]*$/.test(comment))
    throw new SchemaError('InvalidSchema', 'owner record has unexpected characters');
  return `\nCOMMENT '${comment}'`;
}

function storageStatement(t: Omit<DesiredTable, 'create'>): string {
  const s = t.schema;
  const body = [
    ...s.columns.map((c) => `  ${renderColumnDefinition(c)}`),
    ...s.skipIndexes.map(
      (ix) =>
        `  INDEX ${quoteIdentifier(ix.name)} ${renderIndexExpression(ix)} TYPE ${ix.type} GRANULARITY ${ix.granularity}`,
    ),
  ].join(',\n');
  const engine =
    t.engine === 'ReplicatedMergeTree'
      ? `ReplicatedMergeTree('/clickhouse/tables/{shard}/${t.database}/${t.storageName}', '{replica}')`
      : 'MergeTree';
  const lines = [
    `CREATE TABLE IF NOT EXISTS ${qualifiedName(t.database, t.storageName)}${t.onCluster}\n(\n${body}\n)`,
    `ENGINE = ${engine}`,
    `PARTITION BY ${s.partitionBy}`,
    // One key is written bare: ClickHouse reports `ORDER BY (a)` as the expression "(a)", not "a".
    `ORDER BY ${s.orderBy.length === 1 ? s.orderBy[0] : `(${s.orderBy.join(', ')})`}`,
  ];
  if (s.ttl) lines.push(`TTL ${s.ttl}`);
  lines.push(
    `SETTINGS ${Object.entries(t.settings)
      .map(([k, v]) => `${k} = ${v}`)
      .join(', ')}`,
  );
  return lines.join('\n') + commentClause(t.comment);
}

function desiredTable(
  spec: ResolvedSpec,
  role: TableRole,
  name: string,
  schema: TableSchema,
  onCluster: string,
  comment: string | undefined,
): DesiredTable {
  const database = checkIdentifier(spec.clickhouse.database, 'database');
  checkIdentifier(name, 'table');
  const cluster = spec.clickhouse.cluster;
  const storageName = cluster ? `${name}_local` : name;
  checkIdentifier(storageName, 'table');
  const base = {
    role,
    database,
    name,
    storageName,
    schema,
    onCluster,
    engine: cluster ? 'ReplicatedMergeTree' : 'MergeTree',
    settings: settingsFor(spec, !!cluster),
    comment,
  };
  const create = [storageStatement(base)];
  if (cluster) {
    create.push(
      `CREATE TABLE IF NOT EXISTS ${qualifiedName(database, name)}${onCluster} AS ${qualifiedName(database, storageName)}\n` +
        `ENGINE = Distributed('${cluster}', '${database}', '${storageName}', ${shardingKey(schema)})` +
        commentClause(comment),
    );
  }
  return { ...base, create };
}

function buildUnchecked(spec: ResolvedSpec, comment: string | undefined): TableDDL {
  const ch = spec.clickhouse;
  const database = checkIdentifier(ch.database, 'database');
  const cluster = ch.cluster === undefined ? undefined : checkIdentifier(ch.cluster, 'cluster');
  const onCluster = cluster ? ` ON CLUSTER '${cluster}'` : '';
  const tables = [desiredTable(spec, 'data', ch.table, resolveTableSchema(spec), onCluster, comment)];
  if (spec.deadLetter.enabled)
    tables.push(
      desiredTable(spec, 'deadLetter', spec.deadLetter.table, deadLetterSchema(spec), onCluster, comment),
    );
  if (spec.integrity.enabled) {
    tables.push(
      desiredTable(spec, 'integrity', spec.integrity.table, integritySchema(spec), onCluster, comment),
    );
    tables.push(
      desiredTable(
        spec,
        'checkpoints',
        spec.integrity.checkpointTable,
        checkpointSchema(),
        onCluster,
        comment,
      ),
    );
    tables.push(desiredTable(spec, 'seals', spec.integrity.sealTable, sealSchema(), onCluster, comment));
  }
  tables.push(
    desiredTable(spec, 'parserStats', spec.coverage.table, parserStatsSchema(), onCluster, comment),
  );
  const names = new Set(tables.flatMap((t) => [t.name, t.storageName]));
  if (names.size !== tables.length * (cluster ? 2 : 1))
    throw new SchemaError('InvalidSchema', 'two pipeline tables share a name');
  return {
    database,
    cluster,
    onCluster,
    createDatabase: `CREATE DATABASE IF NOT EXISTS ${quoteIdentifier(database, 'database')}${onCluster}`,
    tables,
  };
}

/**
 * Builds every CREATE statement of a pipeline; a spec error comes back as a failed Result with a
 * reason. `ownerComment` (see desired/ownership.ts) becomes every table's COMMENT, so a table is
 * born with its owner record in the same atomic CREATE.
 */
export function buildTableDDL(spec: ResolvedSpec, ownerComment?: string): Result<TableDDL> {
  return catchSchemaError(() => buildUnchecked(spec, ownerComment));
}

/** All statements of a TableDDL in execution order (database first). */
export function ddlStatements(ddl: TableDDL): string[] {
  return [ddl.createDatabase, ...ddl.tables.flatMap((t) => t.create)];
}
