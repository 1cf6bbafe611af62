/**
 * The data table's schema resolved from a ResolvedSpec: preset columns plus user columns, every
 * name, type, codec and default validated, keys and TTL rendered from structured fields only.
 */
import { isKeyFunction } from '../../../../common/src/sql/key-functions';
import type { ColumnSpec, KeyExpression } from '../../api/types';
import type { ResolvedSpec } from '../../api/defaults';
import { parseDuration } from '../../api/duration';
import type { WorkerColumn } from '../../../../common/src/worker-config';
import { renderCodecClause, validateCodecs } from './codecs';
import { SchemaError, checkIdentifier, quoteIdentifier } from '../../../../common/src/sql/identifiers';
import { renderDefault } from './literals';
import { FIREWALL_COLUMNS, FIREWALL_ORDER_BY, FIREWALL_PARTITION_BY, FIREWALL_SKIP_INDEXES } from './presets';
import { buildTtlRules, renderTtl, type TtlRule } from './ttl';
import { isTimeType, parseTypeGrammar, renderType, type ChType } from './type-grammar';

/** A validated column: canonical type, rendered codecs/default, and the worker source if any. */
export interface TableColumn {
  name: string;
  type: string;
  parsed: ChType;
  codecs: string[];
  default?: string;
  source?: string;
}

/** A validated data-skipping index. */
export interface SkipIndex {
  name: string;
  column: string;
  /** When set, the index expression is cityHash64 over these columns. */
  hashOf?: readonly string[];
  type: string;
  granularity: number;
}

/** The index expression: the quoted column, or cityHash64 over the quoted columns. */
export function renderIndexExpression(ix: SkipIndex): string {
  if (!ix.hashOf) return quoteIdentifier(ix.column);
  return `cityHash64(${ix.hashOf.map((c) => quoteIdentifier(c)).join(', ')})`;
}

/** Everything the data table's DDL needs, already validated. */
export interface TableSchema {
  columns: TableColumn[];
  /** Rendered key expressions with quoted identifiers, e.g. toYYYYMMDD(`ts`). */
  partitionBy: string;
  orderBy: string[];
  skipIndexes: SkipIndex[];
  timeColumn: string;
  ttlRules: TtlRule[];
  /** Rendered TTL clause body. */
  ttl: string;
}

const MAX_COLUMNS = 200;
const SOURCE_RE = /^(?:(?:static|field):)?[A-Za-z0-9_.\-]{1,128}$/;

/** Validates one declared column into a TableColumn (throws SchemaError). */
export function resolveColumn(spec: ColumnSpec, staticFields: Record<string, string>): TableColumn {
  const name = checkIdentifier(spec.name, 'column name');
  const parsed = parseTypeGrammar(spec.type);
  if (!parsed.ok) throw new SchemaError(parsed.reason, `column ${name}: ${parsed.message}`);
  const column: TableColumn = {
    name,
    type: renderType(parsed.value),
    parsed: parsed.value,
    codecs: validateCodecs(spec.codec, parsed.value, name),
  };
  if (spec.default !== undefined) column.default = renderDefault(spec.default, parsed.value, name);
  if (spec.source !== undefined) {
    if (typeof spec.source !== 'string' || !SOURCE_RE.test(spec.source)) {
      throw new SchemaError(
        'InvalidColumnSource',
        `column ${name}: source ${JSON.stringify(spec.source)} must match ${SOURCE_RE.source}`,
      );
    }
    if (spec.source.startsWith('static:') && !(spec.source.slice(7) in staticFields)) {
      throw new SchemaError(
        'InvalidColumnSource',
        `column ${name}: ${spec.source} names no parser.staticFields entry`,
      );
    }
    column.source = spec.source;
  }
  return column;
}

function resolveColumns(ch: ResolvedSpec['clickhouse'], staticFields: Record<string, string>): TableColumn[] {
  const declared: ColumnSpec[] =
    ch.preset === 'firewall' ? [...FIREWALL_COLUMNS, ...ch.columns] : [...ch.columns];
  if (declared.length === 0) throw new SchemaError('InvalidSchema', 'preset custom needs clickhouse.columns');
  if (declared.length > MAX_COLUMNS) throw new SchemaError('InvalidSchema', `at most ${MAX_COLUMNS} columns`);
  const seen = new Set<string>();
  return declared.map((spec) => {
    const column = resolveColumn(spec, staticFields);
    if (seen.has(column.name))
      throw new SchemaError('DuplicateColumn', `column ${column.name} is declared twice`);
    seen.add(column.name);
    return column;
  });
}

