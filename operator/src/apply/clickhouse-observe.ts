/**
 * Read-only checks against a ClickHouse server before and during table reconciliation: version,
 * identity, storage (disks, volumes, policies), clusters, and what a table looks like now. Version,
 * identity (single server), databases and tables are read from the server's shared catalogue when
 * the caller passes one (clickhouse-catalogue.ts), else queried directly.
 */
import { createHash } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import type { RetentionMove } from '../api/types';
import type { ObservedTable } from '../desired/clickhouse';
import { queryRows } from './clickhouse-client';
import type { ClickHouseCatalogue, CatalogueSnapshot } from './clickhouse-catalogue';

/** Observations through the server's shared catalogue; `client` serves what it does not hold. */
export interface CatalogueSource {
  client: ClickHouseClient;
  catalogue: ClickHouseCatalogue;
}

/** Where observations come from: the server directly, or its catalogue. */
export type ObserveSource = ClickHouseClient | CatalogueSource;

function viaCatalogue(src: ObserveSource): src is CatalogueSource {
  return 'catalogue' in src && 'client' in src;
}

/** The raw client of a source (for checks the catalogue does not hold, and for statements). */
export function clientOf(src: ObserveSource): ClickHouseClient {
  return viaCatalogue(src) ? src.client : src;
}

function snapshotOf(src: CatalogueSource, database: string): Promise<CatalogueSnapshot> {
  return src.catalogue.snapshot([database]);
}

/** Our statement changed the server: the catalogue (if any) is read again before the next look. */
export function markChanged(src: ObserveSource): void {
  if (viaCatalogue(src)) src.catalogue.markDirty();
}

/** Our statement on these tables is about to run: a round reading meanwhile does not report them. */
export function markTablesTouching(src: ObserveSource, database: string, tables: readonly string[]): void {
  if (viaCatalogue(src)) src.catalogue.markTouching(database, tables);
}

/** Our statement changed only these tables: they alone are read again (probed) before the next look. */
export function markTablesChanged(src: ObserveSource, database: string, tables: readonly string[]): void {
  if (viaCatalogue(src)) src.catalogue.markStale(database, tables);
}

/** `server:<uuid>`, or `host:<hostName>` where the engine reports the zero UUID (embedded engines). */
function singleServerIdentity(host: string, uuid: string): string {
  return /^0{8}-0{4}-0{4}-0{4}-0{12}$/.test(uuid) || uuid === '' ? `host:${host}` : `server:${uuid}`;
}

/**
 * Oldest supported server: 22.3 LTS. Below it `insert_deduplication_token` (22.2), which the worker's
 * exactly-once inserts depend on, does not exist; everything else we emit (storage policies and TTL
 * moves, Date32, Bool, Map, non_replicated_deduplication_window) is older.
 */
export const MIN_SERVER_VERSION: readonly [number, number] = [22, 3];

/** A refusal found by a check: condition reason and message. */
export interface CheckFailure {
  reason: string;
  message: string;
}

/** Returns a failure when `version` (e.g. "24.8.4.13") is older than MIN_SERVER_VERSION. */
export function checkServerVersion(version: string): CheckFailure | undefined {
  const [major, minor] = version.split('.').map((p) => Number(p));
  const [wantMajor, wantMinor] = MIN_SERVER_VERSION;
  if (
    !Number.isFinite(major) ||
    !Number.isFinite(minor) ||
    major < wantMajor ||
    (major === wantMajor && minor < wantMinor)
  ) {
    return {
      reason: 'UnsupportedServerVersion',
      message: `ClickHouse ${version} is older than ${wantMajor}.${wantMinor}, which exactly-once inserts (insert_deduplication_token) need`,
    };
  }
  return undefined;
}

/** The server's version string; `database` picks the catalogue round that answers. */
export async function serverVersion(src: ObserveSource, database = ''): Promise<string> {
  if (viaCatalogue(src)) return (await snapshotOf(src, database)).version;
  const client = src;
  const rows = await queryRows<{ v: string }>(client, 'SELECT version() AS v');
  return rows[0]?.v ?? 'unknown';
}

