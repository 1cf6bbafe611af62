/**
 * Thin, idempotent appliers for a pipeline's ClickHouse tables. Expected conditions (invalid spec,
 * old server, missing storage, refused destructive change, identity mismatch) come back as an
 * outcome with a reason; connection and server failures throw ClickHouseApplyError for a retry.
 * Ownership checks live in clickhouse-claims.ts, dropping in clickhouse-drop.ts.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { ResolvedSpec } from '../api/defaults';
import {
  buildTableDDL,
  planTableChanges,
  type DesiredTable,
  type Refusal,
  type TableRole,
  type TableDDL,
} from '../desired/clickhouse';
import { ownerRecord, ownerString } from '../desired/ownership';
import { ClickHouseApplyError, runStatement } from './clickhouse-client';
import { UNGUARDED, type DestructiveGuard } from './guard';
import type { ClickHouseCatalogue } from './clickhouse-catalogue';
import { checkClaims, physicalNames, recheckCreated, type Run, type TableClaim } from './clickhouse-claims';
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
  tableExists,
} from './clickhouse-observe';

export type { TableClaim } from './clickhouse-claims';
export { dropTable, pipelineTableNames, type DropOutcome } from './clickhouse-drop';

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
  /** Tables left to create until the workers ask for pods (EnsureTableOptions.deferWorkerTables). */
  deferred?: string[];
}

/** How ensureTable treats tables only the workers write. */
export interface EnsureTableOptions {
  /**
   * The workers ask for no pod (a Deployment at zero since it was created): a missing parser-stats
   * table is not created yet (issue 18: one CREATE TABLE fewer per new scaled-to-zero pipeline);
   * one that exists is kept as desired. The reconcile after the first scale-up creates it.
   */
  deferWorkerTables?: boolean;
}

/** Tables only the workers write, created once they ask for pods (EnsureTableOptions). */
const WORKER_TABLES: ReadonlySet<TableRole> = new Set<TableRole>(['parserStats']);

function outcome(reason: string, message: string, extra: Partial<TableOutcome> = {}): TableOutcome {
  return { ready: false, reason, message, applied: [], refusals: [], ...extra };
}

