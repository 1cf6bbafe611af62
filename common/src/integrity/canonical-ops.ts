/**
 * The column plan of the canonical form (canonical.ts): which canonical rendering each column of
 * the INSERT gets, compiled once per column list into ops (adjacent copied columns merged, so a
 * row costs fewer separator scans), and the row order a column list allows.
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
} from '../columns/column-type';

/** A column of the INSERT, as the worker config lists it (name and ClickHouse type). */
export interface CanonicalColumn {
  name: string;
  type: string;
  /**
   * The worker's source of the column, when known. Integers from the parser's own outputs are
   * written by the encoder's integer writer (never with leading zeros), so they are canonical
   * already and copied unparsed; `field:`/`static:` integers are normalised.
   */
  source?: string;
}

/** Copy the TSV bytes as they are (strings, enums, integers the encoder wrote canonically). */
export const OP_COPY = 0;
/** An integer (or DateTime seconds) rewritten in decimal without leading zeros. */
export const OP_INT = 1;
/** A DateTime64 rewritten as epoch milliseconds. */
export const OP_TIME64 = 2;
/** An IPv4/IPv6 address rewritten as 32 hex digits. */
export const OP_IP = 3;

/** One compiled step of a row: how to render `count` columns. */
export interface Op {
  kind: number;
  /** Columns covered (runs of COPY columns are merged into one op). */
  count: number;
  nullable: boolean;
  isTime: boolean;
  /** DateTime (seconds) rather than DateTime64 for the time column's range. */
  seconds: boolean;
  column: string;
}

function opFor(col: CanonicalColumn, isTime: boolean): Op {
  const t = parseColumnType(col.type);
  const base = { count: 1, nullable: t.nullable, isTime, seconds: t.kind === T_DATETIME, column: col.name };
  switch (t.kind) {
    case T_STRING:
    case T_ENUM:
      return { ...base, kind: OP_COPY };
    case T_INT:
      return { ...base, kind: canonicalInts(col.source) && !isTime ? OP_COPY : OP_INT };
    case T_DATETIME:
      return { ...base, kind: OP_INT };
    case T_DATETIME64:
      return { ...base, kind: OP_TIME64 };
    case T_IPV4:
    case T_IPV6:
      return { ...base, kind: OP_IP };
    default:
      throw new RangeError(`column ${col.name}: type ${col.type} has no canonical form`);
  }
}

/** True when the encoder writes this source's integers in canonical decimal already. */
function canonicalInts(source: string | undefined): boolean {
  return source !== undefined && !source.startsWith('field:') && !source.startsWith('static:');
}

/** How rows of one Kafka message are ordered in the digest: by line index, or by canonical bytes. */
export type RowOrder = 'offset,line' | 'offset,row';

/** The row order of a column list: `offset,line` when it has the line column, else `offset,row`. */
export function rowOrderFor(columns: readonly CanonicalColumn[], lineColumn = 'kafka_line'): RowOrder {
  return columns.some((c) => c.name === lineColumn) ? 'offset,line' : 'offset,row';
}

/** Compiles columns into ops, merging adjacent copy columns (fewer separator scans per row). */
export function compileOps(columns: readonly CanonicalColumn[], timeColumn: string): Op[] {
  const ops: Op[] = [];
  for (const col of columns) {
    const op = opFor(col, col.name === timeColumn);
    const prev = ops[ops.length - 1];
    if (op.kind === OP_COPY && prev && prev.kind === OP_COPY) prev.count++;
    else ops.push(op);
  }
  const time = ops.find((o) => o.isTime);
  if (!time || (time.kind !== OP_TIME64 && !time.seconds)) {
    throw new RangeError(
      `time column ${JSON.stringify(timeColumn)} must be a DateTime or DateTime64 column of the INSERT`,
    );
  }
  return ops;
}
