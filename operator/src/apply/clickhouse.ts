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
import { checkIdentifier, catchSchemaError } from '../../../common/src/sql/identifiers';
import { judgeClaim, ownerRecord, ownerString, parseOwnerComment, type Owner } from '../desired/ownership';
import { runStatement } from './clickhouse-client';
import { UNGUARDED, type DestructiveGuard } from './guard';
import type { ClickHouseCatalogue } from './clickhouse-catalogue';
import {
  checkCluster,
  databaseExists,
  markChanged,
  markTablesChanged,
  markTablesTouching,
  type ObserveSource,
  checkServerVersion,
  checkStorage,
  observeTable,
  serverIdentity,
  serverVersion,
  tableComments,
  tableExists,
} from './clickhouse-observe';

/** Who claims a pipeline's tables and how a table without its record may be taken over. */
export interface TableClaim {
  owner: Owner;
  /** The pipeline asked to adopt unowned tables (annotation logpipeline.io/adopt). */
  adopt: boolean;
  /**
   * The server identity this pipeline's status recorded for these tables before owner records
   * existed (an upgrade from an operator version that wrote none), when no older pipeline claims
   * them; such tables are stamped on that same server only.
   */
  legacyIdentity?: string;
  /** Checked before ON CLUSTER DDL and DROP; cancels them when the lease is lost. */
  guard?: DestructiveGuard;
  /**
   * The older pipeline (`namespace/name`) that names the same table on the server `identity`, if
   * any: it wins before anything is created, since two pipelines creating one table's companions
   * at once could each win a different one.
   */
  olderClaimant?: (identity: string) => string | undefined;
}

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
  /** `namespace/name/uid` recorded on every table, once the claim passed. */
  owner?: string;
}

/** Result of dropTable. */
export interface DropOutcome {
  dropped: boolean;
  reason: 'TablesDropped' | 'TablesNotOwned' | 'ServerIdentityMismatch' | 'InvalidSchema';
  message: string;
  identity?: string;
  /** Tables left in place because their owner record names another pipeline (or none). */
  kept?: string[];
  /** Tables dropped by this call (none when a retried deletion finds them gone). */
  droppedNow?: string[];
}

function outcome(reason: string, message: string, extra: Partial<TableOutcome> = {}): TableOutcome {
  return { ready: false, reason, message, applied: [], refusals: [], ...extra };
}

