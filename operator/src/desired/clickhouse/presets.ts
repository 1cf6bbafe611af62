/**
 * The `firewall` preset: one table shape for every supported vendor format, sized for ISP firewall
 * logs kept two years under Law 5651. Each column names the parser output (`source`) the worker fills
 * it from. Codec choices were measured on 2M synthetic rows stored in the default ORDER BY
 * (src_ip, ts) with ClickHouse 26.x (compressed bytes of the column, lower is better):
 *   ts      DoubleDelta+ZSTD 7.29 MB, Delta+ZSTD 6.02, T64+ZSTD 5.84, Delta+T64+ZSTD 5.25
 *   offset  DoubleDelta+ZSTD 6.83 MB, ZSTD 5.85, T64+ZSTD 5.07, Delta+ZSTD 4.60
 *   bytes   ZSTD 4.83 MB, T64+ZSTD 4.22
 * Inside one src_ip run timestamps are increasing but irregular, so plain Delta beats DoubleDelta
 * (which pays off only for evenly spaced series) and T64 then crops the unused high bits of the deltas.
 */
import type { ColumnSpec, KeyExpression } from '../../api/types';

/** The firewall action values, shared with the parsers' normalisation (0 = unknown/unmapped). */
export const FIREWALL_ACTION_TYPE =
  "Enum8('unknown' = 0, 'allow' = 1, 'deny' = 2, 'drop' = 3, 'reset' = 4, 'close' = 5, 'alert' = 6)";

const TIME = ['Delta(8)', 'T64', 'ZSTD(1)'];
const SMALL_INT = ['T64', 'ZSTD(1)'];
const TEXT = ['ZSTD(1)'];

/**
 * Firewall preset columns in table order. Addresses are IPv6 for both families: an IPv4 address is
 * stored IPv4-mapped (::ffff:a.b.c.d), so one column, one sort key and one skip index serve both and
 * "all records for IP X" is one predicate instead of an OR across two columns.
 */
export const FIREWALL_COLUMNS: readonly Required<Pick<ColumnSpec, 'name' | 'type' | 'source' | 'codec'>>[] = [
  { name: 'ts', type: "DateTime64(3, 'UTC')", source: 'timestamp', codec: TIME },
  // Arrival time at the worker: proves when the operator received the line, independent of device clocks.
  { name: 'ingest_ts', type: "DateTime64(3, 'UTC')", source: 'ingest_time', codec: TIME },
  // LowCardinality: a dictionary per part turns these into small integers before ZSTD sees them.
  { name: 'vendor', type: 'LowCardinality(String)', source: 'vendor', codec: TEXT },
  { name: 'device', type: 'LowCardinality(String)', source: 'device', codec: TEXT },
  // The sort key's first column: long runs of one value, which ZSTD alone folds best.
  { name: 'src_ip', type: 'IPv6', source: 'src_ip', codec: TEXT },
  { name: 'dst_ip', type: 'IPv6', source: 'dst_ip', codec: TEXT },
  // Random-looking ports: T64 gained nothing over ZSTD in measurement, so keep the chain short.
  { name: 'src_port', type: 'UInt16', source: 'src_port', codec: TEXT },
  { name: 'dst_port', type: 'UInt16', source: 'dst_port', codec: TEXT },
  // NAT / CGNAT translation (post-NAT source and destination): an ISP behind carrier-grade NAT
  // answers "who used public address P, port Q at time T" from these. `::` / 0 when not translated.
  { name: 'nat_src_ip', type: 'IPv6', source: 'nat_src_ip', codec: TEXT },
  { name: 'nat_src_port', type: 'UInt16', source: 'nat_src_port', codec: TEXT },
  { name: 'nat_dst_ip', type: 'IPv6', source: 'nat_dst_ip', codec: TEXT },
  { name: 'nat_dst_port', type: 'UInt16', source: 'nat_dst_port', codec: TEXT },
  { name: 'proto', type: 'LowCardinality(String)', source: 'proto', codec: TEXT },
  { name: 'action', type: FIREWALL_ACTION_TYPE, source: 'action', codec: TEXT },
  // Mostly small counters in a 64-bit column: T64 drops the always-zero high bits.
  { name: 'bytes', type: 'UInt64', source: 'bytes', codec: SMALL_INT },
  { name: 'rule', type: 'String', source: 'rule', codec: TEXT },
  { name: 'severity', type: 'LowCardinality(String)', source: 'severity', codec: TEXT },
  // The original line is the legal evidence and most of the bytes; written once, rarely read, so a
  // higher ZSTD level is cheap insurance on storage for two years.
  { name: 'raw', type: 'String', source: 'raw', codec: ['ZSTD(3)'] },
  // Provenance: which Kafka record produced the row (exactly-once audits, re-delivery checks).
  { name: 'kafka_partition', type: 'UInt16', source: 'kafka_partition', codec: TEXT },
  { name: 'kafka_offset', type: 'UInt64', source: 'kafka_offset', codec: ['Delta(8)', 'ZSTD(1)'] },
  // Line index inside a packed message: with partition and offset it names every row exactly
  // (provenance for legal answers) and gives the integrity digest its canonical row order.
  { name: 'kafka_line', type: 'UInt32', source: 'kafka_line', codec: ['T64', 'ZSTD(1)'] },
  // The device that sent the line to the syslog receiver (Law 5651: which device logged); `::` for
  // lines that reached Kafka otherwise. Last, so a table upgraded by ADD COLUMN (which appends) has
  // the same column order as a new one.
  { name: 'sender_ip', type: 'IPv6', source: 'sender_ip', codec: TEXT },
];

/** Default partitioning: one partition per day, so TTL drops and moves whole parts cheaply. */
export const FIREWALL_PARTITION_BY: KeyExpression = { column: 'ts', function: 'toYYYYMMDD' };

/**
 * Default sort key for the legal query "all records for IP X between T1 and T2": the primary index
 * finds the src_ip range, ts narrows it to the window inside each part, and day partitions prune
 * whole days outside [T1, T2].
 */
export const FIREWALL_ORDER_BY: readonly KeyExpression[] = [{ column: 'src_ip' }, { column: 'ts' }];

/**
 * dst_ip cannot also lead the sort key, so a bloom filter per granule (8192 rows, 1% false positives,
 * about 10 KB each) lets the destination side of "IP X" skip granules that never saw X.
 *
 * The CGNAT question names a public address AND port. A CGNAT pool has few public addresses, each
 * in every granule, so a filter on the address alone skips nothing, and a filter over the two
 * columns hashes each separately (measured: 30 of 245 granules read, the port's share). The index
 * is therefore on cityHash64(nat_src_ip, nat_src_port) — one value per (address, port) pair — and
 * `logpipeline query --nat-ip P --nat-port Q` adds the same expression to its WHERE (measured on
 * 2M rows, 64 public addresses: 7 of 245 granules read).
 */
export const FIREWALL_SKIP_INDEXES: readonly {
  name: string;
  column: string;
  /** When set, the index expression is cityHash64 over these columns (column is the first). */
  hashOf?: readonly string[];
  type: string;
  granularity: number;
}[] = [
  { name: 'idx_dst_ip', column: 'dst_ip', type: 'bloom_filter(0.01)', granularity: 1 },
  {
    name: 'idx_nat_src',
    column: 'nat_src_ip',
    hashOf: ['nat_src_ip', 'nat_src_port'],
    type: 'bloom_filter(0.01)',
    granularity: 1,
  },
];