/** How reconcileTables plans and sends: the spec's retention options, and exclusive creation. */
interface ReconcileOptions {
  materializeOnChange: boolean;
  allowShortening: boolean;
  /** Send CREATE TABLE without IF NOT EXISTS (single server only; see exclusiveCreate). */
  exclusive: boolean;
  /** Roles whose missing table is not created now; their names are pushed to `deferred`. */
  defer?: ReadonlySet<TableRole>;
  deferred?: string[];
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

/** `TABLE_ALREADY_EXISTS`: an exclusive CREATE TABLE found the name taken. */
const TABLE_ALREADY_EXISTS = '57';

/**
 * The CREATE TABLE of `sql` without IF NOT EXISTS: it fails (code 57) instead of staying silent
 * when the table exists, so its success proves that this very statement created the table, owner
 * COMMENT included (issue 18: no probe of the server's table list before or after creating).
 */
export function exclusiveCreate(sql: string): string {
  return sql.replace(/^CREATE TABLE IF NOT EXISTS /, 'CREATE TABLE ');
}

async function reconcileOne(
  client: ObserveSource,
  table: DesiredTable,
  opts: ReconcileOptions,
  run: Run,
): Promise<Refusal[]> {
  const observed = await observeTable(client, table.database, table.storageName);
  if (!observed && opts.defer?.has(table.role)) {
    opts.deferred?.push(table.name);
    return [];
  }
  const plan = planTableChanges(table, observed, opts);
  if (plan.refusals.length > 0) return plan.refusals;
  const touched = [...new Set([table.storageName, table.name])];
  for (const action of plan.actions) {
    const sql = opts.exclusive && action.kind === 'create' ? exclusiveCreate(action.sql) : action.sql;
    await run(sql, action.settings, touched);
  }
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
  opts: ReconcileOptions,
  runInto: (into: string[]) => Run,
  applied: string[],
): Promise<Refusal[]> {
  const perTable = await Promise.allSettled(
    ddl.tables.map(async (table) => {
      const mine: string[] = [];
      return { refusals: await reconcileOne(src, table, opts, runInto(mine)), mine };
    }),
  );
  const refusals: Refusal[] = [];
  // What did run is recorded even when another table failed (the careful pass reports it too).
  for (const t of perTable) if (t.status === 'fulfilled') applied.push(...t.value.mine);
  for (const t of perTable) {
    if (t.status === 'rejected') throw t.reason;
    refusals.push(...t.value.refusals);
  }
  return refusals;
}

/**
 * The statement runner of one ensureTable: confirms leadership before ON CLUSTER DDL, marks the
 * catalogue around each statement, and records what ran into `into`.
 */
function statementRunner(
  client: ClickHouseClient,
  src: ObserveSource,
  ddl: TableDDL,
  guard: DestructiveGuard,
) {
  return (into: string[]): Run =>
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
  options: EnsureTableOptions = {},
): Promise<TableOutcome> {
  const built = buildTableDDL(spec, claim && ownerRecord(claim.owner));
  if (!built.ok) return outcome(built.reason, built.message);
  const ddl = built.value;
  const src: ObserveSource = catalogue ? { client, catalogue } : client;
  const applied: string[] = [];
  const defer = options.deferWorkerTables ? WORKER_TABLES : undefined;
  const ensure = (exclusive: boolean) =>
    ensureBuilt(client, src, spec, ddl, { claim, exclusive, applied, defer });
  // ON CLUSTER DDL has no exclusive CREATE (a node may already hold the table): probe and recheck.
  if (ddl.cluster !== undefined) return ensure(false);
  try {
    return await ensure(true);
  } catch (err) {
    if (!(err instanceof ClickHouseApplyError) || err.code !== TABLE_ALREADY_EXISTS) throw err;
    // A table the catalogue did not show exists: judge its owner record on the careful path.
    return ensure(false);
  }
}

/** How one pass of ensureBuilt works and where it records its statements. */
interface EnsurePass {
  claim?: TableClaim;
  /**
   * Create with exclusiveCreate, trusting the catalogue's view of missing tables: a table created
   * behind its back fails the CREATE (code 57, thrown) instead of being probed for before and
   * after. Otherwise the careful path: probe missing tables first, recheck created ones after.
   */
  exclusive: boolean;
  /** Statements executed, shared by both passes (a first pass may have created some tables). */
  applied: string[];
  /** Roles whose missing table waits for the workers (EnsureTableOptions.deferWorkerTables). */
  defer?: ReadonlySet<TableRole>;
}

async function ensureBuilt(
  client: ClickHouseClient,
  src: ObserveSource,
  spec: ResolvedSpec,
  ddl: TableDDL,
  { claim, exclusive, applied, defer }: EnsurePass,
): Promise<TableOutcome> {
  // Careful path: look at the server as it is now, not as the last round saw it (one probe of the
  // missing tables, shared with every reconcile asking at the same moment).
  if (!exclusive && 'catalogue' in src)
    await src.catalogue.lookup(ddl.database, physicalNames(ddl), { freshMissing: true });
  const version = await serverVersion(src, ddl.database);
  const identity = await serverIdentity(src, ddl.cluster, ddl.database);
  const tooOld = checkServerVersion(version);
  if (tooOld) return outcome(tooOld.reason, tooOld.message, { identity, version });
  const missing = await preflight(src, spec, ddl);
  if (missing) return outcome(missing.reason, missing.message, { identity, version });
  const runInto = statementRunner(client, src, ddl, claim?.guard ?? UNGUARDED);
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
  const deferred: string[] = [];
  const opts = { ...spec.clickhouse.retention, exclusive, defer, deferred };
  const refusals = await reconcileTables(src, ddl, opts, runInto, applied);
  // An exclusive CREATE that succeeded created the table itself: nothing to recheck.
  const lost = claim && !exclusive && (await recheckCreated(src, ddl, claim, existing));
  if (lost) return outcome('Conflict', lost, { identity, version, applied });
  return finalOutcome(ddl, refusals, {
    identity,
    version,
    applied,
    owner: claim && ownerString(claim.owner),
    ...(deferred.length > 0 ? { deferred } : {}),
  });
}

/** The outcome once every table was reconciled: the refused differences, or ready. */
function finalOutcome(
  ddl: TableDDL,
  refusals: Refusal[],
  done: Pick<TableOutcome, 'identity' | 'version' | 'applied' | 'owner' | 'deferred'>,
): TableOutcome {
  if (refusals.length > 0) {
    return outcome(refusals[0].reason, refusals.map((r) => r.message).join('; '), { ...done, refusals });
  }
  const later = new Set(done.deferred);
  const names = ddl.tables
    .filter((t) => !later.has(t.name))
    .map((t) => t.name)
    .join(', ');
  const waiting = later.size > 0 ? ` (${[...later].join(', ')}: created with the first worker)` : '';
  return {
    ready: true,
    reason: 'TableReady',
    message: `${ddl.database}: ${names} match the spec${waiting}`,
    ...done,
    refusals,
  };
}
