/**
 * One RowBinary row writer generated per column plan: the plan is fixed for the life of a
 * pipeline (which columns, which types, in which order), so a row is written by straight-line
 * code — one block per column, each read of the record and each byte write specialised for that
 * column's source and type, the output position in a local, room checked once per row and once
 * per String — instead of a loop over per-column closures. Those closures share their call sites'
 * feedback across all columns, so V8 inlined none of them; the generated function has its own.
 *
 * Safety: the source text is assembled only from fixed templates (this file and
 * rowbinary-templates.ts), column positions, and numbers computed from parsed types (byte widths,
 * integer bounds, time scales), each checked to be a finite number printed as a numeric literal.
 * Nothing from a LogPipeline — column names, type strings, sources, static values, `field:` keys —
 * ever reaches the source; values a column needs at run time (enum value tables, name tables,
 * vendor allow-lists) are passed in as arrays indexed by column position. Columns without a
 * template (sender header, `static:`, `field:`, text into typed columns, protocol enums) call the
 * column's compiled closure writer (column-sources.ts), so every plan that compiles is written
 * exactly as before.
 */
import { ipv4Value, writeIpv6Bytes } from '../../../common/src/integrity/canonical-ip';
import { T_ENUM, T_INT, T_STRING } from '../../../common/src/columns/column-type';
import type { ParsedRecord } from '../parse/record';
import type { BinaryOutput } from './binary-output';
import {
  addressCode,
  enumValueOf,
  fixedBytes,
  namedCode,
  num,
  numberCode,
  optional,
  roomFor,
  stringCode,
  timeCode,
} from './rowbinary-templates';
import {
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
