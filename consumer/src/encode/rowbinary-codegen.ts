/**
 * One RowBinary row writer generated per column plan: the plan is fixed for the life of a
 * pipeline (which columns, which types, in which order), so a row is written by straight-line
 * code — one block per column, each read of the record and each byte write specialised for that
 * column's source and type — instead of a loop over per-column closures. The closures share one
 * feedback slot per call site across all columns, so V8 could inline none of them; the generated
 * function has its own call sites, and the BinaryOutput methods it calls are inlined.
 *
 * Safety: the source text is assembled only from the fixed templates in this file, column
 * positions, and numbers computed from parsed types (byte widths, integer bounds, time scales),
 * each checked to be a finite number (printed as a numeric literal) before it is written. Nothing from a LogPipeline — column
 * names, type strings, sources, static values, `field:` keys — ever reaches the source; values a
 * column needs at run time (enum value tables, name tables, vendor allow-lists) are passed in as
 * arrays indexed by column position. Columns the generator has no template for (sender header,
 * `static:`, `field:`, text into typed columns, protocol enums) call the column's compiled closure
 * writer (column-sources.ts), so every plan that compiles is written exactly as before.
 */
import { ipv4Value, writeIpv6Bytes } from '../../../common/src/integrity/canonical-ip';
import {
  T_DATETIME,
  T_DATETIME64,
  T_ENUM,
  T_INT,
  T_IPV4,
  T_IPV6,
  T_STRING,
} from '../../../common/src/columns/column-type';
import type { ParsedRecord } from '../parse/record';
import type { BinaryOutput } from './binary-output';
import {
  DECIMAL_MAX,
  putDecimal,
  putI64,
  putIpv4Mapped,
  putLatin1,
  putScaledI64,
  putString,
  putU32,
  STRING_HEAD_MAX,
} from './binary-put';
import { ColumnPlan, PlannedColumn, S } from './column-plan';
import { ACTION_BYTES, ColumnWrite, RowContext, SEVERITY_BYTES, VENDOR_BYTES } from './column-sources';

/** The (buffer, position) writers the generated code calls. */
const PUT = { putU32, putI64, putScaledI64, putIpv4Mapped, putString, putLatin1, putDecimal };

/** A run of zero bytes (type defaults). */
function zeros(n: number): string {
  return `for (let z = 0; z < ${num(n)}; z++) buf[pos++] = 0;`;
}

/** Writes one row; returns -1, or the position of the first column whose value does not fit. */
export type GeneratedRowWrite = (rec: ParsedRecord) => number;

/** Generated source plus the per-column run-time tables it reads (`tables[i]` for column i). */
export interface RowWriterSource {
  source: string;
  tables: unknown[];
  /** Positions of the columns written through their closure writer. */
  fallbacks: number[];
}

/** Record properties of the span sources, from our own tables (never from configuration). */
const SPANS: Record<number, string> = { [S.device]: 'device', [S.rule]: 'rule', [S.message]: 'message' };
const ADDRESSES: Record<number, [string, string]> = {
  [S.src_ip]: ['srcIp', 'srcIpVersion'],
  [S.dst_ip]: ['dstIp', 'dstIpVersion'],
  [S.nat_src_ip]: ['natSrcIp', 'natSrcIpVersion'],
  [S.nat_dst_ip]: ['natDstIp', 'natDstIpVersion'],
};
const NUMBERS: Record<number, string> = {
  [S.src_port]: 'rec.srcPort',
  [S.dst_port]: 'rec.dstPort',
  [S.nat_src_port]: 'rec.natSrcPort',
  [S.nat_dst_port]: 'rec.natDstPort',
  [S.bytes]: 'rec.bytes',
  [S.kafka_partition]: 'row.partition',
  [S.kafka_offset]: 'row.offset',
  [S.kafka_line]: 'row.line',
};
const NAMED: Record<number, [string, readonly Buffer[], boolean]> = {
  [S.vendor]: ['rec.format', VENDOR_BYTES, false],
  [S.action]: ['rec.action', ACTION_BYTES, true],
  [S.severity]: ['rec.severity', SEVERITY_BYTES, true],
};

