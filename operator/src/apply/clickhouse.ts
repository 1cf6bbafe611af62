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
  type TableDDL,
} from '../desired/clickhouse';
import { ownerRecord, ownerString } from '../desired/ownership';
import { runStatement } from './clickhouse-client';
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
  const runInto = statementRunner(client, src, ddl, guard);
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
  return finalOutcome(ddl, refusals, {
    identity,
    version,
    applied,
    owner: claim && ownerString(claim.owner),
  });
}

/** The outcome once every table was reconciled: the refused differences, or ready. */
function finalOutcome(
  ddl: TableDDL,
  refusals: Refusal[],
  done: Pick<TableOutcome, 'identity' | 'version' | 'applied' | 'owner'>,
): TableOutcome {
  if (refusals.length > 0) {
    return outcome(refusals[0].reason, refusals.map((r) => r.message).join('; '), { ...done, refusals });
  }
  const names = ddl.tables.map((t) => t.name).join(', ');
  return {
    ready: true,
    reason: 'TableReady',
    message: `${ddl.database}: ${names} match the spec`,
    ...done,
    refusals,
  };
}
