/**
 * Compiles the configured columns `[{name, type, source}]` into a plan the row writer executes
 * without string work: source names become small ints, types are parsed once, `static:` values
 * are validated and pre-encoded, `field:` keys become byte strings. Configuration errors throw
 * here (at startup), never while encoding data.
 */
import { ColumnType, parseColumnType, T_ENUM, T_INT } from '../../../common/src/columns/column-type';
import { checkColumns, type ColumnInput } from '../../../common/src/columns/column-check';
import { FIELD_PREFIX, SOURCES, STATIC_PREFIX, VENDOR_NAMES } from '../../../common/src/columns/sources';

export { SOURCES } from '../../../common/src/columns/sources';
export type { ColumnInput } from '../../../common/src/columns/column-check';

/** Standard source name -> the small int the row writer switches on. */
export const S = Object.fromEntries(SOURCES.map((s, i) => [s, i])) as Record<
  (typeof SOURCES)[number],
  number
>;
export const S_STATIC = 100;
export const S_FIELD = 101;

/** A column ready for the row writer. */
export interface PlannedColumn {
  name: string;
  type: ColumnType;
  source: number;
  sourceText: string;
  /** `field:` key bytes. */
  fieldKey: Buffer | null;
  /** `static:` value, already escaped and validated for the type. */
  staticValue: Buffer | null;
  /** Enum names as bytes, for membership checks of text values. */
  enumNames: Buffer[];
  /** Enum name written for an absent value: 'unknown' when declared, else the first name. */
  enumDefault: Buffer;
  /** Per vendor id: may this vendor name be written (Enum columns restrict it). */
  vendorAllowed: boolean[];
  /** Dead-letter reason when a value cannot be represented: `bad_value:<column>`. */
  badValue: string;
  /** Integer range as decimal text, for exact 64-bit checks of text values. */
  intMaxText: string;
  intMinText: string;
  /** Integer range as numbers (inexact beyond 2^53, which record numbers never reach). */
  intMax: number;
  intMin: number;
}

/** The compiled column plan; `names` is the INSERT column list, in order. */
export interface ColumnPlan {
  columns: PlannedColumn[];
  names: string[];
  /** True when some column reads `field:` keys (the parser must collect fields). */
  needsFields: boolean;
}

function sourceId(source: string): number {
  if (source.startsWith(STATIC_PREFIX)) return S_STATIC;
  if (source.startsWith(FIELD_PREFIX)) return S_FIELD;
  return (S as Record<string, number>)[source];
}

function intBoundsText(t: ColumnType): [string, string] {
  if (t.kind !== T_INT) return ['', ''];
  const bits = BigInt(t.bits);
  const max = t.signed ? (1n << (bits - 1n)) - 1n : (1n << bits) - 1n;
  const min = t.signed ? -(1n << (bits - 1n)) : 0n;
  return [max.toString(), min.toString()];
}

/**
 * Compiles columns (those without a source are skipped: ClickHouse fills them by DEFAULT).
 * `encodeStatic` validates and encodes each static value for its column type.
 */
export function compileColumnPlan(
  columns: readonly ColumnInput[],
  staticFields: Readonly<Record<string, string>>,
  encodeStatic: (col: PlannedColumn, value: string) => Buffer,
): ColumnPlan {
  const problems = checkColumns(columns, staticFields);
  if (problems.length > 0) throw new RangeError(problems[0].message);
  const planned: PlannedColumn[] = [];
  for (const c of columns) {
    if (c.source === undefined || c.source === '') continue;
    const type = parseColumnType(c.type);
    const source = sourceId(c.source);
    const [intMaxText, intMinText] = intBoundsText(type);
    const enumNames = type.enumNames.map((n) => Buffer.from(n, 'utf8'));
    const col: PlannedColumn = {
      name: c.name,
      type,
      source,
      sourceText: c.source,
      fieldKey: source === S_FIELD ? Buffer.from(c.source.slice(FIELD_PREFIX.length), 'utf8') : null,
      staticValue: null,
      enumNames,
      enumDefault: enumNames[Math.max(0, type.enumNames.indexOf('unknown'))] ?? Buffer.alloc(0),
      vendorAllowed: VENDOR_NAMES.map((v) => type.kind !== T_ENUM || type.enumNames.includes(v)),
      badValue: `bad_value:${c.name}`,
      intMaxText,
      intMinText,
      intMax: type.kind === T_INT ? Number(intMaxText) : 0,
      intMin: type.kind === T_INT ? Number(intMinText) : 0,
    };
    if (source === S_STATIC)
      col.staticValue = encodeStatic(col, staticFields[c.source.slice(STATIC_PREFIX.length)]);
    planned.push(col);
  }
  if (planned.length === 0) throw new RangeError('column plan has no columns with a source');
  return {
    columns: planned,
    names: planned.map((c) => c.name),
    needsFields: planned.some((c) => c.source === S_FIELD),
  };
}