/** A number for the source text: only finite numbers pass, printed as a plain numeric literal. */
function num(n: number): string {
  const text = String(n);
  if (typeof n !== 'number' || !Number.isFinite(n) || !/^-?[0-9][0-9.e+-]*$/.test(text))
    throw new RangeError(`not a finite number: ${text}`);
  return text;
}

/** Little-endian integer writes by width; the position lives in the local `pos`. */
const INT_WRITE: Record<number, (v: string) => string> = {
  8: (v) => `buf[pos++] = ${v};`,
  16: (v) => `{ const w = ${v}; buf[pos] = w; buf[pos + 1] = w >>> 8; pos += 2; }`,
  32: (v) => `pos = putU32(buf, pos, ${v});`,
  64: (v) => `pos = putI64(buf, pos, ${v});`,
};

function intWrite(bits: number, value: string): string {
  const write = INT_WRITE[bits];
  if (write === undefined) throw new RangeError(`no integer width ${bits}`);
  return write(value);
}

/**
 * Makes room for `n` (an expression) bytes plus ROOM (every fixed-width value of the row) before a
 * variable-length value; fixed-width values then need no check of their own.
 */
function roomFor(n: string): string {
  return `if (pos + ${n} + ROOM > buf.length) { out.pos = pos; out.ensure(${n} + ROOM); buf = out.buf; }`;
}

/** A String value of bytes [s, e) of `b` (expressions evaluated once). */
function stringCode(b: string, s: string, e: string): string {
  return `{ const sb = ${b}, ss = ${s}, se = ${e}; ${roomFor('(se - ss)')} pos = putString(buf, pos, sb, ss, se); }`;
}

/** Most bytes a column's value takes outside the variable part of a String (nullable marker included). */
function fixedBytes(col: PlannedColumn): number {
  const marker = col.type.nullable ? 1 : 0;
  switch (col.type.kind) {
    case T_INT:
      return marker + col.type.bits / 8;
    case T_ENUM:
      return marker + 2;
    case T_DATETIME:
    case T_IPV4:
      return marker + 4;
    case T_DATETIME64:
      return marker + 8;
    case T_IPV6:
      return marker + 16;
    default:
      return marker + DECIMAL_MAX;
  }
}

function enumBits(col: PlannedColumn): number {
  return col.type.text.includes('Enum16') ? 16 : 8;
}

function enumValueOf(col: PlannedColumn, name: string): number {
  const i = col.type.enumNames.indexOf(name);
  return i < 0 ? NaN : col.type.enumValues[i];
}

/** Epoch milliseconds `ms` (an expression) in the column's time type. */
function timeCode(col: PlannedColumn, ms: string): string {
  const p = col.type.precision;
  switch (col.type.kind) {
    case T_DATETIME64:
      if (p === 3) return `pos = putI64(buf, pos, ${ms});`;
      if (p > 3) return `pos = putScaledI64(buf, pos, (${ms}), ${num(10 ** (p - 3))});`;
      return `pos = putI64(buf, pos, Math.floor((${ms}) / ${num(10 ** (3 - p))}));`;
    case T_DATETIME:
      return `pos = putU32(buf, pos, Math.floor((${ms}) / 1000));`;
    case T_INT:
      return `pos = putI64(buf, pos, ${ms});`;
    default:
      return `pos = putDecimal(buf, pos, ${ms});`;
  }
}

/** A non-negative number `n` (a local name) range-checked into an integer or String column. */
function numberCode(col: PlannedColumn, i: number, n: string): string {
  if (col.type.kind === T_STRING) return `pos = putDecimal(buf, pos, ${n});`;
  if (col.type.kind !== T_INT) throw new RangeError('numbers need an integer or String column');
  return `if (${n} > ${num(col.intMax)} || ${n} < ${num(col.intMin)}) return ${i}; ${intWrite(col.type.bits, n)}`;
}

