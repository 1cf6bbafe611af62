/**
 * Least-privilege ClickHouse users for a pipeline (docs/compliance.md, "Access"): an insert-only
 * writer for the workers — INSERT on the data, dead-letter, integrity and checkpoint tables, plus
 * SELECT on the integrity table (chain recovery) and the checkpoint table (the checkpoint chain) — and a read-only auditor with SELECT on the
 * database (what `verify` and `query` need). Created with the admin credentials when the spec
 * gives them. Passwords never appear in SQL: users are identified by the SHA-256 of the password
 * (`sha256_hash`), so neither the query log nor an error message can leak them. Privileges are
 * granted to per-pipeline roles, never replaced on a (possibly shared) user.
 */
import { createHash } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import type { ResolvedSpec } from '../api/defaults';
import { runStatement } from '../apply/clickhouse-client';
import { checkIdentifier, qualifiedName, quoteIdentifier } from '../../../common/src/sql/identifiers';

/** A user to create: name (an identifier) and the password its Secret holds. */
export interface AccessUser {
  username: string;
  password: string;
}

/** The two users of a pipeline. */
export interface AccessUsers {
  writer: AccessUser;
  auditor: AccessUser;
}

function identified(user: AccessUser): string {
  if (user.password.length < 16)
    throw new RangeError(`password of ${user.username} must be at least 16 characters`);
  return `IDENTIFIED WITH sha256_hash BY '${createHash('sha256').update(user.password, 'utf8').digest('hex')}'`;
}

/** Tables the writer inserts into (storage tables too in cluster mode: Distributed forwards inserts). */
function writerTables(spec: ResolvedSpec): { insert: string[]; insertSelect: string[] } {
  const names = (t: string) => (spec.clickhouse.cluster ? [t, `${t}_local`] : [t]);
  const insert = [...names(spec.clickhouse.table)];
  if (spec.deadLetter.enabled) insert.push(...names(spec.deadLetter.table));
  // Parser coverage stats (one row per worker and minute) feed the ParserCoverage condition.
  insert.push(...names(spec.coverage.table));
  const insertSelect: string[] = [];
  if (spec.integrity.enabled) {
    insertSelect.push(...names(spec.integrity.table));
    // SELECT: a worker's first checkpoint names the newest stored one as its predecessor (prev).
    insertSelect.push(...names(spec.integrity.checkpointTable));
  }
  return { insert, insertSelect };
}

/** The pipeline whose roles are built: namespace and name (roles are per pipeline). */
export interface AccessOwner {
  namespace: string;
  name: string;
}

function roleName(owner: AccessOwner, kind: 'writer' | 'auditor'): string {
  const hash = createHash('sha256').update(`${owner.namespace}/${owner.name}`).digest('hex').slice(0, 8);
  const readable = `${owner.namespace}_${owner.name}`.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 40);
  return `lp_${readable}_${hash}_${kind === 'writer' ? 'w' : 'r'}`;
}

/** The per-pipeline role names (valid identifiers, stable for a namespace/name). */
export function pipelineRoles(owner: AccessOwner): { writer: string; auditor: string } {
  return { writer: roleName(owner, 'writer'), auditor: roleName(owner, 'auditor') };
}

/**
 * The statements that create (or update) both users and set their privileges, in order.
 * Privileges live on two roles owned by this pipeline alone (`pipelineRoles`); the users only
 * receive the roles. `WITH REPLACE OPTION` is used on the pipeline's own roles only, so a re-run
 * converges (a table dropped from the spec loses its grant) without touching any other
 * pipeline's privileges; the users are granted the roles additively, so two pipelines sharing a
 * writer Secret both keep their rights, and no privilege granted to the user by hand is taken.
 * Pure; throws on invalid names.
 */
