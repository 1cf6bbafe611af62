/**
 * SQL that renders stored rows in the integrity hash's canonical form (docs/compliance.md), so
 * `logpipeline verify` hashes exactly the bytes the worker hashed at insert time. Each output line
 * is `<kafka_partition>\t<kafka_offset>\t<canonical row>` (TabSeparatedRaw adds the newline); the
 * canonical row contains no raw tab or newline because strings are TSV-escaped in SQL.
 * Pure builders: identifiers are validated and quoted, numbers are rendered by this code.
 */
import {
  parseColumnType,
  T_DATETIME,
  T_DATETIME64,
  T_ENUM,
  T_INT,
  T_IPV4,
  T_IPV6,
  T_STRING,
} from '../../../common/src/columns/column-type';
import type { CanonicalColumn } from '../../../common/src/integrity/canonical-ops';
import { qualifiedName, quoteIdentifier } from '../../../common/src/sql/identifiers';

// SQL string literals: '\\' is one backslash, '\t' a tab; the escapes mirror the encoder's.
const ESCAPE_CHAIN: ReadonlyArray<[string, string]> = [
  ["'\\\\'", "'\\\\\\\\'"],
  ["'\\t'", "'\\\\t'"],
  ["'\\n'", "'\\\\n'"],
  ["'\\r'", "'\\\\r'"],
];

function escaped(expr: string): string {
  return ESCAPE_CHAIN.reduce((e, [from, to]) => `replaceAll(${e}, ${from}, ${to})`, expr);
}

/** The canonical text expression of one column (throws RangeError for types without a canonical form). */
export function canonicalExpression(column: CanonicalColumn): string {
  const t = parseColumnType(column.type);
  const c = quoteIdentifier(column.name, 'column');
  let expr: string;
  switch (t.kind) {
    case T_STRING:
    case T_ENUM:
      expr = escaped(`toString(${c})`);
      break;
    case T_INT:
      expr = `toString(${c})`;
      break;
    case T_DATETIME64:
      expr = `toString(toUnixTimestamp64Milli(${c}))`;
      break;
    case T_DATETIME:
      expr = `toString(toUnixTimestamp(${c}))`;
      break;
    case T_IPV4:
      expr = `lower(hex(toIPv6(${c})))`;
      break;
    case T_IPV6:
      expr = `lower(hex(${c}))`;
      break;
    default:
      throw new RangeError(`column ${column.name}: type ${column.type} has no canonical form`);
  }
  return t.nullable ? `ifNull(${expr}, '\\\\N')` : expr;
}

/** A closed time window in epoch ms; undefined bounds are open. */
export interface TimeWindow {
  fromMs?: number;
  toMs?: number;
}

function msLiteral(ms: number): string {
  if (!Number.isSafeInteger(ms)) throw new RangeError(`time bound ${ms} is not an integer of milliseconds`);
  return `fromUnixTimestamp64Milli(toInt64(${ms}))`;
}

/** `AND`-joined conditions `column >= from AND column <= to` for the bounds present ('1' when none). */
export function windowCondition(column: string, w: TimeWindow): string {
  const c = quoteIdentifier(column, 'column');
  const parts: string[] = [];
  if (w.fromMs !== undefined) parts.push(`${c} >= ${msLiteral(w.fromMs)}`);
  if (w.toMs !== undefined) parts.push(`${c} <= ${msLiteral(w.toMs)}`);
  return parts.length > 0 ? parts.join(' AND ') : '1';
}

/** Settings that keep the server's memory bounded while it sorts a large window. */
export const SORT_SETTINGS = 'SETTINGS max_bytes_before_external_sort = 268435456, max_threads = 2';

/**
 * The streamed row query: every row of the table in the window, canonical lines ordered by
 * (partition, offset, line). Without a line column (`hasLine` false) the rows of one offset are
 * ordered by their canonical text, as the worker hashes them (BatchDigester's sortByOffset).
 * The provenance columns default to kafka_partition / kafka_offset / kafka_line.
 */
export function buildCanonicalRowsQuery(args: {
  database: string;
  table: string;
  columns: readonly CanonicalColumn[];
  timeColumn: string;
  window: TimeWindow;
  hasLine: boolean;
  partitionColumn?: string;
  offsetColumn?: string;
  lineColumn?: string;
}): string {
  const partition = quoteIdentifier(args.partitionColumn ?? 'kafka_partition', 'column');
  const offset = quoteIdentifier(args.offsetColumn ?? 'kafka_offset', 'column');
  const row = `concat(${args.columns.map(canonicalExpression).join(", '\\t', ")})`;
  const line = `concat(toString(${partition}), '\\t', toString(${offset}), '\\t', ${row})`;
  const within = args.hasLine ? quoteIdentifier(args.lineColumn ?? 'kafka_line', 'column') : row;
  return (
    `SELECT ${line} FROM ${qualifiedName(args.database, args.table)} ` +
    `WHERE ${windowCondition(args.timeColumn, args.window)} ORDER BY ${partition}, ${offset}, ${within} ${SORT_SETTINGS} FORMAT TabSeparatedRaw`
  );
}
