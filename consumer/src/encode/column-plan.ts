/**
 * Compiles the configured columns `[{name, type, source}]` into a plan the row writer executes
 * without string work: source names become small ints, types are parsed once, `static:` values
 * are validated and pre-encoded, `field:` keys become byte strings. Configuration errors throw
 * here (at startup), never while encoding data.
 */
import { ACTION_NAMES, VENDOR_NAMES, SEVERITY_NAMES } from '../parse/record';
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
} from '../../../common/src/columns/column-type';

/** Column sources: parser outputs, enrichment, `static:<name>` and `field:<key>`. */
export const SOURCES = [
  'timestamp',
  'vendor',
  'device',
  'src_ip',
  'dst_ip',
  'src_port',
  'dst_port',
  'proto',
  'action',
  'bytes',
  'rule',
  'severity',
  'message',
  'raw',
  'ingest_time',
  'kafka_topic',
  'kafka_partition',
  'kafka_offset',
  'kafka_line',
  'nat_src_ip',
  'nat_dst_ip',
  'nat_src_port',
  'nat_dst_port',
] as const;
export const S = Object.fromEntries(SOURCES.map((s, i) => [s, i])) as Record<
  (typeof SOURCES)[number],
  number
>;
export const S_STATIC = 100;
export const S_FIELD = 101;

/** One configured column (mirrors WorkerColumn / the CRD's ColumnSpec). */
export interface ColumnInput {
  name: string;
  type: string;
  /** Absent for columns ClickHouse fills by DEFAULT: they are left out of the INSERT. */
  source?: string;
}

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

const NUMERIC_SOURCES = new Set([
  S.src_port,
  S.dst_port,
  S.bytes,
  S.kafka_partition,
  S.kafka_offset,
  S.kafka_line,
  S.nat_src_port,
  S.nat_dst_port,
]);
const ADDRESS_SOURCES = new Set([S.src_ip, S.dst_ip, S.nat_src_ip, S.nat_dst_ip]);
const TIME_SOURCES = new Set([S.timestamp, S.ingest_time]);

function sourceId(source: string, name: string): number {
  if (source.startsWith('static:')) return S_STATIC;
  if (source.startsWith('field:')) {
    if (source.length === 6) throw new RangeError(`column ${name}: empty field key`);
    return S_FIELD;
  }
  const id = (S as Record<string, number>)[source];
  if (id === undefined) throw new RangeError(`column ${name}: unknown source "${source}"`);
  return id;
}

/** Throws when a standard source cannot be written into the column type. */
function checkCompatible(col: PlannedColumn): void {
  const { kind, enumNames, bits } = col.type;
  const src = col.source;
  const fail = (why: string): never => {
    throw new RangeError(
      `column ${col.name}: source ${col.sourceText} cannot be written as ${col.type.text}: ${why}`,
    );
  };
  if (src === S_STATIC && (kind === T_DATETIME || kind === T_DATETIME64))
    fail('static values are not clocks');
  if (src === S_STATIC || src === S_FIELD) return;
  if (TIME_SOURCES.has(src)) {
    if (kind === T_INT && bits !== 64) fail('epoch milliseconds need a 64-bit integer');
    if (kind !== T_DATETIME && kind !== T_DATETIME64 && kind !== T_INT && kind !== T_STRING)
      fail('not a time');
    return;
  }
  if (kind === T_DATETIME || kind === T_DATETIME64) fail('not a time');
  if (NUMERIC_SOURCES.has(src) && kind !== T_INT && kind !== T_STRING)
    fail('numbers need an integer or String');
  if (ADDRESS_SOURCES.has(src) && kind !== T_IPV4 && kind !== T_IPV6 && kind !== T_STRING) {
    fail('addresses need IPv4, IPv6 or String');
  }
  if (src === S.action && kind === T_ENUM) {
    for (const a of ACTION_NAMES) if (!enumNames.includes(a)) fail(`enum lacks '${a}'`);
  }
  if (src === S.severity && kind === T_ENUM) {
    for (const a of SEVERITY_NAMES) if (!enumNames.includes(a)) fail(`enum lacks '${a}'`);
  }
  if (
    (kind === T_IPV4 || kind === T_IPV6) &&
    !ADDRESS_SOURCES.has(src) &&
    ![S.device, S.message, S.rule].includes(src)
  ) {
    fail('not an address');
  }
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
  const planned: PlannedColumn[] = [];
  const seen = new Set<string>();
  for (const c of columns) {
    if (c.source === undefined || c.source === '') continue;
    if (seen.has(c.name)) throw new RangeError(`duplicate column ${c.name}`);
    seen.add(c.name);
    const type = parseColumnType(c.type);
    const source = sourceId(c.source, c.name);
    const [intMaxText, intMinText] = intBoundsText(type);
    const enumNames = type.enumNames.map((n) => Buffer.from(n, 'utf8'));
    const col: PlannedColumn = {
      name: c.name,
      type,
      source,
      sourceText: c.source,
      fieldKey: source === S_FIELD ? Buffer.from(c.source.slice(6), 'utf8') : null,
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
    checkCompatible(col);
    if (source === S_STATIC) {
      const key = c.source.slice(7);
      const value = staticFields[key];
      if (value === undefined) throw new RangeError(`column ${c.name}: no static field "${key}"`);
      col.staticValue = encodeStatic(col, value);
    }
    planned.push(col);
  }
  if (planned.length === 0) throw new RangeError('column plan has no columns with a source');
  return {
    columns: planned,
    names: planned.map((c) => c.name),
    needsFields: planned.some((c) => c.source === S_FIELD),
  };
}
