/**
 * PAN-OS syslog column layouts (PAN-OS 10.x/11.x "Syslog Field Descriptions"): the field name of
 * every CSV position for TRAFFIC and THREAT logs, and which positions feed the standard columns.
 * `FUTURE_USE` positions have no name and are skipped. Positions past the end of a table (newer
 * PAN-OS releases append columns) are kept only in `raw`.
 */
import { staticKey } from './record';

/** Roles of CSV positions that feed standard columns. */
export const R = {
  NONE: 0,
  TIME: 1,
  SERIAL: 2,
  SRC: 3,
  DST: 4,
  RULE: 5,
  SPORT: 6,
  DPORT: 7,
  PROTO: 8,
  ACTION: 9,
  BYTES: 10,
  SEVERITY: 11,
  MESSAGE: 12,
  DEVICE: 13,
  NAT_SRC: 14,
  NAT_DST: 15,
  NAT_SPORT: 16,
  NAT_DPORT: 17,
} as const;

/** One log type's layout: names, static key ids (-1 = unnamed) and roles by position. */
export interface PanLayout {
  names: readonly string[];
  keys: Int32Array;
  roles: Uint8Array;
}

const COMMON_NAMES = [
  '', // FUTURE_USE
  'receive_time',
  'serial',
  'type',
  'subtype',
  '', // FUTURE_USE
  'time_generated',
];

const SESSION_NAMES = [
  ...COMMON_NAMES,
  'src',
  'dst',
  'natsrc',
  'natdst',
  'rule',
  'srcuser',
  'dstuser',
  'app',
  'vsys',
  'from',
  'to',
  'inbound_if',
  'outbound_if',
  'logset',
  '', // FUTURE_USE
  'sessionid',
  'repeatcnt',
  'sport',
  'dport',
  'natsport',
  'natdport',
  'flags',
  'proto',
  'action',
];

const TRAFFIC_NAMES = [
  ...SESSION_NAMES,
  ...['bytes', 'bytes_sent', 'bytes_received', 'packets', 'start', 'elapsed', 'category', ''],
  ...['seqno', 'actionflags', 'srcloc', 'dstloc', '', 'pkts_sent', 'pkts_received', 'session_end_reason'],
  ...['dg_hier_level_1', 'dg_hier_level_2', 'dg_hier_level_3', 'dg_hier_level_4', 'vsys_name', 'device_name'],
  ...['action_source', 'src_uuid', 'dst_uuid', 'tunnelid', 'monitortag', 'parent_session_id'],
  ...['parent_start_time', 'tunnel', 'assoc_id', 'chunks', 'chunks_sent', 'chunks_received', 'rule_uuid'],
];

const THREAT_NAMES = [
  ...SESSION_NAMES,
  ...[
    'misc',
    'threatid',
    'category',
    'severity',
    'direction',
    'seqno',
    'actionflags',
    'srcloc',
    'dstloc',
    '',
  ],
  ...['contenttype', 'pcap_id', 'filedigest', 'cloud', 'url_idx', 'user_agent', 'filetype', 'xff', 'referer'],
  ...['sender', 'subject', 'recipient', 'reportid', 'dg_hier_level_1', 'dg_hier_level_2', 'dg_hier_level_3'],
  ...['dg_hier_level_4', 'vsys_name', 'device_name', '', 'src_uuid', 'dst_uuid'],
];

const ROLE_BY_NAME: Record<string, number> = {
  time_generated: R.TIME,
  serial: R.SERIAL,
  src: R.SRC,
  dst: R.DST,
  rule: R.RULE,
  sport: R.SPORT,
  dport: R.DPORT,
  proto: R.PROTO,
  action: R.ACTION,
  bytes: R.BYTES,
  severity: R.SEVERITY,
  threatid: R.MESSAGE,
  device_name: R.DEVICE,
  natsrc: R.NAT_SRC,
  natdst: R.NAT_DST,
  natsport: R.NAT_SPORT,
  natdport: R.NAT_DPORT,
};

function layout(names: string[]): PanLayout {
  const keys = new Int32Array(names.length);
  const roles = new Uint8Array(names.length);
  names.forEach((name, i) => {
    keys[i] = name === '' ? -1 : staticKey(name);
    roles[i] = ROLE_BY_NAME[name] ?? R.NONE;
  });
  return { names, keys, roles };
}

/** Leading columns shared by every PAN-OS log type. */
export const PAN_COMMON = layout(COMMON_NAMES);
/** TRAFFIC log layout. */
export const PAN_TRAFFIC = layout(TRAFFIC_NAMES);
/** THREAT log layout. */
export const PAN_THREAT = layout(THREAT_NAMES);