/**
 * A stable name for "the ClickHouse we talk to", recorded at creation and checked before a drop.
 * Single server: its serverUUID (`server:<uuid>`), or `host:<hostName>` where the engine reports the
 * zero UUID (embedded engines do). Cluster: `cluster:<name>:<hash of its host:port list>`, because a
 * load balancer may land each request on another node.
 */
export async function serverIdentity(src: ObserveSource, cluster?: string, database = ''): Promise<string> {
  if (cluster === undefined && viaCatalogue(src)) {
    const snap = await snapshotOf(src, database);
    return singleServerIdentity(snap.host, snap.uuid);
  }
  const client = clientOf(src);
  if (cluster !== undefined) {
    const rows = await queryRows<{ h: string }>(
      client,
      "SELECT concat(host_name, ':', toString(port)) AS h FROM system.clusters WHERE cluster = {c:String}",
      { c: cluster },
    );
    const hosts = rows.map((r) => r.h).sort();
    return `cluster:${cluster}:${createHash('sha256').update(hosts.join(',')).digest('hex').slice(0, 16)}`;
  }
  const rows = await queryRows<{ host: string; uuid: string }>(
    client,
    'SELECT hostName() AS host, toString(serverUUID()) AS uuid',
  );
  const { host = 'unknown', uuid = '' } = rows[0] ?? {};
  return singleServerIdentity(host, uuid);
}

/** Checks that the cluster is defined on the server we talk to (from the catalogue when given). */
export async function checkCluster(src: ObserveSource, cluster: string): Promise<CheckFailure | undefined> {
  let defined: boolean;
  if (viaCatalogue(src))
    defined = (await src.catalogue.snapshot([], ['clusters'])).clusters?.has(cluster) ?? false;
  else {
    const rows = await queryRows<{ n: string }>(
      src,
      'SELECT count() AS n FROM system.clusters WHERE cluster = {c:String}',
      { c: cluster },
    );
    defined = Number(rows[0]?.n ?? 0) > 0;
  }
  if (defined) return undefined;
  return { reason: 'ClusterNotFound', message: `cluster '${cluster}' is not defined in system.clusters` };
}

/** The volumes of a storage policy and whether a disk exists, as a check needs them. */
interface StorageFacts {
  volumes: Array<{ volume: string; disks: string[] }>;
  diskExists(disk: string): Promise<boolean>;
}

async function storageFacts(src: ObserveSource, policy: string): Promise<StorageFacts> {
  if (viaCatalogue(src)) {
    const snap = await src.catalogue.snapshot([], ['storage']);
    return {
      volumes: snap.policies?.get(policy) ?? [],
      diskExists: async (disk) => snap.disks?.has(disk) ?? false,
    };
  }
  const rows = await queryRows<{ volume_name: string; disks: string[] }>(
    src,
    'SELECT volume_name, disks FROM system.storage_policies WHERE policy_name = {p:String}',
    { p: policy },
  );
  return {
    volumes: rows.map((r) => ({ volume: r.volume_name, disks: r.disks })),
    diskExists: async (disk) =>
      (
        await queryRows<{ name: string }>(src, 'SELECT name FROM system.disks WHERE name = {d:String}', {
          d: disk,
        })
      ).length > 0,
  };
}

/**
 * Checks the storage the TTL needs: the policy exists, and every move target is a disk/volume of
 * that policy (the effective policy is `default` when the spec names none). With a catalogue the
 * server's policies and disks come from its shared round (read once some pipeline needs them).
 */
