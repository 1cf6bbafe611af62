/**
 * The catalogue's queries and the reads that send them (split out of clickhouse-catalogue.ts): one
 * full round over the used databases, and probes of named tables. Only validated identifiers reach
 * them, always as parameters.
 */
import {
  tableKey,
  type CatalogueExecutor,
  type CatalogueExtra,
  type CatalogueSnapshot,
  type CatalogueTable,
  type TableRow,
} from './catalogue-snapshot';

const Q_SERVER = 'SELECT version() AS version, hostName() AS host, toString(serverUUID()) AS uuid';
const Q_DATABASES = 'SELECT name FROM system.databases WHERE has({dbs:Array(String)}, name)';
const Q_TABLES =
  'SELECT database, name, engine, engine_full AS engineFull, sorting_key AS sortingKey, ' +
  'partition_key AS partitionKey, storage_policy AS storagePolicy, comment ' +
  'FROM system.tables WHERE has({dbs:Array(String)}, database)';
const Q_COLUMNS =
  'SELECT database, table, name, type FROM system.columns WHERE has({dbs:Array(String)}, database) ' +
  'ORDER BY database, table, position';
const Q_CLUSTERS = 'SELECT DISTINCT cluster FROM system.clusters';
const Q_POLICIES = 'SELECT policy_name AS policy, volume_name AS volume, disks FROM system.storage_policies';
const Q_DISKS = 'SELECT name FROM system.disks';
const Q_INDEXES =
  'SELECT database, table, name FROM system.data_skipping_indices WHERE has({dbs:Array(String)}, database)';

// Probes: only the named tables (pruned by database and name, then matched exactly), for every
// reconcile waiting at once. `keys` are `database.table` of validated identifiers (no dots inside).
const PROBE_WHERE =
  "has({dbs:Array(String)}, database) AND has({names:Array(String)}, NAME) AND has({keys:Array(String)}, concat(database, '.', NAME))";
const Q_PROBE_TABLES =
  'SELECT database, name, engine, engine_full AS engineFull, sorting_key AS sortingKey, ' +
  'partition_key AS partitionKey, storage_policy AS storagePolicy, comment ' +
  `FROM system.tables WHERE ${PROBE_WHERE.replace(/NAME/g, 'name')}`;
const Q_PROBE_COLUMNS =
  `SELECT database, table, name, type FROM system.columns WHERE ${PROBE_WHERE.replace(/NAME/g, 'table')} ` +
  'ORDER BY database, table, position';
const Q_PROBE_INDEXES = `SELECT database, table, name FROM system.data_skipping_indices WHERE ${PROBE_WHERE.replace(/NAME/g, 'table')}`;

/** Queries one round sends (for tests and the bench), plus 1 for 'clusters' and 2 for 'storage' once needed. */
export const QUERIES_PER_ROUND = 5;

type ColumnRow = { database: string; table: string; name: string; type: string };
type IndexRow = { database: string; table: string; name: string };

/** Attaches column and index rows to the tables they belong to (rows of unknown tables are dropped). */
function attach(tables: Map<string, CatalogueTable>, columns: ColumnRow[], indexes: IndexRow[]): void {
  for (const c of columns)
    tables.get(tableKey(c.database, c.table))?.columns.push({ name: c.name, type: c.type });
  for (const i of indexes) tables.get(tableKey(i.database, i.table))?.skipIndexes.push(i.name);
}

/** Reads the named `database.table` keys: their rows, plus columns and indexes of those in `fullKeys`. */
export async function readProbe(
  run: CatalogueExecutor,
  keys: string[],
  fullKeys: ReadonlySet<string>,
): Promise<Map<string, CatalogueTable>> {
  const dbs = [...new Set(keys.map((k) => k.split('.')[0]))];
  const names = [...new Set(keys.map((k) => k.slice(k.indexOf('.') + 1)))];
  const params = { dbs, names, keys };
  const wanted = new Set(keys);
  const rows = (await run<TableRow>(Q_PROBE_TABLES, params)).filter((r) =>
    wanted.has(tableKey(r.database, r.name)),
  );
  const found = new Map<string, CatalogueTable>();
  for (const { database, name, ...row } of rows)
    found.set(tableKey(database, name), { ...row, columns: [], skipIndexes: [] });
  const detailed = [...found.keys()].filter((k) => fullKeys.has(k));
  if (detailed.length > 0) {
    const p = { dbs, names: [...new Set(detailed.map((k) => k.slice(k.indexOf('.') + 1)))], keys: detailed };
    const columns = await run<ColumnRow>(Q_PROBE_COLUMNS, p);
    const indexes = await run<IndexRow>(Q_PROBE_INDEXES, p);
    attach(found, columns, indexes);
  }
  return found;
}

/** One round over `dbs` (plus the extras asked for), its tables not yet interned; `at` is when it started. */
export async function readRound(
  run: CatalogueExecutor,
  dbs: string[],
  extras: ReadonlySet<CatalogueExtra>,
  at: number,
): Promise<CatalogueSnapshot & { tables: Map<string, CatalogueTable> }> {
  const params = { dbs };
  const [server] = await run<{ version: string; host: string; uuid: string }>(Q_SERVER, {});
  const databases = await run<{ name: string }>(Q_DATABASES, params);
  const tableRows = await run<TableRow>(Q_TABLES, params);
  const columns = await run<ColumnRow>(Q_COLUMNS, params);
  const indexes = await run<IndexRow>(Q_INDEXES, params);
  const extra = await readExtras(run, extras);
  const tables = new Map<string, CatalogueTable>();
  for (const { database, name, ...row } of tableRows)
    tables.set(tableKey(database, name), { ...row, columns: [], skipIndexes: [] });
  attach(tables, columns, indexes);
  return {
    version: server?.version ?? 'unknown',
    host: server?.host ?? 'unknown',
    uuid: server?.uuid ?? '',
    databases: new Set(databases.map((d) => d.name)),
    readDatabases: new Set(dbs),
    ...extra,
    tables,
    at,
  };
}

/** The server-wide facts some pipeline asked for: cluster names, storage policies and disks. */
async function readExtras(
  run: CatalogueExecutor,
  extras: ReadonlySet<CatalogueExtra>,
): Promise<Pick<CatalogueSnapshot, 'clusters' | 'policies' | 'disks'>> {
  const out: Pick<CatalogueSnapshot, 'clusters' | 'policies' | 'disks'> = {};
  if (extras.has('clusters'))
    out.clusters = new Set((await run<{ cluster: string }>(Q_CLUSTERS, {})).map((r) => r.cluster));
  if (extras.has('storage')) {
    const policies = new Map<string, Array<{ volume: string; disks: string[] }>>();
    for (const r of await run<{ policy: string; volume: string; disks: string[] }>(Q_POLICIES, {})) {
      const list = policies.get(r.policy) ?? [];
      list.push({ volume: r.volume, disks: r.disks });
      policies.set(r.policy, list);
    }
    out.policies = policies;
    out.disks = new Set((await run<{ name: string }>(Q_DISKS, {})).map((r) => r.name));
  }
  return out;
}
