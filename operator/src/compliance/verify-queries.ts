/**
 * The SELECTs `logpipeline verify` runs against the integrity and checkpoint tables. Pure builders:
 * identifiers are validated and quoted, the pipeline and table names are validated literals, and
 * every number is rendered from a JS integer by this code, so nothing user-typed reaches the SQL
 * text unchecked. (Values are inlined rather than bound because only parameter-free SELECTs are
 * streamed by every server the verifier targets.)
 */
import { LINK_SELECT } from '../../../common/src/integrity/link-rows';
import { qualifiedName, quoteString, SchemaError } from '../../../common/src/sql/identifiers';
import { windowCondition, type TimeWindow } from './canonical-sql';

/** Which integrity and checkpoint tables, for which data table (and optionally which pipeline). */
export interface IntegrityTables {
  database: string;
  table: string;
  integrityTable: string;
  checkpointTable: string;
  /** `namespace/name`; undefined means every pipeline writing this table (normally one). */
  pipeline?: string;
}

const PIPELINE_RE = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function int(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${n} is not a non-negative integer`);
  return String(n);
}

function chainFilter(t: IntegrityTables): string {
  const parts = [`table_name = ${quoteString(t.table, 'table')}`];
  if (t.pipeline !== undefined) {
    if (!PIPELINE_RE.test(t.pipeline))
      throw new SchemaError(
        'InvalidPipeline',
        `pipeline ${JSON.stringify(t.pipeline)} must be namespace/name`,
      );
    parts.push(`pipeline = ${quoteString(t.pipeline, 'pipeline')}`);
  }
  return parts.join(' AND ');
}

/** Links whose [min_ts, max_ts] intersects the window. */
function overlapCondition(w: TimeWindow): string {
  const parts: string[] = [];
  if (w.fromMs !== undefined) parts.push(windowCondition('max_ts', { fromMs: w.fromMs }));
  if (w.toMs !== undefined) parts.push(windowCondition('min_ts', { toMs: w.toMs }));
  return parts.length > 0 ? parts.join(' AND ') : '1';
}

/** Hull of the links intersecting `w`: min(min_ts), max(max_ts), count, pipelines, inserted_at range (TSV). */
export function buildHullQuery(t: IntegrityTables, w: TimeWindow): string {
  return (
    'SELECT toUnixTimestamp64Milli(min(min_ts)), toUnixTimestamp64Milli(max(max_ts)), count(), uniqExact(pipeline), ' +
    'toUnixTimestamp64Milli(min(inserted_at)), toUnixTimestamp64Milli(max(inserted_at)) ' +
    `FROM ${qualifiedName(t.database, t.integrityTable)} WHERE ${chainFilter(t)} AND ${overlapCondition(w)} FORMAT TabSeparated`
  );
}

/** Every link intersecting `w`, ordered by (partition, first_offset), as TabSeparated in LINK_SELECT order. */
export function buildLinksQuery(t: IntegrityTables, w: TimeWindow): string {
  return (
    `SELECT ${LINK_SELECT} FROM ${qualifiedName(t.database, t.integrityTable)} ` +
    `WHERE ${chainFilter(t)} AND ${overlapCondition(w)} ORDER BY \`partition\`, first_offset, link FORMAT TabSeparated`
  );
}

/** The link immediately before `firstOffset` in a partition (the predecessor of a window's first link). */
export function buildPredecessorQuery(t: IntegrityTables, partition: number, firstOffset: number): string {
  return (
    `SELECT ${LINK_SELECT} FROM ${qualifiedName(t.database, t.integrityTable)} ` +
    `WHERE ${chainFilter(t)} AND \`partition\` = ${int(partition)} AND first_offset < ${int(firstOffset)} ` +
    'ORDER BY first_offset DESC LIMIT 1 FORMAT TabSeparated'
  );
}

/** Links of a partition with first_offset strictly between two offsets, in chain order (bounded). */
export function buildBetweenQuery(
  t: IntegrityTables,
  partition: number,
  afterOffset: number,
  beforeOffset: number,
): string {
  return (
    `SELECT ${LINK_SELECT} FROM ${qualifiedName(t.database, t.integrityTable)} ` +
    `WHERE ${chainFilter(t)} AND \`partition\` = ${int(partition)} AND first_offset > ${int(afterOffset)} ` +
    `AND first_offset < ${int(beforeOffset)} ORDER BY first_offset LIMIT 10000 FORMAT TabSeparated`
  );
}