export async function checkStorage(
  src: ObserveSource,
  storagePolicy: string | undefined,
  moves: RetentionMove[],
): Promise<CheckFailure | undefined> {
  const policy = storagePolicy ?? 'default';
  const { volumes, diskExists } = await storageFacts(src, policy);
  if (volumes.length === 0)
    return {
      reason: 'StoragePolicyNotFound',
      message: `storage policy '${policy}' does not exist on the server`,
    };
  const policyDisks = new Set(volumes.flatMap((v) => v.disks));
  for (const move of moves) {
    if (move.toVolume !== undefined && !volumes.some((v) => v.volume === move.toVolume)) {
      return {
        reason: 'VolumeNotFound',
        message: `storage policy '${policy}' has no volume '${move.toVolume}' (volumes: ${volumes.map((v) => v.volume).join(', ')})`,
      };
    }
    if (move.toDisk !== undefined && !policyDisks.has(move.toDisk)) {
      const why = (await diskExists(move.toDisk))
        ? `is not part of storage policy '${policy}'`
        : 'does not exist on the server';
      return { reason: 'ColdDiskNotFound', message: `disk '${move.toDisk}' ${why}` };
    }
  }
  return undefined;
}

/** True when the database exists. */
export async function databaseExists(src: ObserveSource, database: string): Promise<boolean> {
  if (viaCatalogue(src)) return (await snapshotOf(src, database)).databases.has(database);
  const client = src;
  const rows = await queryRows<{ n: string }>(
    client,
    'SELECT count() AS n FROM system.databases WHERE name = {db:String}',
    { db: database },
  );
  return Number(rows[0]?.n ?? 0) > 0;
}

/** True when a table (of any engine) exists. */
export async function tableExists(src: ObserveSource, database: string, table: string): Promise<boolean> {
  if (viaCatalogue(src))
    return (await src.catalogue.lookup(database, [table], { commentsOnly: true })).has(table);
  const client = src;
  const rows = await queryRows<{ n: string }>(
    client,
    'SELECT count() AS n FROM system.tables WHERE database = {db:String} AND name = {t:String}',
    { db: database, t: table },
  );
  return Number(rows[0]?.n ?? 0) > 0;
}

/** What ClickHouse reports about a table, or undefined when it does not exist. */
export async function observeTable(
  src: ObserveSource,
  database: string,
  table: string,
): Promise<ObservedTable | undefined> {
  if (viaCatalogue(src)) {
    const seen = (await src.catalogue.lookup(database, [table])).get(table);
    if (!seen) return undefined;
    const { comment: _comment, columns, skipIndexes, ...rest } = seen;
    return { ...rest, columns: columns.map((c) => ({ ...c })), skipIndexes: [...skipIndexes] };
  }
  const client = src;
  const params = { db: database, t: table };
  const tables = await queryRows<Omit<ObservedTable, 'columns' | 'skipIndexes'>>(
    client,
    'SELECT engine, engine_full AS engineFull, sorting_key AS sortingKey, partition_key AS partitionKey, storage_policy AS storagePolicy ' +
      'FROM system.tables WHERE database = {db:String} AND name = {t:String}',
    params,
  );
  if (tables.length === 0) return undefined;
  const columns = await queryRows<{ name: string; type: string }>(
    client,
    'SELECT name, type FROM system.columns WHERE database = {db:String} AND table = {t:String} ORDER BY position',
    params,
  );
  const indexes = await queryRows<{ name: string }>(
    client,
    'SELECT name FROM system.data_skipping_indices WHERE database = {db:String} AND table = {t:String}',
    params,
  );
  return { ...tables[0], columns, skipIndexes: indexes.map((i) => i.name) };
}

/** The COMMENT of each existing table among `tables` (missing tables are absent from the map). */
export async function tableComments(
  src: ObserveSource,
  database: string,
  tables: string[],
): Promise<Map<string, string>> {
  if (viaCatalogue(src)) {
    const seen = await src.catalogue.lookup(database, tables, { commentsOnly: true });
    return new Map([...seen].map(([t, row]) => [t, row.comment]));
  }
  const client = src;
  const rows = await queryRows<{ name: string; comment: string }>(
    client,
    'SELECT name, comment FROM system.tables WHERE database = {db:String} AND has({names:Array(String)}, name)',
    { db: database, names: tables },
  );
  return new Map(rows.map((r) => [r.name, r.comment]));
}
