/**
 * The names both sides of the column contract agree on: the standard column sources the worker
 * fills, and the text values it writes for actions, severities and vendors. The operator enumerates
 * the sources in the CRD (admission) and checks columns with them; the worker compiles its plan.
 */

/** Standard column sources: parser outputs and enrichment (besides `static:<name>` and `field:<key>`). */
export const SOURCES = [
  'timestamp',
  'vendor',
  'device',
  'src_ip',
  'dst_ip',
  'src_port',
  'dst_port',
  'proto',
  'action',
  'bytes',
  'rule',
  'severity',
  'message',
  'raw',
  'ingest_time',
  'kafka_topic',
  'kafka_partition',
  'kafka_offset',
  'kafka_line',
  'nat_src_ip',
  'nat_dst_ip',
  'nat_src_port',
  'nat_dst_port',
  // The device that sent the line to the syslog receiver (its Kafka header; empty without one).
  'sender_ip',
] as const;

/** A standard column source. */
export type StandardSource = (typeof SOURCES)[number];

/** Prefix of a source that writes a value of spec.parser.staticFields. */
export const STATIC_PREFIX = 'static:';
/** Prefix of a source that writes a vendor key the parser collected. */
export const FIELD_PREFIX = 'field:';

/** Sources holding numbers (integer or String columns). */
export const NUMERIC_SOURCES: ReadonlySet<string> = new Set<StandardSource>([
  'src_port',
  'dst_port',
  'bytes',
  'kafka_partition',
  'kafka_offset',
  'kafka_line',
  'nat_src_port',
  'nat_dst_port',
]);
/** Sources holding IP addresses. */
export const ADDRESS_SOURCES: ReadonlySet<string> = new Set<StandardSource>([
  'src_ip',
  'dst_ip',
  'nat_src_ip',
  'nat_dst_ip',
  'sender_ip',
]);
/** Sources holding instants (epoch milliseconds). */
export const TIME_SOURCES: ReadonlySet<string> = new Set<StandardSource>(['timestamp', 'ingest_time']);
/** Text sources that may hold an address (written into IPv4/IPv6 columns when they parse as one). */
export const ADDRESS_TEXT_SOURCES: ReadonlySet<string> = new Set<StandardSource>([
  'device',
  'message',
  'rule',
]);

/** Action names indexed by action number, as written into String and Enum columns. */
export const ACTION_NAMES = ['unknown', 'allow', 'deny', 'drop', 'reset', 'close', 'alert'] as const;

/** Syslog severity keywords (RFC 5424 table 2) indexed by severity number 0..7. */
export const SEVERITY_NAMES = [
  'emergency',
  'alert',
  'critical',
  'error',
  'warning',
  'notice',
  'informational',
  'debug',
] as const;

/** Native format names; the `vendor` column is the name of the format that parsed the payload. */
export const FORMAT_NAMES = [
  'rfc5424',
  'rfc3164',
  'fortigate',
  'paloalto',
  'cisco-asa',
  'iptables',
  'cef',
  'json',
  'pfsense',
  'juniper-srx',
  'huawei-usg',
  'sophos',
  'sonicwall',
  'checkpoint',
  'mikrotik',
] as const;
/** User-defined (declarative) formats; their ids follow the native ones. */
export const DECLARATIVE_FORMAT_NAMES = ['kv', 'csv', 'structured-data'] as const;
/** Every name the `vendor` column can hold, indexed by format id. */
export const VENDOR_NAMES: readonly string[] = [...FORMAT_NAMES, ...DECLARATIVE_FORMAT_NAMES];