/** Links at exact (partition, last_offset) positions (resolving checkpoint heads outside the window). */
export function buildHeadLookupQuery(
  t: IntegrityTables,
  positions: ReadonlyArray<{ partition: number; lastOffset: number }>,
): string {
  const tuples = positions.map((p) => `(${int(p.partition)}, ${int(p.lastOffset)})`).join(', ');
  return (
    `SELECT \`partition\`, last_offset, link FROM ${qualifiedName(t.database, t.integrityTable)} ` +
    `WHERE ${chainFilter(t)} AND (\`partition\`, last_offset) IN (${tuples || '(0, 0)'}) FORMAT TabSeparated`
  );
}

/** Checkpoints of this table (and pipeline): the `table`/`pipeline` of the signed text. */
function ownCheckpoints(t: IntegrityTables): string {
  const own = [`JSONExtractString(heads, 'table') = ${quoteString(t.table, 'table')}`];
  if (t.pipeline !== undefined)
    own.push(`JSONExtractString(heads, 'pipeline') = ${quoteString(t.pipeline, 'pipeline')}`);
  return own.join(' AND ');
}

/**
 * Checkpoint rows of this table created in the window, oldest first (JSONEachRow keeps the signed
 * text exact). Checkpoints of other tables sharing the checkpoint table (the DLQ chain) are left
 * out; one altered to name another table breaks the chain of `prev` ids instead.
 */
export function buildCheckpointsQuery(t: IntegrityTables, created: TimeWindow): string {
  return (
    'SELECT toUnixTimestamp64Milli(created_at) AS created_at_ms, heads, signature, public_key, tsa_token ' +
    `FROM ${qualifiedName(t.database, t.checkpointTable)} WHERE ${windowCondition('created_at', created)} ` +
    `AND ${ownCheckpoints(t)} ORDER BY created_at FORMAT JSONEachRow`
  );
}

/** Which of the given checkpoint ids (hex SHA-256 of the signed text) are stored, one per line. */
export function buildCheckpointIdsQuery(t: IntegrityTables, ids: readonly string[]): string {
  for (const id of ids) if (!/^[0-9a-f]{64}$/.test(id)) throw new RangeError(`${id} is not a checkpoint id`);
  const list = ids.map((id) => `'${id}'`).join(', ');
  return (
    `SELECT DISTINCT lower(hex(SHA256(heads))) AS id FROM ${qualifiedName(t.database, t.checkpointTable)} ` +
    `WHERE id IN (${list || "''"}) FORMAT TabSeparated`
  );
}

/** The longest retention_ms any checkpoint of this table signed (0 when none; TSV). */
export function buildSignedRetentionQuery(t: IntegrityTables): string {
  return (
    `SELECT max(JSONExtractUInt(heads, 'retention_ms')) FROM ${qualifiedName(t.database, t.checkpointTable)} ` +
    `WHERE ${ownCheckpoints(t)} FORMAT TabSeparated`
  );
}

/** Links inserted strictly between two times: count, first and last inserted_at (TSV). */
export function buildInsertedBetweenQuery(t: IntegrityTables, afterMs: number, beforeMs: number): string {
  const at = (ms: number) => `fromUnixTimestamp64Milli(toInt64(${int(ms)}))`;
  return (
    'SELECT count(), toUnixTimestamp64Milli(min(inserted_at)), toUnixTimestamp64Milli(max(inserted_at)) ' +
    `FROM ${qualifiedName(t.database, t.integrityTable)} WHERE ${chainFilter(t)} ` +
    `AND inserted_at > ${at(afterMs)} AND inserted_at < ${at(beforeMs)} FORMAT TabSeparated`
  );
}

/**
 * Distinct chain heads named by the checkpoints in the window, ordered by (partition, last_offset),
 * with the earliest checkpoint naming each (TSV: partition, last_offset, link, created_at_ms).
 * Only checkpoints of this table and pipeline count; their signatures are checked separately.
 */
export function buildHeadsQuery(t: IntegrityTables, created: TimeWindow): string {
  return (
    "SELECT toUInt32(JSONExtractUInt(h, 'partition')) AS p, JSONExtractUInt(h, 'last_offset') AS o, " +
    "JSONExtractString(h, 'link') AS l, toUnixTimestamp64Milli(min(created_at)) " +
    `FROM ${qualifiedName(t.database, t.checkpointTable)} ARRAY JOIN JSONExtractArrayRaw(heads, 'heads') AS h ` +
    `WHERE ${windowCondition('created_at', created)} AND ${ownCheckpoints(t)} GROUP BY p, o, l ORDER BY p, o, l FORMAT TabSeparated`
  );
}
