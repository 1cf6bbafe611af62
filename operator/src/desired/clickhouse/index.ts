/** Public surface of the ClickHouse builders (pure: spec in, DDL/plan out). */
export { buildTableDDL, ddlStatements, type DesiredTable, type TableDDL, type TableRole } from './ddl';
export {
  planTableChanges,
  splitEngineFull,
  type ObservedTable,
  type Refusal,
  type TableAction,
  type TablePlan,
} from './plan';
export { buildWorkerColumns, resolveTableSchema, type TableColumn, type TableSchema } from './schema';
export { normalizeColumnType, parseTypeGrammar, renderType, type ChType } from './type-grammar';
export {
  IDENTIFIER_PATTERN,
  SchemaError,
  isIdentifier,
  quoteIdentifier,
  type Result,
} from '../../../../common/src/sql/identifiers';
