/**
 * The parser's side of the configuration contract: which column sources `parser.requiredFields`
 * may name, which columns a declarative mapping may fill, and the declarative format settings.
 * The operator enumerates these in the CRD (admission); the worker compiles them into parsers.
 */

/** The connection fields (addresses, ports, NAT, protocol, verdict, volume, rule) every parser may fill. */
const CONNECTION_FIELDS = [
  'src_ip',
  'dst_ip',
  'src_port',
  'dst_port',
  'nat_src_ip',
  'nat_dst_ip',
  'nat_src_port',
  'nat_dst_port',
  'proto',
  'action',
  'bytes',
  'rule',
] as const;

/** Column sources `parser.requiredFields` may name (the worker checks each one per line). */
export const REQUIRABLE_SOURCES = [
  'timestamp',
  'device',
  ...CONNECTION_FIELDS,
  'severity',
  'message',
] as const;
/** A source that can be required. */
export type RequirableSource = (typeof REQUIRABLE_SOURCES)[number];

/** Columns a declarative mapping (kv, csv, structured data) may fill. */
export const MAPPABLE_COLUMNS = ['timestamp', ...CONNECTION_FIELDS, 'device', 'message', 'severity'] as const;
/** A column a declarative mapping may fill. */
export type MappableColumn = (typeof MAPPABLE_COLUMNS)[number];

/** `kv` format settings (spec.parser.kv). */
export interface KvFormat {
  pairDelimiter?: string;
  keyValueDelimiter?: string;
  /** Quote character; '' for none. Default `"`. */
  quote?: string;
  fields: Record<string, string[]>;
  actions?: Record<string, string>;
}

/** `csv` format settings (spec.parser.csv). */
export interface CsvFormat {
  delimiter?: string;
  quote?: string;
  fields?: Record<string, number>;
  /** Position whose value selects one of `layouts` (which then replaces `fields`). */
  layoutField?: number;
  layouts?: Record<string, Record<string, number>>;
  actions?: Record<string, string>;
}

/** `structuredData` format settings (spec.parser.structuredData). */
export interface SdFormat {
  sdId: string;
  fields: Record<string, string[]>;
  actions?: Record<string, string>;
}