/** The value of a column without one: NULL, else the type's default (ingest time for clocks). */
function absentCode(col: PlannedColumn): string {
  if (col.type.nullable) return 'buf[pos++] = 1;';
  switch (col.type.kind) {
    case T_STRING:
      return 'buf[pos++] = 0;';
    case T_ENUM:
      return intWrite(enumBits(col), num(enumValueOf(col, col.enumDefault.toString('utf8'))));
    case T_DATETIME:
    case T_DATETIME64:
      return timeCode(col, 'row.ingestTimeMs');
    case T_INT:
      return zeros(col.type.bits / 8);
    case T_IPV4:
      return zeros(4);
    default:
      return zeros(16);
  }
}

/** `present` when `absentIf` is false (nullable columns get their 0 marker first), else the absent value. */
function optional(col: PlannedColumn, absentIf: string | null, present: string): string {
  const marked = col.type.nullable ? `buf[pos++] = 0; ${present}` : present;
  return absentIf === null ? marked : `if (${absentIf}) { ${absentCode(col)} } else { ${marked} }`;
}

/** A validated address span `sp` of version `v` into an IPv4, IPv6 or String column. */
function addressCode(col: PlannedColumn, i: number): string {
  const b = 'const b = sp.scratch ? rec.scratch : rec.src;';
  if (col.type.kind === T_STRING) return `${b} ${stringCode('b', 'sp.start', 'sp.end')}`;
  if (col.type.kind === T_IPV4)
    return (
      `if (v === 6) return ${i}; ${b} ` +
      `const x = sp.ipv4 >= 0 ? sp.ipv4 : ipv4Value(b, sp.start, sp.end); if (x < 0) return ${i}; pos = putU32(buf, pos, x);`
    );
  if (col.type.kind !== T_IPV6) throw new RangeError('addresses need IPv4, IPv6 or String');
  return (
    `${b} const x = v !== 4 ? -1 : sp.ipv4 >= 0 ? sp.ipv4 : ipv4Value(b, sp.start, sp.end); ` +
    `if (x >= 0) pos = putIpv4Mapped(buf, pos, x); ` +
    `else { if (!writeIpv6Bytes(b, sp.start, sp.end, buf, pos)) return ${i}; pos += 16; }`
  );
}

/** Index `idx` into a name table (vendor/action/severity) as Enum value, number or name. */
function namedCode(col: PlannedColumn, i: number, idx: string, numeric: boolean): string {
  if (col.type.kind === T_ENUM) return intWrite(enumBits(col), `T${i}[${idx}]`);
  if (col.type.kind === T_INT && numeric) return numberCode(col, i, idx);
  if (col.type.kind !== T_STRING) throw new RangeError('names need an Enum, integer or String column');
  return `{ const nb = T${i}[${idx}]; ${stringCode('nb', '0', 'nb.length')} }`;
}

/** The block writing column `i`, or null when the column keeps its closure writer. */
function columnCode(col: PlannedColumn, i: number, tables: unknown[]): string | null {
  const src = col.source;
  const kind = col.type.kind;
  if (src === S.timestamp)
    return `{ const t = rec.timestamp; ${optional(col, null, timeCode(col, 't === t ? t : row.ingestTimeMs'))} }`;
  if (src === S.ingest_time) return optional(col, null, timeCode(col, 'row.ingestTimeMs'));
  if (NAMED[src] !== undefined) {
    const [idx, names, numeric] = NAMED[src];
    tables[i] = kind === T_ENUM ? Int32Array.from(names, (n) => enumValueOf(col, n.toString('utf8'))) : names;
    const code = namedCode(col, i, 'k', numeric);
    if (src === S.vendor) {
      tables[i] = { names: tables[i], allowed: col.vendorAllowed };
      return `{ const k = ${idx}; if (!A${i}[k]) return ${i}; ${optional(col, null, code)} }`;
    }
    return `{ const k = ${idx}; ${optional(col, src === S.severity ? 'k < 0' : null, code)} }`;
  }
  if (src === S.proto && kind === T_STRING)
    return optional(
      col,
      "rec.protoName === ''",
      `{ const t = rec.protoName; ${roomFor('t.length')} pos = putLatin1(buf, pos, t); }`,
    );
  if (src === S.proto && kind === T_INT)
    return `{ const n = rec.protoNumber; ${optional(col, "rec.protoName === '' || n < 0", numberCode(col, i, 'n'))} }`;
  if (SPANS[src] !== undefined && kind === T_STRING) {
    const write = stringCode('sp.scratch ? rec.scratch : rec.src', 'sp.start', 'sp.end');
    return `{ const sp = rec.${SPANS[src]}; ${optional(col, 'sp.start < 0', write)} }`;
  }
  if (ADDRESSES[src] !== undefined) {
    const [span, version] = ADDRESSES[src];
    return `{ const v = rec.${version}; const sp = rec.${span}; ${optional(col, 'v === 0', addressCode(col, i))} }`;
  }
  if (NUMBERS[src] !== undefined)
    return `{ const n = ${NUMBERS[src]}; ${optional(col, 'n < 0', numberCode(col, i, 'n'))} }`;
  if (src === S.raw && kind === T_STRING)
    return optional(col, null, stringCode('rec.src', 'rec.lineStart', 'rec.lineEnd'));
  if (src === S.kafka_topic && kind === T_STRING)
    return optional(col, null, stringCode('row.topic', '0', 'row.topic.length'));
  return null;
}

