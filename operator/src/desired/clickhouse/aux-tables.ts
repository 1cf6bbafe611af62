/**
 * Schemas of a pipeline's fixed-shape companion tables (`<table>_dlq`, `_integrity`, `_checkpoints`,
 * `_seals`, `_parser_stats`). Their columns are a contract with the worker and the CLI and live in
 * common/src/tables.ts; this file adds ordering, partitioning and retention.
 */
import type { ResolvedSpec } from '../../api/defaults';
import { parseDuration } from '../../api/duration';
import { quoteIdentifier } from '../../../../common/src/sql/identifiers';
import {
  CHECKPOINT_COLUMNS,
  DLQ_COLUMNS,
  INTEGRITY_COLUMNS,
  PARSER_STATS_COLUMNS,
  SEAL_COLUMNS,
  type TableColumn,
} from '../../../../common/src/tables';
import { resolveColumn, type TableSchema } from './schema';
import { buildTtlRules, renderTtl, type TtlRule } from './ttl';

function auxSchema(
  columns: readonly TableColumn[],
  timeColumn: string,
  partitionFn: string,
  orderBy: string[],
  ttlRules: TtlRule[],
): TableSchema {
  const resolved = columns.map((c) => resolveColumn({ ...c, codec: c.codec && [...c.codec] }, {}));
  return {
    columns: resolved,
    partitionBy: `${partitionFn}(${quoteIdentifier(timeColumn)})`,
    orderBy: orderBy.map((c) => quoteIdentifier(c)),
    skipIndexes: [],
    timeColumn,
    ttlRules,
    ttl: ttlRules.length > 0 ? renderTtl(ttlRules, timeColumn, true) : '',
  };
}

/** Schema of the parser-coverage stats table: ordered by time, deleted after 7 days. */
export function parserStatsSchema(): TableSchema {
  const rules = buildTtlRules({ deleteAfterMs: 7 * 86_400_000, moves: [] }, parseDuration);
  return auxSchema(PARSER_STATS_COLUMNS, 'window_end', 'toYYYYMMDD', ['window_end', 'worker'], rules);
}

/** Schema of the dead-letter table: ordered by time, same tiered retention as the data. */
export function deadLetterSchema(spec: ResolvedSpec): TableSchema {
  const rules = buildTtlRules(spec.clickhouse.retention, parseDuration);
  return auxSchema(DLQ_COLUMNS, 'ts', 'toYYYYMMDD', ['ts', 'partition', 'offset'], rules);
}

/** Schema of the integrity-link table: ordered by chain position, delete-only retention. */
export function integritySchema(spec: ResolvedSpec): TableSchema {
  const rules = buildTtlRules(
    { deleteAfterMs: spec.clickhouse.retention.deleteAfterMs, moves: [] },
    parseDuration,
  );
  return auxSchema(INTEGRITY_COLUMNS, 'inserted_at', 'toYYYYMM', ['partition', 'first_offset'], rules);
}

/** Schema of the signed-checkpoint table: ordered by time, no TTL. */
export function checkpointSchema(): TableSchema {
  return auxSchema(CHECKPOINT_COLUMNS, 'created_at', 'toYYYYMM', ['created_at'], []);
}

/** Schema of the daily-seal table: one row per sealed day, ordered by (table, day), no TTL. */
export function sealSchema(): TableSchema {
  return auxSchema(SEAL_COLUMNS, 'day', 'toYear', ['table_name', 'day'], []);
}