export function buildAccessStatements(spec: ResolvedSpec, users: AccessUsers): string[] {
  const db = checkIdentifier(spec.clickhouse.database, 'database');
  const onCluster = spec.clickhouse.cluster
    ? ` ON CLUSTER '${checkIdentifier(spec.clickhouse.cluster, 'cluster')}'`
    : '';
  const w = quoteIdentifier(users.writer.username, 'writer username');
  const a = quoteIdentifier(users.auditor.username, 'auditor username');
  if (users.writer.username === users.auditor.username)
    throw new RangeError('writer and auditor must be different users');
  const roles = pipelineRoles(spec);
  const wr = quoteIdentifier(roles.writer, 'writer role');
  const ar = quoteIdentifier(roles.auditor, 'auditor role');
  const { insert, insertSelect } = writerTables(spec);
  const writerGrants = [
    ...insert.map((t) => `INSERT ON ${qualifiedName(db, t)}`),
    ...insertSelect.map((t) => `INSERT, SELECT ON ${qualifiedName(db, t)}`),
  ];
  return [
    `CREATE ROLE IF NOT EXISTS ${wr}${onCluster}`,
    `GRANT${onCluster} ${writerGrants.join(', ')} TO ${wr} WITH REPLACE OPTION`,
    `CREATE USER IF NOT EXISTS ${w}${onCluster} ${identified(users.writer)}`,
    `ALTER USER ${w}${onCluster} ${identified(users.writer)}`,
    `GRANT${onCluster} ${wr} TO ${w}`,
    `CREATE ROLE IF NOT EXISTS ${ar}${onCluster}`,
    `GRANT${onCluster} SELECT ON ${quoteIdentifier(db, 'database')}.* TO ${ar} WITH REPLACE OPTION`,
    // readonly = 2: no writes or DDL whatever is granted later, but query settings (external sort) stay allowed.
    `CREATE USER IF NOT EXISTS ${a}${onCluster} ${identified(users.auditor)} SETTINGS readonly = 2`,
    `ALTER USER ${a}${onCluster} ${identified(users.auditor)} SETTINGS readonly = 2`,
    `GRANT${onCluster} ${ar} TO ${a}`,
  ];
}

// Engines without writable access storage (or a user without access management): nothing to drop.
const ACCESS_UNAVAILABLE =
  /ACCESS_STORAGE_FOR_INSERTION_NOT_FOUND|writeable access storage|ACCESS_DENIED|Not enough privileges/;

/** `DROP ROLE IF EXISTS` of the pipeline's writer and auditor roles (pure). */
export function buildDropRolesStatement(spec: ResolvedSpec): string {
  const roles = pipelineRoles(spec);
  const onCluster = spec.clickhouse.cluster
    ? ` ON CLUSTER '${checkIdentifier(spec.clickhouse.cluster, 'cluster')}'`
    : '';
  return `DROP ROLE IF EXISTS ${quoteIdentifier(roles.writer, 'writer role')}, ${quoteIdentifier(roles.auditor, 'auditor role')}${onCluster}`;
}

/**
 * Applies access statements only when they differ from what was last applied for the pipeline on
 * that server (passwords enter as hashes, so a rotated Secret differs), or when the last apply is
 * older than `refreshMs` (drift repair). A failed apply is retried after `failureRetryMs`, not on
 * every reconcile (autoscaling polls every few seconds). A steady pipeline therefore sends no
 * statement per reconcile; see the statement counter in apply/clickhouse-client.ts.
 */
export class AccessApplier {
  private readonly applied = new Map<string, { digest: string; at: number; failed: boolean }>();

  constructor(
    private readonly refreshMs = 600_000,
    private readonly now: () => number = Date.now,
    private readonly failureRetryMs = 60_000,
  ) {}

  /** Creates/updates the writer and auditor users and their roles when needed; true when it sent statements. */
  async ensure(adminClient: ClickHouseClient, spec: ResolvedSpec, users: AccessUsers): Promise<boolean> {
    const statements = buildAccessStatements(spec, users);
    const key = `${spec.clickhouse.url}|${spec.namespace}/${spec.name}`;
    const digest = createHash('sha256').update(statements.join('\n')).digest('hex');
    const last = this.applied.get(key);
    const wait = last?.failed ? this.failureRetryMs : this.refreshMs;
    if (last && last.digest === digest && this.now() - last.at < wait) return false;
    try {
      for (const sql of statements) await runStatement(adminClient, sql);
    } catch (err) {
      this.applied.set(key, { digest, at: this.now(), failed: true });
      throw err;
    }
    this.applied.set(key, { digest, at: this.now(), failed: false });
    return true;
  }

  /**
   * Drops the pipeline's roles (deletionPolicy Delete, after its tables) and forgets it; false
   * when the server has no access management or the admin may not drop roles (nothing to undo
   * then, or roles for the DBA to drop); other failures are thrown.
   */
  async dropRoles(adminClient: ClickHouseClient, spec: ResolvedSpec): Promise<boolean> {
    this.applied.delete(`${spec.clickhouse.url}|${spec.namespace}/${spec.name}`);
    try {
      await runStatement(adminClient, buildDropRolesStatement(spec));
      return true;
    } catch (err) {
      if (!ACCESS_UNAVAILABLE.test((err as Error).message)) throw err;
      return false;
    }
  }
}

/** Creates/updates the writer and auditor users with the admin client (idempotent, always sends). */
export async function ensureAccessUsers(
  adminClient: ClickHouseClient,
  spec: ResolvedSpec,
  users: AccessUsers,
): Promise<void> {
  for (const query of buildAccessStatements(spec, users)) await runStatement(adminClient, query);
}