async function preflight(
  client: ObserveSource,
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

/** Runs one statement; `touched` names the only tables it changes (none: it may change anything). */
type Run = (sql: string, settings?: Record<string, string>, touched?: string[]) => Promise<void>;

async function reconcileOne(
  client: ObserveSource,
  table: DesiredTable,
  retention: { materializeOnChange: boolean; allowShortening: boolean },
  run: Run,
): Promise<Refusal[]> {
  const observed = await observeTable(client, table.database, table.storageName);
  const plan = planTableChanges(table, observed, retention);
  if (plan.refusals.length > 0) return plan.refusals;
  const touched = [...new Set([table.storageName, table.name])];
  for (const action of plan.actions) await run(action.sql, action.settings, touched);
  // Cluster mode: the Distributed front may be missing although the local table exists.
  if (observed && table.create.length > 1 && !(await tableExists(client, table.database, table.name))) {
    await run(table.create[1], undefined, [table.name]);
  }
  return [];
}

/**
 * Brings every table of `ddl` to the spec. The tables are independent (a Distributed front is
 * created with its local table inside reconcileOne): a new pipeline's CREATE TABLEs overlap on the
 * server instead of queueing (issue 18, the longest creation phase). Statements (into `applied`)
 * and refusals keep the tables' order; a failure is thrown once every table's statements have
 * finished (none left running unseen).
 */
async function reconcileTables(
  src: ObserveSource,
  ddl: TableDDL,
  retention: { materializeOnChange: boolean; allowShortening: boolean },
  runInto: (into: string[]) => Run,
  applied: string[],
): Promise<Refusal[]> {
  const perTable = await Promise.allSettled(
    ddl.tables.map(async (table) => {
      const mine: string[] = [];
      return { refusals: await reconcileOne(src, table, retention, runInto(mine)), mine };
    }),
  );
  const refusals: Refusal[] = [];
  for (const t of perTable) {
    if (t.status === 'rejected') throw t.reason;
    refusals.push(...t.value.refusals);
    applied.push(...t.value.mine);
  }
  return refusals;
}

function physicalNames(ddl: TableDDL): string[] {
  return [...new Set(ddl.tables.flatMap((t) => [t.storageName, t.name]))];
}

/**
 * Reads the owner record of every existing table of the pipeline and judges the claim before any
 * statement runs: a conflict comes back as its message; adopted or legacy tables are stamped.
 */
async function checkClaims(
  client: ObserveSource,
  ddl: TableDDL,
  claim: TableClaim,
  identity: string,
  run: Run,
): Promise<{ message: string; existing: Set<string> } | { existing: Set<string> }> {
  const comments = await tableComments(client, ddl.database, physicalNames(ddl));
  const legacy = claim.legacyIdentity !== undefined && claim.legacyIdentity === identity;
  const stamps: string[] = [];
  const conflicts: string[] = [];
  for (const [name, comment] of comments) {
    const verdict = judgeClaim(comment, claim.owner, `table ${ddl.database}.${name}`, {
      adopt: claim.adopt,
      legacy,
    });
    if (verdict.kind === 'conflict') conflicts.push(verdict.message);
    else if (verdict.kind === 'stamp') stamps.push(name);
  }
  const existing = new Set(comments.keys());
  if (conflicts.length > 0) return { message: conflicts.join('; '), existing };
  for (const name of stamps) {
    await run(
      `ALTER TABLE ${quoted(ddl.database, name)}${ddl.onCluster} MODIFY COMMENT '${ownerRecord(claim.owner)}'`,
      undefined,
      [name],
    );
  }
  return { existing };
}

function quoted(database: string, table: string): string {
  return `\`${database}\`.\`${table}\``;
}

/** After creating: a table someone else created in between carries their record, not ours. */
async function recheckCreated(
  client: ObserveSource,
  ddl: TableDDL,
  claim: TableClaim,
  existedBefore: Set<string>,
): Promise<string | undefined> {
  const created = physicalNames(ddl).filter((n) => !existedBefore.has(n));
  if (created.length === 0) return undefined;
  const comments = await tableComments(client, ddl.database, created);
  for (const [name, comment] of comments) {
    const owner = parseOwnerComment(comment);
    if (owner?.uid !== claim.owner.uid) {
      const who = owner ? `LogPipeline ${owner.namespace}/${owner.name} (uid ${owner.uid})` : 'no pipeline';
      return `table ${ddl.database}.${name} was created concurrently and is owned by ${who}`;
    }
  }
  return undefined;
}

/**
 * Brings the database and every table of the pipeline to the spec: checks version, cluster and
 * storage, checks the owner record of every existing table (with `claim`; a Conflict sends no
 * statement at all), creates what is missing with the owner record as COMMENT, applies additive
 * changes and refuses destructive ones. With `catalogue`, the server's shared catalogue answers the
 * reads (a steady pipeline sends no query of its own) and every statement marks it dirty.
 */
export async function ensureTable(
  client: ClickHouseClient,
  spec: ResolvedSpec,
  claim?: TableClaim,
  catalogue?: ClickHouseCatalogue,
): Promise<TableOutcome> {
  const built = buildTableDDL(spec, claim && ownerRecord(claim.owner));
  if (!built.ok) return outcome(built.reason, built.message);
  const ddl = built.value;
  const src: ObserveSource = catalogue ? { client, catalogue } : client;
  // Something to create: look at the server as it is now, not as the last round saw it (one probe
  // of the missing tables, shared with every reconcile asking at the same moment).
  await catalogue?.lookup(ddl.database, physicalNames(ddl), { freshMissing: true });
  const version = await serverVersion(src, ddl.database);
  const identity = await serverIdentity(src, ddl.cluster, ddl.database);
  const tooOld = checkServerVersion(version);
  if (tooOld) return outcome(tooOld.reason, tooOld.message, { identity, version });
  const missing = await preflight(src, spec, ddl);
  if (missing) return outcome(missing.reason, missing.message, { identity, version });
  const applied: string[] = [];
  const guard = claim?.guard ?? UNGUARDED;
  const runInto =
    (into: string[]): Run =>
    async (sql, settings, touched) => {
      // ON CLUSTER DDL fans out to every node through the DDL queue: only a current leader sends it.
      if (ddl.cluster !== undefined) await guard.confirm(sql.split('\n')[0]);
      try {
        if (touched) markTablesTouching(src, ddl.database, touched);
        await runStatement(client, sql, settings, guard.signal);
      } finally {
        // Even a failed statement may have changed something: look again before judging.
        if (touched) markTablesChanged(src, ddl.database, touched);
        else markChanged(src);
      }
      into.push(sql);
    };
  const run = runInto(applied);
  let existing = new Set<string>();
  const older = claim?.olderClaimant?.(identity);
  if (older) {
    const message = `table ${ddl.database}.${ddl.tables[0].name} is claimed by the older LogPipeline ${older}`;
    return outcome('Conflict', message, { identity, version, applied });
  }
  if (claim) {
    const checked = await checkClaims(src, ddl, claim, identity, run);
    existing = checked.existing;
    if ('message' in checked) return outcome('Conflict', checked.message, { identity, version, applied });
  }
  // Checked first so a steady-state reconcile sends no DDL (ON CLUSTER DDL goes through a queue).
  if (!(await databaseExists(src, ddl.database))) await run(ddl.createDatabase);
  const refusals = await reconcileTables(src, ddl, spec.clickhouse.retention, runInto, applied);
  const lost = claim && (await recheckCreated(src, ddl, claim, existing));
  if (lost) return outcome('Conflict', lost, { identity, version, applied });
  const owner = claim && ownerString(claim.owner);
  if (refusals.length > 0) {
    return outcome(refusals[0].reason, refusals.map((r) => r.message).join('; '), {
      identity,
      version,
      applied,
      refusals,
      owner,
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
    owner,
  };
}

/** Every table name a pipeline may have created (whatever is enabled now), Distributed fronts first. */
export function pipelineTableNames(spec: ResolvedSpec): string[] {
  const base = [
    spec.clickhouse.table,
    spec.deadLetter.table,
    spec.integrity.table,
    spec.integrity.checkpointTable,
    spec.integrity.sealTable,
    spec.coverage.table,
  ];
  return spec.clickhouse.cluster ? [...base, ...base.map((t) => `${t}_local`)] : base;
}

/**
 * Drops the pipeline's tables (deletionPolicy Delete) after checking that the server is the one the
 * tables were created on and, table by table, that its owner record names `owner` (a table owned
 * by another pipeline, or by none, is left in place); the leadership guard is confirmed right
 * before each DROP and cancels it in flight. The database is left in place (it may hold other
 * pipelines).
 */
export async function dropTable(
  client: ClickHouseClient,
  spec: ResolvedSpec,
  expectedIdentity: string,
  claim: { owner: Owner; guard?: DestructiveGuard },
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
  const guard = claim.guard ?? UNGUARDED;
  const onCluster = cluster ? ` ON CLUSTER '${cluster}'` : '';
  const comments = await tableComments(client, database, tables);
  const dropped: string[] = [];
  const kept: string[] = [];
  for (const table of tables) {
    if (!comments.has(table)) continue;
    const owner = parseOwnerComment(comments.get(table));
    if (owner?.uid !== claim.owner.uid) {
      kept.push(
        `${database}.${table} (${owner ? `owned by ${owner.namespace}/${owner.name}` : 'no owner record'})`,
      );
      continue;
    }
    const sql = `DROP TABLE IF EXISTS \`${database}\`.\`${table}\`${onCluster} SYNC`;
    await guard.confirm(`DROP TABLE ${database}.${table}`);
    await runStatement(client, sql, undefined, guard.signal);
    dropped.push(`${database}.${table}`);
  }
  const keptNote = kept.length > 0 ? `; left in place: ${kept.join(', ')}` : '';
  return {
    dropped: dropped.length > 0 || kept.length === 0,
    reason: kept.length > 0 ? 'TablesNotOwned' : 'TablesDropped',
    message: `dropped ${dropped.length > 0 ? dropped.join(', ') : 'nothing'}${keptNote}`,
    identity,
    kept,
    droppedNow: dropped,
  };
}
