/**
 * Cross-field rules of the parser section (declarative formats, requiredFields): CEL for admission
 * plus the offline mirror, in the shape of validate-rules.ts (which lists them in PIPELINE_RULES).
 */
import { MAPPABLE_COLUMNS } from './schema-parser-formats';
import type { PipelineRule } from './validate-rules-define';
import type { CsvFormatSpec, KvFormatSpec, ParserRuleSpec, ParserSpec, SdFormatSpec } from './types';

interface Def<T> {
  id: string;
  at: string;
  rule: string;
  message: string;
  fieldPath?: string;
  holds(self: T): boolean;
}

function define<T>(d: Def<T>): PipelineRule {
  return {
    ...d,
    transition: false,
    holds: d.holds as PipelineRule['holds'],
    explain: () => d.message,
  };
}

const COLUMNS_CEL = `[${MAPPABLE_COLUMNS.map((c) => `'${c}'`).join(', ')}]`;
const COLUMNS = new Set<string>(MAPPABLE_COLUMNS);
const onlyColumns = (m: Record<string, unknown> | undefined) =>
  Object.keys(m ?? {}).every((k) => COLUMNS.has(k));
const COLUMN_MESSAGE = `mapped columns must be among ${MAPPABLE_COLUMNS.join(', ')}`;

/** CEL: the key map at `x` (may be absent) names only our columns. */
const columnsCel = (x: string) => `(!has(${x}) || ${x}.all(k, k in ${COLUMNS_CEL}))`;

/** CEL over a kv format at `x`: different delimiters, known columns. */
const kvCel = (x: string) =>
  `(has(${x}.pairDelimiter) ? ${x}.pairDelimiter : ' ') != (has(${x}.keyValueDelimiter) ? ${x}.keyValueDelimiter : '=') && ` +
  columnsCel(`${x}.fields`);

/** CEL over a csv format at `x`. */
const csvCel = (x: string) =>
  `${columnsCel(`${x}.fields`)} && (!has(${x}.layouts) || ${x}.layouts.all(v, ${x}.layouts[v].all(k, k in ${COLUMNS_CEL}))) && ` +
  `(has(${x}.fields) || has(${x}.layouts)) && (!has(${x}.layoutField) || has(${x}.layouts)) && ` +
  `(has(${x}.delimiter) ? ${x}.delimiter : ',') != (has(${x}.quote) ? ${x}.quote : '"')`;

function kvHolds(self: KvFormatSpec): boolean {
  return (self.pairDelimiter ?? ' ') !== (self.keyValueDelimiter ?? '=') && onlyColumns(self.fields);
}

function csvHolds(self: CsvFormatSpec): boolean {
  return (
    onlyColumns(self.fields) &&
    Object.values(self.layouts ?? {}).every((l) => onlyColumns(l)) &&
    (self.fields !== undefined || self.layouts !== undefined) &&
    (self.layoutField === undefined || self.layouts !== undefined) &&
    (self.delimiter ?? ',') !== (self.quote ?? '"')
  );
}

const KV_MESSAGE = `pairDelimiter and keyValueDelimiter must be different characters, and ${COLUMN_MESSAGE}`;
const CSV_MESSAGE = `needs fields or layouts (layoutField needs layouts), a delimiter other than the quote, and ${COLUMN_MESSAGE}`;

/** The parser rules, in the order admission reports them. */
export const PARSER_RULES: readonly PipelineRule[] = [
  define<ParserSpec>({
    id: 'declarative-format-settings',
    at: 'spec.parser',
    rule:
      `!has(self.format) || ((self.format != 'kv' || has(self.kv)) && ` +
      `(self.format != 'csv' || has(self.csv)) && (self.format != 'structured-data' || has(self.structuredData)))`,
    message:
      'spec.parser: format kv needs parser.kv, csv needs parser.csv, structured-data needs parser.structuredData',
    holds: (self) =>
      (self.format !== 'kv' || self.kv !== undefined) &&
      (self.format !== 'csv' || self.csv !== undefined) &&
      (self.format !== 'structured-data' || self.structuredData !== undefined),
  }),
  define<KvFormatSpec>({
    id: 'kv-format',
    at: 'spec.parser.kv',
    rule: kvCel('self'),
    message: `spec.parser.kv: ${KV_MESSAGE}`,
    holds: kvHolds,
  }),
  define<SdFormatSpec>({
    id: 'sd-field-columns',
    at: 'spec.parser.structuredData',
    rule: columnsCel('self.fields'),
    message: `spec.parser.structuredData: ${COLUMN_MESSAGE}`,
    holds: (self) => onlyColumns(self.fields),
  }),
  define<CsvFormatSpec>({
    id: 'csv-format',
    at: 'spec.parser.csv',
    rule: csvCel('self'),
    message: `spec.parser.csv: ${CSV_MESSAGE}`,
    holds: csvHolds,
  }),
  define<ParserRuleSpec>({
    id: 'parser-rule-shape',
    at: 'spec.parser.rules[]',
    rule:
      `(has(self.kv) ? 1 : 0) + (has(self.csv) ? 1 : 0) + (has(self.structuredData) ? 1 : 0) == 1 && ` +
      `(has(self.structuredData) || (has(self.match) && (has(self.match.prefix) || has(self.match.contains)))) && ` +
      `(!has(self.kv) || (${kvCel('self.kv')})) && (!has(self.csv) || (${csvCel('self.csv')})) && ` +
      `(!has(self.structuredData) || ${columnsCel('self.structuredData.fields')})`,
    message:
      'spec.parser.rules[]: each rule needs exactly one of kv, csv, structuredData (kv/csv rules also match.prefix or match.contains), ' +
      `and its format must be valid: kv ${KV_MESSAGE}; csv ${CSV_MESSAGE}`,
    holds: (self) =>
      [self.kv, self.csv, self.structuredData].filter((x) => x !== undefined).length === 1 &&
      (self.structuredData !== undefined || !!self.match?.prefix || !!self.match?.contains) &&
      (self.kv === undefined || kvHolds(self.kv)) &&
      (self.csv === undefined || csvHolds(self.csv)) &&
      (self.structuredData === undefined || onlyColumns(self.structuredData.fields)),
  }),
];