function renderKey(key: KeyExpression, columns: TableColumn[], what: string): string {
  const column = columns.find((c) => c.name === key.column);
  if (!column)
    throw new SchemaError('InvalidKey', `${what} names unknown column ${JSON.stringify(key.column)}`);
  const t = column.parsed;
  if (
    t.kind === 'nullable' ||
    t.kind === 'array' ||
    t.kind === 'map' ||
    (t.kind === 'lowCardinality' && t.inner.kind === 'nullable')
  ) {
    throw new SchemaError(
      'InvalidKey',
      `${what}: column ${column.name} of type ${column.type} cannot be a key`,
    );
  }
  if (key.function === undefined) return quoteIdentifier(column.name);
  if (!isKeyFunction(key.function))
    throw new SchemaError('InvalidKey', `${what}: function ${JSON.stringify(key.function)} is not allowed`);
  if (!isTimeType(t))
    throw new SchemaError(
      'InvalidKey',
      `${what}: ${key.function} needs a date/time column, ${column.name} is ${column.type}`,
    );
  return `${key.function}(${quoteIdentifier(column.name)})`;
}

/** The data table's partition key: the spec's, else the preset's, else toYYYYMMDD of the time column. */
export function partitionKeyOf(spec: ResolvedSpec): KeyExpression {
  const ch = spec.clickhouse;
  return (
    ch.partitionBy ??
    (ch.preset === 'firewall' ? FIREWALL_PARTITION_BY : { column: ch.timeColumn, function: 'toYYYYMMDD' })
  );
}

/** Resolves and validates the data table's schema; throws SchemaError with a condition reason. */
export function resolveTableSchema(spec: ResolvedSpec): TableSchema {
  const ch = spec.clickhouse;
  const columns = resolveColumns(ch, spec.parser.staticFields);
  const timeColumn = columns.find((c) => c.name === ch.timeColumn);
  if (!timeColumn || !isTimeType(timeColumn.parsed)) {
    throw new SchemaError(
      'InvalidTimeColumn',
      `time column ${JSON.stringify(ch.timeColumn)} must be a declared Date/DateTime/DateTime64 column`,
    );
  }
  const firewall = ch.preset === 'firewall';
  const partitionKey = partitionKeyOf(spec);
  const orderKeys = ch.orderBy ?? (firewall ? FIREWALL_ORDER_BY : [{ column: timeColumn.name }]);
  if (orderKeys.length === 0 || orderKeys.length > 8)
    throw new SchemaError('InvalidKey', 'orderBy needs 1..8 expressions');
  const ttlRules = buildTtlRules(ch.retention, parseDuration);
  return {
    columns,
    partitionBy: renderKey(partitionKey, columns, 'partitionBy'),
    orderBy: orderKeys.map((k, i) => renderKey(k, columns, `orderBy[${i}]`)),
    skipIndexes: firewall
      ? FIREWALL_SKIP_INDEXES.filter((ix) =>
          (ix.hashOf ?? [ix.column]).every((name) => columns.some((c) => c.name === name)),
        )
      : [],
    timeColumn: timeColumn.name,
    ttlRules,
    ttl: renderTtl(ttlRules, timeColumn.name, timeColumn.parsed.kind === 'dateTime64'),
  };
}

/** The column definition as it appears inside CREATE TABLE / ADD COLUMN. */
export function renderColumnDefinition(c: TableColumn): string {
  const def = c.default !== undefined ? ` DEFAULT ${c.default}` : '';
  return `${quoteIdentifier(c.name)} ${c.type}${def}${renderCodecClause(c.codecs)}`;
}

/** The columns the worker fills (name, canonical type, source), in table order, for its config. */
export function buildWorkerColumns(schema: TableSchema): WorkerColumn[] {
  return schema.columns
    .filter((c) => c.source !== undefined)
    .map((c) => ({ name: c.name, type: c.type, source: c.source as string }));
}
