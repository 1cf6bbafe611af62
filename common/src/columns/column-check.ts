/**
 * The one check of a column list against what the worker can write: known source, non-empty
 * `field:` key, existing `static:` field, a type the encoder supports, a source the type can hold,
 * unique names. The worker throws the first problem at startup; the operator reports every problem
 * as a terminal condition and in `logpipeline plan`, naming the field.
 */
import {
  ColumnType,
  parseColumnType,
  T_DATETIME,
  T_DATETIME64,
  T_ENUM,
  T_INT,
  T_IPV4,
  T_IPV6,
  T_STRING,
} from './column-type';
import {
  ACTION_NAMES,
  ADDRESS_SOURCES,
  ADDRESS_TEXT_SOURCES,
  FIELD_PREFIX,
  NUMERIC_SOURCES,
  SEVERITY_NAMES,
  SOURCES,
  STATIC_PREFIX,
  TIME_SOURCES,
} from './sources';

/** One configured column (mirrors WorkerColumn / the CRD's ColumnSpec). */
export interface ColumnInput {
  name: string;
  type: string;
  /** Absent for columns ClickHouse fills by DEFAULT: they are left out of the INSERT. */
  source?: string;
}

/** A column the worker cannot write, with the offending field of `columns[index]`. */
export interface ColumnProblem {
  index: number;
  /** Which field of the column is at fault. */
  field: 'name' | 'type' | 'source';
  /** The worker's error text, e.g. `column a: unknown source "nope"`. */
  message: string;
}

const STANDARD: ReadonlySet<string> = new Set(SOURCES);

/** True when `source` is a standard source or a `static:`/`field:` reference. */
export function isKnownSource(source: string): boolean {
  return STANDARD.has(source) || source.startsWith(STATIC_PREFIX) || source.startsWith(FIELD_PREFIX);
}

/** Why `source` cannot be written into a column of `type`, or undefined when it can. */
export function incompatibility(source: string, type: ColumnType): string | undefined {
  const { kind, enumNames, bits } = type;
  const isStatic = source.startsWith(STATIC_PREFIX);
  if (isStatic && (kind === T_DATETIME || kind === T_DATETIME64)) return 'static values are not clocks';
  if (isStatic || source.startsWith(FIELD_PREFIX)) return undefined;
  if (TIME_SOURCES.has(source)) {
    if (kind === T_INT && bits !== 64) return 'epoch milliseconds need a 64-bit integer';
    if (kind !== T_DATETIME && kind !== T_DATETIME64 && kind !== T_INT && kind !== T_STRING)
      return 'not a time';
    return undefined;
  }
  if (kind === T_DATETIME || kind === T_DATETIME64) return 'not a time';
  if (NUMERIC_SOURCES.has(source) && kind !== T_INT && kind !== T_STRING)
    return 'numbers need an integer or String';
  if (ADDRESS_SOURCES.has(source) && kind !== T_IPV4 && kind !== T_IPV6 && kind !== T_STRING)
    return 'addresses need IPv4, IPv6 or String';
  const names = source === 'action' ? ACTION_NAMES : source === 'severity' ? SEVERITY_NAMES : [];
  if (kind === T_ENUM) for (const a of names) if (!enumNames.includes(a)) return `enum lacks '${a}'`;
  if (
    (kind === T_IPV4 || kind === T_IPV6) &&
    !ADDRESS_SOURCES.has(source) &&
    !ADDRESS_TEXT_SOURCES.has(source)
  )
    return 'not an address';
  return undefined;
}

function checkColumn(
  c: ColumnInput,
  index: number,
  staticFields: Readonly<Record<string, string>>,
): ColumnProblem | undefined {
  const source = c.source as string;
  const problem = (field: ColumnProblem['field'], why: string): ColumnProblem => ({
    index,
    field,
    message: `column ${c.name}: ${why}`,
  });
  let type: ColumnType;
  try {
    type = parseColumnType(c.type);
  } catch (err) {
    return { index, field: 'type', message: (err as Error).message };
  }
  if (source === FIELD_PREFIX) return problem('source', 'empty field key');
  if (!isKnownSource(source)) return problem('source', `unknown source "${source}"`);
  const why = incompatibility(source, type);
  if (why !== undefined)
    return problem('source', `source ${source} cannot be written as ${type.text}: ${why}`);
  if (source.startsWith(STATIC_PREFIX)) {
    const key = source.slice(STATIC_PREFIX.length);
    if (staticFields[key] === undefined) return problem('source', `no static field "${key}"`);
  }
  return undefined;
}

/**
 * Every problem of `columns` (at most one per column, the first the worker would throw), in column
 * order. Columns without a source are skipped: ClickHouse fills them by DEFAULT.
 */
export function checkColumns(
  columns: readonly ColumnInput[],
  staticFields: Readonly<Record<string, string>>,
): ColumnProblem[] {
  const problems: ColumnProblem[] = [];
  const seen = new Set<string>();
  columns.forEach((c, index) => {
    if (c.source === undefined || c.source === '') return;
    if (seen.has(c.name)) {
      problems.push({ index, field: 'name', message: `duplicate column ${c.name}` });
      return;
    }
    seen.add(c.name);
    const problem = checkColumn(c, index, staticFields);
    if (problem) problems.push(problem);
  });
  return problems;
}