/** Builds the writer's source for `plan` (pure: no evaluation; unit-tested for what reaches it). */
export function buildRowWriterSource(plan: ColumnPlan): RowWriterSource {
  const tables: unknown[] = plan.columns.map(() => null);
  const fallbacks: number[] = [];
  const head: string[] = [];
  const body: string[] = [];
  plan.columns.forEach((col, i) => {
    let code: string | null = null;
    try {
      code = columnCode(col, i, tables);
    } catch {
      code = null; // a number or shape without a template: the closure writer handles it
    }
    if (code === null) {
      tables[i] = null;
      fallbacks.push(i);
      head.push(`const F${i} = fallbacks[${i}];`);
      body.push(
        `out.pos = pos; if (!F${i}(rec)) return ${i}; buf = out.buf; pos = out.pos; ` +
          `if (pos + ROOM > buf.length) { out.ensure(ROOM); buf = out.buf; }`,
      );
      return;
    }
    const t = tables[i] as { names?: unknown } | null;
    if (t !== null && plan.columns[i].source === S.vendor) {
      head.push(`const T${i} = tables[${i}].names; const A${i} = tables[${i}].allowed;`);
    } else if (t !== null) head.push(`const T${i} = tables[${i}];`);
    body.push(code);
  });
  const room = plan.columns.reduce((n, col) => n + fixedBytes(col), STRING_HEAD_MAX);
  const source = [
    "'use strict';",
    `const ROOM = ${num(room)};`,
    'const { putU32, putI64, putScaledI64, putIpv4Mapped, putString, putLatin1, putDecimal } = put;',
    ...head,
    'return function writeRow(rec) {',
    '  let buf = out.buf;',
    '  let pos = out.pos;',
    '  if (pos + ROOM > buf.length) { out.ensure(ROOM); buf = out.buf; }',
    ...body.map((line) => `  ${line}`),
    '  out.pos = pos;',
    '  return -1;',
    '};',
  ].join('\n');
  return { source, tables, fallbacks };
}

/**
 * Compiles the generated writer for `plan`, writing into `out` with message values from `row`;
 * `fallbacks[i]` is column i's closure writer (nullable marker included).
 */
export function compileRowWriter(
  plan: ColumnPlan,
  out: BinaryOutput,
  row: RowContext,
  fallbacks: readonly ColumnWrite[],
): GeneratedRowWrite {
  const { source, tables } = buildRowWriterSource(plan);
  // The source holds only this file's templates, column positions and checked integers (see above).
  const factory = new Function(
    'out',
    'row',
    'tables',
    'fallbacks',
    'ipv4Value',
    'writeIpv6Bytes',
    'put',
    source,
  ) as (...args: unknown[]) => GeneratedRowWrite;
  return factory(out, row, tables, fallbacks, ipv4Value, writeIpv6Bytes, PUT);
}
