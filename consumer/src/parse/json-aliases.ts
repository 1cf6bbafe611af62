/**
 * The JSON key aliases of each standard column (exact, case-sensitive, dotted when nested), as a
 * Map for the JSON.parse walk and as a byte-span KeywordTable for the scanner.
 */
import { KeywordTable } from './keywords';

/** Column ids the aliases feed. */
export const C = { TS: 1, DEVICE: 2, SRC: 3, DST: 4, SPORT: 5, DPORT: 6, PROTO: 7, ACTION: 8 } as const;
/** More column ids (split so each table stays small). */
export const C2 = { BYTES: 9, BYTES_PART: 10, RULE: 11, SEVERITY: 12, MESSAGE: 13 } as const;

/** Key names (exact, case-sensitive, dotted when nested) that feed each standard column. */
export const JSON_ALIASES: Record<string, readonly string[]> = {
  timestamp: [
    'timestamp',
    '@timestamp',
    'time',
    'ts',
    'eventtime',
    'event_time',
    'datetime',
    'event.created',
  ],
  device: [
    'device',
    'host',
    'hostname',
    'host.name',
    'host.hostname',
    'observer.name',
    'observer.hostname',
    'devname',
    'device_name',
    'dvchost',
  ],
  src_ip: [
    'src_ip',
    'srcip',
    'src',
    'source.ip',
    'source_ip',
    'sourceAddress',
    'client_ip',
    'clientip',
    'saddr',
    'src_addr',
  ],
  dst_ip: [
    'dst_ip',
    'dstip',
    'dst',
    'destination.ip',
    'dest_ip',
    'destination_ip',
    'destinationAddress',
    'daddr',
    'dst_addr',
  ],
  src_port: ['src_port', 'srcport', 'sport', 'spt', 'source.port', 'source_port', 'sourcePort'],
  dst_port: [
    'dst_port',
    'dstport',
    'dport',
    'dpt',
    'destination.port',
    'dest_port',
    'destination_port',
    'destinationPort',
  ],
  proto: ['proto', 'protocol', 'network.transport', 'transport', 'ip_protocol', 'network.iana_number'],
  action: ['action', 'event.action', 'act', 'disposition', 'deviceAction'],
  bytes: ['bytes', 'network.bytes', 'total_bytes', 'bytes_total'],
  bytes_part: [
    'bytes_sent',
    'bytes_received',
    'sentbyte',
    'rcvdbyte',
    'bytes_in',
    'bytes_out',
    'source.bytes',
    'destination.bytes',
    'bytesIn',
    'bytesOut',
  ],
  rule: [
    'rule',
    'rule.name',
    'rule_name',
    'ruleName',
    'rule.id',
    'policy',
    'policyid',
    'policy_id',
    'policy_name',
  ],
  severity: [
    'severity',
    'level',
    'log.level',
    'syslog.severity',
    'event.severity',
    'log.syslog.severity.code',
  ],
  message: ['message', 'msg', 'event.original'],
};
const COLUMN_OF: Record<string, number> = {
  timestamp: C.TS,
  device: C.DEVICE,
  src_ip: C.SRC,
  dst_ip: C.DST,
  src_port: C.SPORT,
  dst_port: C.DPORT,
  proto: C.PROTO,
  action: C.ACTION,
  bytes: C2.BYTES,
  bytes_part: C2.BYTES_PART,
  rule: C2.RULE,
  severity: C2.SEVERITY,
  message: C2.MESSAGE,
};
/** Dotted key -> column id (C / C2). */
export const ALIASES = new Map<string, number>();
for (const [column, keys] of Object.entries(JSON_ALIASES))
  for (const k of keys) ALIASES.set(k, COLUMN_OF[column]);

/** The aliases as a byte-span table for the scanner. */
export const ALIAS_TABLE = new KeywordTable([...ALIASES]);
