/**
 * Schema of the user-defined (declarative) parser formats: spec.parser.kv, .csv, .structuredData
 * and the extra rules `auto` tries first (.rules). The mappings name our columns (checked by the
 * rules in validate-rules-parser.ts) and the vendor's keys, positions or SD-PARAM names.
 */
import { dict, int, list, obj, oneOf, str, type JSONSchemaProps } from './schema-dsl';
import { MAPPABLE_COLUMNS } from '../../../common/src/parser-contract';
import { ACTION_NAMES as ACTIONS } from '../../../common/src/columns/sources';

/** Columns a declarative mapping may fill (the worker's contract). */
export { MAPPABLE_COLUMNS };

const char = (description: string, minLength = 1) => str(description, { minLength, maxLength: 1 });
const vendorKey = str('A vendor key (or SD-PARAM name).', { pattern: '^[^\\s]{1,48}$', maxLength: 48 });
const keyMap = (what: string) =>
  dict(
    `Our column -> the vendor ${what} that carry it (first present wins). Columns: ${MAPPABLE_COLUMNS.join(', ')}.`,
    list('Vendor names, tried in order.', vendorKey, 8, 1),
    MAPPABLE_COLUMNS.length,
  );
const actions = dict(
  'Vendor action word (any case) -> our action; unmapped words fall back to the built-in action words.',
  oneOf('Our action.', ACTIONS),
  64,
);
const positions = (description: string) =>
  dict(description, int('Zero-based column position.', 0, 255), MAPPABLE_COLUMNS.length);

/** spec.parser.kv (a fresh node per use: rules are attached per schema location). */
export const kvSchema = (): JSONSchemaProps =>
  obj('A key/value format of your own (format: kv, or a rule).', {
    pairDelimiter: char('Character between pairs. Default space.'),
    keyValueDelimiter: char('Character between key and value. Default `=`.'),
    quote: char(
      'Quote character of quoted values (backslash escapes inside); empty for none. Default `"`.',
      0,
    ),
    fields: keyMap('keys'),
    actions,
  });

/** spec.parser.csv */
export const csvSchema = (): JSONSchemaProps =>
  obj('A delimited format of your own (format: csv, or a rule).', {
    delimiter: char('Column delimiter. Default `,`.'),
    quote: char('Quote character (a doubled quote inside is one quote); empty for none. Default `"`.', 0),
    fields: positions('Our column -> position, used when no layout applies.'),
    layoutField: int('Position whose value selects one of `layouts`.', 0, 255),
    layouts: dict(
      'Value of the layoutField column -> the positions of that layout (e.g. TRAFFIC, THREAT).',
      positions('Our column -> position in this layout.'),
      16,
    ),
    actions,
  });

/** spec.parser.structuredData */
export const sdSchema = (): JSONSchemaProps =>
  obj(
    'An RFC 5424 structured-data mapping (format: structured-data, or a rule).',
    {
      sdId: str('The SD-ID whose parameters are read, e.g. `acme@32473`.', {
        pattern: '^[!#-<>-\\\\^-~]{1,32}$',
        maxLength: 32,
      }),
      fields: keyMap('SD-PARAM names'),
      actions,
    },
    ['sdId'],
  );

/** spec.parser.rules */
export const rulesSchema: JSONSchemaProps = list(
  'Extra formats `auto` tries first, in order: a kv or csv rule fires on its match (the prefix is skipped), a structuredData rule when the line carries its SD-ID.',
  obj('One rule: exactly one of kv, csv, structuredData.', {
    name: str('A name for the rule (documentation only).', { maxLength: 63 }),
    match: obj('When the rule applies.', {
      prefix: str('The payload (after any syslog header) starts with this text.', {
        minLength: 1,
        maxLength: 64,
      }),
      contains: str('The line contains this text.', { minLength: 1, maxLength: 64 }),
    }),
    kv: kvSchema(),
    csv: csvSchema(),
    structuredData: sdSchema(),
  }),
  16,
);
