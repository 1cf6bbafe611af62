/**
 * Least-privilege ClickHouse users for a pipeline (docs/compliance.md, "Access"): an insert-only
 * writer for the workers — INSERT on the data, dead-letter, integrity and checkpoint tables, plus
 * SELECT on the integrity table for chain recovery — and a read-only auditor with SELECT on the
 * database (what `verify` and `query` need). Created with the admin credentials when the spec
 * gives them. Passwords never appear in SQL: users are identified by the SHA-256 of the password
 * (`sha256_hash`), so neither the query log nor an error message can leak them.
 */
import { createHash } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import type { ResolvedSpec } from '../api/defaults';
import { checkIdentifier, qualifiedName, quoteIdentifier } from '../desired/clickhouse/identifiers';

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
    insert.push(...names(spec.integrity.checkpointTable));
  }
  return { insert, insertSelect };
}

/**
 * The statements that create (or update) both users and set exactly their privileges, in order.
 * `WITH REPLACE OPTION` makes each GRANT replace the user's privileges atomically, so re-running
 * converges and a privilege granted by hand is taken away again. Pure; throws on invalid names.
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
  const { insert, insertSelect } = writerTables(spec);
  const writerGrants = [
    ...insert.map((t) => `INSERT ON ${qualifiedName(db, t)}`),
    ...insertSelect.map((t) => `INSERT, SELECT ON ${qualifiedName(db, t)}`),
  ];
  return [
    `CREATE USER IF NOT EXISTS ${w}${onCluster} ${identified(users.writer)}`,
    `ALTER USER ${w}${onCluster} ${identified(users.writer)}`,
    `GRANT${onCluster} ${writerGrants.join(', ')} TO ${w} WITH REPLACE OPTION`,
    // readonly = 2: no writes or DDL whatever is granted later, but query settings (external sort) stay allowed.
    `CREATE USER IF NOT EXISTS ${a}${onCluster} ${identified(users.auditor)} SETTINGS readonly = 2`,
    `ALTER USER ${a}${onCluster} ${identified(users.auditor)} SETTINGS readonly = 2`,
    `GRANT${onCluster} SELECT ON ${quoteIdentifier(db, 'database')}.* TO ${a} WITH REPLACE OPTION`,
  ];
}

/** Creates/updates the writer and auditor users with the admin client (idempotent). */
export async function ensureAccessUsers(
  adminClient: ClickHouseClient,
  spec: ResolvedSpec,
  users: AccessUsers,
): Promise<void> {
  for (const query of buildAccessStatements(spec, users)) await adminClient.command({ query });
}
