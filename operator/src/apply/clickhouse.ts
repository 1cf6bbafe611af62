/**
 * Thin, idempotent appliers for a pipeline's ClickHouse tables. Expected conditions (invalid spec,
 * old server, missing storage, refused destructive change, identity mismatch) come back as an
 * outcome with a reason; connection and server failures throw ClickHouseApplyError for a retry.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { ResolvedSpec } from '../api/defaults';
import {
  buildTableDDL,
  planTableChanges,
  type DesiredTable,
  type Refusal,
  type TableDDL,
} from '../desired/clickhouse';
import { checkIdentifier, catchSchemaError } from '../desired/clickhouse/identifiers';
import { runStatement } from './clickhouse-client';
import {
  checkCluster,
  databaseExists,
  checkServerVersion,
  checkStorage,
  observeTable,
  serverIdentity,
  serverVersion,
  tableExists,
} from './clickhouse-observe';

/** Result of ensureTable: readiness with a condition reason, plus what the status records. */
export interface TableOutcome {
  ready: boolean;
  /** `TableReady` or the CamelCase reason it is not. */
  reason: string;
  message: string;
  /** Server identity (see serverIdentity), for the deletion safety check; absent before contact. */
  identity?: string;
  version?: string;
  /** Statements this call executed, in order (empty when nothing changed). */
  applied: string[];
  /** Destructive differences refused (their tables were left untouched). */
  refusals: Refusal[];
}

/** Result of dropTable. */
export interface DropOutcome {
  dropped: boolean;
  reason: 'TablesDropped' | 'ServerIdentityMismatch' | 'InvalidSchema';
  message: string;
  identity?: string;
}

function outcome(reason: string, message: string, extra: Partial<TableOutcome> = {}): TableOutcome {
  return { ready: false, reason, message, applied: [], refusals: [], ...extra };
}

async function preflight(
  client: ClickHouseClient,
  spec: ResolvedSpec,
  ddl: TableDDL,
): Promise<{ reason: string; message: string } | undefined> {
  if (ddl.cluster !== undefined) {
    const missing = await checkCluster(client, ddl.cluster);
    if (missing) return missing;
  }
  const moves = spec.clickhouse.retention.moves;
  // Without moves the effective policy only matters when the spec names one.
  if (moves.length === 0 && spec.clickhouse.storagePolicy === undefined) return undefined;
  return checkStorage(client, spec.clickhouse.storagePolicy, moves);
}

async function reconcileOne(
  client: ClickHouseClient,
  table: DesiredTable,
  materializeOnChange: boolean,
  applied: string[],
): Promise<Refusal[]> {
  const observed = await observeTable(client, table.database, table.storageName);
  const plan = planTableChanges(table, observed, { materializeOnChange });
  if (plan.refusals.length > 0) return plan.refusals;
  for (const action of plan.actions) {
    await runStatement(client, action.sql, action.settings);
    applied.push(action.sql);
  }
  // Cluster mode: the Distributed front may be missing although the local table exists.
  if (observed && table.create.length > 1 && !(await tableExists(client, table.database, table.name))) {
    await runStatement(client, table.create[1]);
    applied.push(table.create[1]);
  }
  return [];
}

/**
 * Brings the database and every table of the pipeline to the spec: checks version, cluster and
 * storage, creates what is missing, applies additive changes and refuses destructive ones.
 */
export async function ensureTable(client: ClickHouseClient, spec: ResolvedSpec): Promise<TableOutcome> {
  const built = buildTableDDL(spec);
  if (!built.ok) return outcome(built.reason, built.message);
  const ddl = built.value;
  const version = await serverVersion(client);
  const identity = await serverIdentity(client, ddl.cluster);
  const tooOld = checkServerVersion(version);
  if (tooOld) return outcome(tooOld.reason, tooOld.message, { identity, version });
  const missing = await preflight(client, spec, ddl);
  if (missing) return outcome(missing.reason, missing.message, { identity, version });
  const applied: string[] = [];
  // Checked first so a steady-state reconcile sends no DDL (ON CLUSTER DDL goes through a queue).
  if (!(await databaseExists(client, ddl.database))) {
    await runStatement(client, ddl.createDatabase);
    applied.push(ddl.createDatabase);
  }
  const refusals: Refusal[] = [];
  for (const table of ddl.tables) {
    refusals.push(
      ...(await reconcileOne(client, table, spec.clickhouse.retention.materializeOnChange, applied)),
    );
  }
  if (refusals.length > 0) {
    return outcome(refusals[0].reason, refusals.map((r) => r.message).join('; '), {
      identity,
      version,
      applied,
      refusals,
    });
  }
  const names = ddl.tables.map((t) => t.name).join(', ');
  return {
    ready: true,
    reason: 'TableReady',
    message: `${ddl.database}: ${names} match the spec`,
    identity,
    version,
    applied,
    refusals,
  };
}

/** Every table name a pipeline may have created (whatever is enabled now), Distributed fronts first. */
export function pipelineTableNames(spec: ResolvedSpec): string[] {
  const base = [
    spec.clickhouse.table,
    spec.deadLetter.table,
    spec.integrity.table,
    spec.integrity.checkpointTable,
    spec.coverage.table,
  ];
  return spec.clickhouse.cluster ? [...base, ...base.map((t) => `${t}_local`)] : base;
}

/**
 * Drops the pipeline's tables (deletionPolicy Delete) after checking that the server is the one the
 * tables were created on; the database is left in place (it may hold other pipelines).
 */
export async function dropTable(
  client: ClickHouseClient,
  spec: ResolvedSpec,
  expectedIdentity: string,
): Promise<DropOutcome> {
  const names = catchSchemaError(() => {
    const database = checkIdentifier(spec.clickhouse.database, 'database');
    const cluster =
      spec.clickhouse.cluster === undefined ? undefined : checkIdentifier(spec.clickhouse.cluster, 'cluster');
    return { database, cluster, tables: pipelineTableNames(spec).map((t) => checkIdentifier(t, 'table')) };
  });
  if (!names.ok) return { dropped: false, reason: 'InvalidSchema', message: names.message };
  const { database, cluster, tables } = names.value;
  const identity = await serverIdentity(client, cluster);
  if (identity !== expectedIdentity) {
    return {
      dropped: false,
      reason: 'ServerIdentityMismatch',
      message: `server is ${identity}, tables were created on ${expectedIdentity}; nothing dropped`,
      identity,
    };
  }
  const onCluster = cluster ? ` ON CLUSTER '${cluster}'` : '';
  for (const table of tables) {
    await runStatement(client, `DROP TABLE IF EXISTS \`${database}\`.\`${table}\`${onCluster} SYNC`);
  }
  return {
    dropped: true,
    reason: 'TablesDropped',
    message: `dropped ${tables.map((t) => `${database}.${t}`).join(', ')} where present`,
    identity,
  };
}
