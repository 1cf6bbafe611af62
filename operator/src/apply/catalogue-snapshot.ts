/**
 * What a ClickHouse catalogue round reads and how two rounds compare (split out of
 * clickhouse-catalogue.ts): the snapshot types, their keys and the changed-tables diff.
 */
import type { ObservedTable } from '../desired/clickhouse';

/** Runs one read-only query with parameters and returns its rows (a fake in unit tests). */
export type CatalogueExecutor = <T>(query: string, params: Record<string, unknown>) => Promise<T[]>;

/** Server-wide facts a round reads once some pipeline needs them (ON CLUSTER, storage policies). */
export type CatalogueExtra = 'clusters' | 'storage';

/** One table as the catalogue saw it. */
export interface CatalogueTable extends ObservedTable {
  comment: string;
}

/** What one round read. */
export interface CatalogueSnapshot {
  version: string;
  host: string;
  uuid: string;
  databases: ReadonlySet<string>;
  /** Keyed by `database.table`. */
  tables: ReadonlyMap<string, CatalogueTable>;
  /** The databases this round asked about (present or not). */
  readDatabases: ReadonlySet<string>;
  /** Cluster names of system.clusters (rounds after someone asked for 'clusters'). */
  clusters?: ReadonlySet<string>;
  /** Volumes of each storage policy, and the server's disks (rounds after someone asked for 'storage'). */
  policies?: ReadonlyMap<string, Array<{ volume: string; disks: string[] }>>;
  disks?: ReadonlySet<string>;
  /** When the round started (ms). */
  at: number;
}

/** Tuning of a catalogue. */
export interface CatalogueOptions {
  /** Reuse a snapshot this long. Default 30 s. */
  maxAgeMs?: number;
  /** Wait this long before a round starts, so concurrent callers share it. Default 5 ms. */
  gatherMs?: number;
  now?: () => number;
  /**
   * Called after a round with the `database.table` keys that appeared, vanished or changed since
   * the previous round (databases both rounds read only): memoized Table outcomes of those tables
   * are stale (controller/part-memo.ts). Tables our own statements touched since the last round are
   * left out: the ensure that ran them judged the result.
   */
  onChange?: (tables: string[]) => void;
}

/** A system.tables row as read, before its columns and indexes are attached. */
export type TableRow = Omit<CatalogueTable, 'columns' | 'skipIndexes'> & { database: string; name: string };

/** `database.table`, the key of a snapshot's tables. */
export function tableKey(database: string, table: string): string {
  return `${database}.${table}`;
}

/** Tables (`database.table`) that differ between two rounds, in databases both rounds read. */
export function changedTables(before: CatalogueSnapshot, after: CatalogueSnapshot): string[] {
  const dbs = new Set([...before.readDatabases].filter((d) => after.readDatabases.has(d)));
  const inScope = (key: string) => dbs.has(key.slice(0, key.indexOf('.')));
  const out: string[] = [];
  for (const [key, t] of after.tables) {
    const prev = before.tables.get(key);
    if (inScope(key) && (!prev || !sameTable(prev, t))) out.push(key);
  }
  for (const key of before.tables.keys()) if (inScope(key) && !after.tables.has(key)) out.push(key);
  return out;
}

function sameTable(a: CatalogueTable, b: CatalogueTable): boolean {
  const scalar = ['engine', 'engineFull', 'sortingKey', 'partitionKey', 'storagePolicy', 'comment'] as const;
  if (scalar.some((k) => a[k] !== b[k])) return false;
  if (a.columns.length !== b.columns.length || a.skipIndexes.length !== b.skipIndexes.length) return false;
  if (a.columns.some((c, i) => c.name !== b.columns[i].name || c.type !== b.columns[i].type)) return false;
  return a.skipIndexes.every((x, i) => x === b.skipIndexes[i]);
}
