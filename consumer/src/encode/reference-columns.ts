/**
 * A reference column plan covering every standard source with the types a firewall table uses.
 * The benchmark and the engine round-trip test encode against it; the operator's presets may
 * differ (any plan that compiles is supported).
 */
import type { ColumnInput } from './column-plan';

/** Enum8 type of the normalised action column. */
export const ACTION_ENUM =
  "Enum8('unknown' = 0, 'allow' = 1, 'deny' = 2, 'drop' = 3, 'reset' = 4, 'close' = 5, 'alert' = 6)";

/** Every standard source once, as a firewall log table would store it. */
export const REFERENCE_COLUMNS: readonly ColumnInput[] = [
  { name: 'ts', type: "DateTime64(3, 'UTC')", source: 'timestamp' },
  { name: 'ingest_time', type: "DateTime64(3, 'UTC')", source: 'ingest_time' },
  { name: 'vendor', type: 'LowCardinality(String)', source: 'vendor' },
  { name: 'device', type: 'LowCardinality(String)', source: 'device' },
  { name: 'src_ip', type: 'IPv6', source: 'src_ip' },
  { name: 'dst_ip', type: 'IPv6', source: 'dst_ip' },
  { name: 'src_port', type: 'Nullable(UInt16)', source: 'src_port' },
  { name: 'dst_port', type: 'Nullable(UInt16)', source: 'dst_port' },
  { name: 'nat_src_ip', type: 'Nullable(IPv6)', source: 'nat_src_ip' },
  { name: 'nat_src_port', type: 'Nullable(UInt16)', source: 'nat_src_port' },
  { name: 'nat_dst_ip', type: 'Nullable(IPv6)', source: 'nat_dst_ip' },
  { name: 'nat_dst_port', type: 'Nullable(UInt16)', source: 'nat_dst_port' },
  { name: 'proto', type: 'LowCardinality(String)', source: 'proto' },
  { name: 'action', type: ACTION_ENUM, source: 'action' },
  { name: 'bytes', type: 'Nullable(UInt64)', source: 'bytes' },
  { name: 'rule', type: 'LowCardinality(String)', source: 'rule' },
  { name: 'severity', type: 'Nullable(UInt8)', source: 'severity' },
  { name: 'message', type: 'String', source: 'message' },
  { name: 'raw', type: 'String', source: 'raw' },
  { name: 'kafka_topic', type: 'LowCardinality(String)', source: 'kafka_topic' },
  { name: 'kafka_partition', type: 'UInt16', source: 'kafka_partition' },
  { name: 'kafka_offset', type: 'UInt64', source: 'kafka_offset' },
];
