/**
 * Drops a pipeline's ClickHouse tables for deletionPolicy Delete (split out of clickhouse.ts): only
 * on the server they were created on, and only tables whose owner record names the pipeline.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { ResolvedSpec } from '../api/defaults';
import { checkIdentifier, catchSchemaError } from '../../../common/src/sql/identifiers';
import { parseOwnerComment, type Owner } from '../desired/ownership';
import { runStatement } from './clickhouse-client';
import { serverIdentity, tableComments } from './clickhouse-observe';
import { UNGUARDED, type DestructiveGuard } from './guard';

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
