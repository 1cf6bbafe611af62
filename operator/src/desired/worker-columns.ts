/**
 * The worker's column plan, compiled by the operator before any worker runs: the columns the worker
 * will receive go through the same check the worker runs at startup (common/src/columns), so an
 * unknown source or a type the source cannot be written into is a terminal condition and a
 * `logpipeline plan` error naming the field, never a crash-looping worker.
 */
import { checkColumns } from '../../../common/src/columns/column-check';
import { SchemaError } from '../../../common/src/sql/identifiers';
import type { WorkerColumn } from '../../../common/src/worker-config';
import type { ResolvedSpec } from '../api/defaults';

/** Condition reason of a column list the worker cannot write. */
export const INVALID_COLUMNS = 'InvalidColumns';

/**
 * Every problem of the worker's `columns` as `<field>: <reason>`; the field is the user's
 * `spec.clickhouse.columns[i].<field>`, or the preset column's name for the operator's own columns.
 */
export function workerColumnProblems(spec: ResolvedSpec, columns: readonly WorkerColumn[]): string[] {
  const declared = spec.clickhouse.columns;
  return checkColumns(columns, spec.parser.staticFields).map((p) => {
    const name = columns[p.index].name;
    const i = declared.findIndex((c) => c.name === name);
    const field =
      i >= 0 ? `spec.clickhouse.columns[${i}].${p.field}` : `${spec.clickhouse.preset} preset column ${name}`;
    return `${field}: ${p.message}`;
  });
}

/** Throws SchemaError(InvalidColumns) naming every field the worker could not write. */
export function checkWorkerColumns(spec: ResolvedSpec, columns: readonly WorkerColumn[]): void {
  const problems = workerColumnProblems(spec, columns);
  if (problems.length > 0) throw new SchemaError(INVALID_COLUMNS, problems.join('; '));
}
