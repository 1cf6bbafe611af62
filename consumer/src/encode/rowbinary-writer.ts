/**
 * Writes parsed records as RowBinary rows following a column plan: the same values, validations and
 * dead-letter decisions as TsvRowWriter (a row whose value does not fit its column is rolled back
 * and reported as `bad_value:<column>`), but each value in ClickHouse's binary form, so the server
 * parses nothing as text. Absent values are NULL in Nullable columns and the type default
 * otherwise; a clock column without a value gets the batch's ingest time.
 *
 * The plan is compiled once (column-sources.ts) into one writer per column, built for exactly
 * that column's type by RowBinaryEmitter (rowbinary-emitter.ts, which also documents the byte
 * format per type); rowbinary-codegen.ts then generates one straight-line row writer for the plan
 * that inlines the common columns and calls those writers for the rest.
 */
import type { ParseContext } from '../parse/context';
import type { ParsedRecord } from '../parse/record';
import type { TimeZone } from '../parse/timezone';
import { BinaryOutput } from './binary-output';
import { ColumnPlan, PlannedColumn, S_STATIC } from './column-plan';
import { ColumnWrite, compileColumnWriters, RowContext } from './column-sources';
import { compileRowWriter, GeneratedRowWrite } from './rowbinary-codegen';
import { RowBinaryEmitter } from './rowbinary-emitter';

/** The generated writer, or null where the host forbids code generation (the loop is used then). */
function generatedWriter(
  plan: ColumnPlan,
  out: BinaryOutput,
  row: RowContext,
  writers: readonly ColumnWrite[],
): GeneratedRowWrite | null {
  if (plan.columns.length === 0) return null;
  try {
    return compileRowWriter(plan, out, row, writers);
  } catch (err) {
    if (err instanceof EvalError) return null;
    throw err;
  }
}

/** Appends RowBinary rows for one column plan into a reused BinaryOutput. */
export class RowBinaryRowWriter {
  readonly out: BinaryOutput;
  /** Message-level values of the rows being written (set by the encoder). */
  readonly row = new RowContext();
  private readonly ctx: ParseContext;
  private readonly emitter: RowBinaryEmitter;
  private readonly writers: ColumnWrite[];
  private readonly badValues: string[];
  /** The plan's generated row writer (rowbinary-codegen.ts); null: the closure loop writes rows. */
  private readonly generated: GeneratedRowWrite | null;

  /** `generate`: false keeps the closure loop (tests compare both; hosts that forbid code generation). */
  constructor(plan: ColumnPlan, tz: TimeZone, initialBytes = 1 << 20, generate = true) {
    this.out = new BinaryOutput(initialBytes);
    this.ctx = { tz, refMs: 0 };
    this.emitter = new RowBinaryEmitter(this.out, this.row, this.ctx);
    const em = this.emitter;
    this.writers = compileColumnWriters(plan, em, this.row).map((w, i) => {
      const col = plan.columns[i];
      return col.type.nullable && col.source !== S_STATIC ? em.nullable(w) : w;
    });
    this.badValues = plan.columns.map((c) => c.badValue);
    this.generated = generate ? generatedWriter(plan, this.out, this.row, this.writers) : null;
  }

  /** Appends one row; returns null, or `bad_value:<column>` after rolling the row back. */
  writeRow(rec: ParsedRecord): string | null {
    const out = this.out;
    const start = out.pos;
    this.ctx.refMs = this.row.ingestTimeMs;
    if (this.generated !== null) {
      const bad = this.generated(rec);
      if (bad >= 0) {
        out.pos = start;
        return this.badValues[bad];
      }
      out.commitRow(start);
      return null;
    }
    const writers = this.writers;
    for (let i = 0; i < writers.length; i++) {
      if (!writers[i](rec)) {
        out.pos = start;
        return this.badValues[i];
      }
    }
    out.commitRow(start);
    return null;
  }

  /** Encodes one static value (nullable marker included) for the plan; null when it does not fit. */
  encodeStatic(col: PlannedColumn, value: string): Buffer | null {
    const out = this.out;
    out.reset();
    this.emitter.colStart = 0;
    if (col.type.nullable) out.u8(0);
    const bytes = Buffer.from(value, 'utf8');
    if (!this.emitter.text(col)(bytes, 0, bytes.length, false)) return null;
    return Buffer.from(out.buf.subarray(0, out.pos));
  }
}
