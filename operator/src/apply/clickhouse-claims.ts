/**
 * The ownership side of ensureTable (split out of clickhouse.ts): who claims a pipeline's tables,
 * the owner-record check before any statement, and the recheck of tables created concurrently.
 */
import type { TableDDL } from '../desired/clickhouse';
import { judgeClaim, ownerRecord, parseOwnerComment, type Owner } from '../desired/ownership';
import { tableComments, type ObserveSource } from './clickhouse-observe';
import type { DestructiveGuard } from './guard';

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

/** Runs one statement; `touched` names the only tables it changes (none: it may change anything). */
export type Run = (sql: string, settings?: Record<string, string>, touched?: string[]) => Promise<void>;

/** Every physical table of `ddl` (local tables and Distributed fronts), once each. */
export function physicalNames(ddl: TableDDL): string[] {
  return [...new Set(ddl.tables.flatMap((t) => [t.storageName, t.name]))];
}

/**
 * Reads the owner record of every existing table of the pipeline and judges the claim before any
 * statement runs: a conflict comes back as its message; adopted or legacy tables are stamped.
 */
export async function checkClaims(
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
export async function recheckCreated(
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
