/**
 * Cross-field rules of spec.clickhouse.columns that CEL can express, in the shape of validate-rules.ts
 * (which lists them in PIPELINE_RULES). The source list is the worker's (common/src/columns), so a
 * source the worker does not know is refused at admission; type compatibility, which CEL cannot
 * parse, is checked when the operator compiles the worker's column plan (desired/worker-columns.ts).
 */
import { FIELD_PREFIX, SOURCES, STATIC_PREFIX } from '../../../common/src/columns/sources';
import { isKnownSource } from '../../../common/src/columns/column-check';
import type { ColumnSpec } from './types';
import type { PipelineRule } from './validate-rules-define';

const SOURCES_CEL = `[${SOURCES.map((s) => `'${s}'`).join(', ')}]`;

/** The admission message of an unknown column source (also used by the reconciler's check). */
export const UNKNOWN_SOURCE_MESSAGE = `spec.clickhouse.columns[].source must be one of ${SOURCES.join(', ')}, or ${STATIC_PREFIX}<staticField> or ${FIELD_PREFIX}<vendorKey>: the workers fill columns only from these`;

/** Rules on each entry of spec.clickhouse.columns. */
export const COLUMN_RULES: readonly PipelineRule[] = [
  {
    id: 'column-source-known',
    at: 'spec.clickhouse.columns[]',
    rule: `!has(self.source) || self.source.startsWith('${STATIC_PREFIX}') || self.source.startsWith('${FIELD_PREFIX}') || self.source in ${SOURCES_CEL}`,
    message: UNKNOWN_SOURCE_MESSAGE,
    fieldPath: '.source',
    transition: false,
    holds: (self) => {
      const source = (self as ColumnSpec).source;
      return source === undefined || isKnownSource(source);
    },
    explain: () => UNKNOWN_SOURCE_MESSAGE,
  },
];
