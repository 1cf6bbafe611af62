/**
 * Realistic log line makers per vendor, written from the vendors' documented layouts (FortiOS log
 * reference, PAN-OS syslog field descriptions, Cisco ASA syslog guide, netfilter LOG, ArcSight CEF,
 * RFC 5424/3164). Used by the sample generator, benchmarks and the demo traffic producer.
 */

/** Deterministic PRNG (xorshift32: shifts and xors only, cheap in any runtime) for reproducible traffic. */
export class Rng {
  private state: number;

  /** Seeds the generator (0 is replaced: xorshift needs a non-zero state). */
  constructor(seed: number) {
    this.state = seed >>> 0 || 0x9e3779b9;
  }

  /** Uniform float in [0, 1). */
  next(): number {
    let x = this.state;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.state = x >>> 0;
    return this.state / 4294967296;
  }

  /** Integer in [min, max] (range below 2^31). */
  int(min: number, max: number): number {
    return min + ((this.next() * (max - min + 1)) | 0);
  }

  /** One element of a non-empty list. */
  pick<T>(list: readonly T[]): T {
    return list[(this.next() * list.length) | 0];
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const p2 = (n: number): string => String(n).padStart(2, '0');

/** Civil parts of an epoch ms shifted by `offsetMin` (local wall clock of a device). */
function local(
  ms: number,
  offsetMin: number,
): { y: number; mo: number; d: number; h: string; mi: string; s: string } {
  const t = new Date(ms + offsetMin * 60_000);
  return {
    y: t.getUTCFullYear(),
    mo: t.getUTCMonth() + 1,
    d: t.getUTCDate(),
    h: p2(t.getUTCHours()),
    mi: p2(t.getUTCMinutes()),
    s: p2(t.getUTCSeconds()),
  };
}

/** `Mmm dd hh:mm:ss` (BSD syslog, day space-padded), local to the +03:00 demo devices. */
export function bsdStamp(ms: number, withYear = false): string {
  const l = local(ms, 180);
  const day = String(l.d).padStart(2, ' ');
  return `${MONTHS[l.mo - 1]} ${day}${withYear ? ` ${l.y}` : ''} ${l.h}:${l.mi}:${l.s}`;
}

/** Private IPv4 (inside hosts). */
export function privateIp(r: Rng): string {
  return r.chance(0.5)
    ? `192.168.${r.int(0, 20)}.${r.int(2, 254)}`
    : `10.${r.int(0, 30)}.${r.int(0, 255)}.${r.int(2, 254)}`;
}

/** Public-looking IPv4 (documentation and common service ranges). */
export function publicIp(r: Rng): string {
  return r.pick([
    `93.184.216.${r.int(1, 254)}`,
    `8.8.${r.int(4, 8)}.${r.int(4, 8)}`,
    `142.250.${r.int(0, 255)}.${r.int(1, 254)}`,
    `203.0.113.${r.int(1, 254)}`,
    `198.51.100.${r.int(1, 254)}`,
  ]);
}

/** Global IPv6 in the documentation prefix. */
export function ipv6(r: Rng): string {
  return `2001:db8:${r.int(0, 0xffff).toString(16)}::${r.int(1, 0xffff).toString(16)}`;
}

const SERVICES: Array<[number, string, string]> = [
  [443, 'tcp', 'HTTPS'],
  [80, 'tcp', 'HTTP'],
  [53, 'udp', 'DNS'],
  [22, 'tcp', 'SSH'],
  [123, 'udp', 'NTP'],
  [25, 'tcp', 'SMTP'],
  [3389, 'tcp', 'RDP'],
];

/** FortiOS traffic log (key=value), optionally IPv6 and with a PRI-only or BSD syslog header. */
export function fortigateLine(r: Rng, ms: number): string {
  const l = local(ms, 180);
  const [port, proto, service] = r.pick(SERVICES);
  const v6 = r.chance(0.05);
  const action = r.pick(['close', 'close', 'accept', 'deny', 'timeout', 'server-rst', 'client-rst']);
  const sent = r.int(40, 200_000);
  const rcvd = action === 'deny' ? 0 : r.int(40, 2_000_000);
  const body =
    `date=${l.y}-${p2(l.mo)}-${p2(l.d)} time=${l.h}:${l.mi}:${l.s} devname="FG100F-IST${r.int(1, 4)}" devid="FG100FTK2200${r.int(1000, 9999)}" ` +
    `eventtime=${ms}${String(r.int(0, 999999)).padStart(6, '0')} tz="+0300" logid="0000000013" type="traffic" subtype="forward" level="notice" vd="root" ` +
    `srcip=${v6 ? ipv6(r) : privateIp(r)} srcport=${r.int(1024, 65535)} srcintf="port${r.int(1, 8)}" srcintfrole="lan" ` +
    `dstip=${v6 ? ipv6(r) : publicIp(r)} dstport=${port} dstintf="wan1" dstintfrole="wan" srccountry="Reserved" dstcountry="United States" ` +
    `sessionid=${r.int(1e6, 9e8)} proto=${proto === 'tcp' ? 6 : 17} action="${action}" policyid=${r.int(1, 60)} policytype="policy" ` +
    `poluuid="9a1b2c3d-4e5f-51ee-${r.int(1000, 9999)}-0123456789ab" policyname="LAN-to-WAN-${r.int(1, 9)}" service="${service}" ` +
    `trandisp="snat" transip=203.0.113.${r.int(1, 20)} transport=${r.int(1024, 65535)} appcat="unscanned" duration=${r.int(0, 3600)} ` +
    `sentbyte=${sent} rcvdbyte=${rcvd} sentpkt=${r.int(1, 500)} rcvdpkt=${r.int(0, 900)} vwlid=0 ` +
    `sentdelta=${sent} rcvddelta=${rcvd}`;
  return r.chance(0.5) ? `<189>${body}` : `<189>${bsdStamp(ms)} FG100F-IST1 ${body}`;
}

/** PAN-OS TRAFFIC or THREAT CSV behind a BSD syslog header. */
export function paloAltoLine(r: Rng, ms: number): string {
  const l = local(ms, 180);
  const t = `${l.y}/${p2(l.mo)}/${p2(l.d)} ${l.h}:${l.mi}:${l.s}`;
  const [port, proto] = r.pick(SERVICES);
  const src = privateIp(r);
  const dst = publicIp(r);
  const head = `1,${t},012801096514,`;
  const session = `${t},${src},${dst},203.0.113.7,${dst},Allow-Outbound,corp\\u${r.int(100, 999)},,${r.pick(['ssl', 'web-browsing', 'dns', 'ssh'])},vsys1,trust,untrust,ethernet1/2,ethernet1/1,Forward,${t},${r.int(1e4, 9e5)},1,${r.int(1024, 65535)},${port},${r.int(1024, 65535)},${port},0x400064,${proto}`;
  if (r.chance(0.75)) {
    const action = r.pick(['allow', 'allow', 'allow', 'deny', 'drop', 'reset-both']);
    const sent = r.int(60, 90_000);
    const rcvd = r.int(0, 900_000);
    return `<14>${bsdStamp(ms)} PA-5220 ${head}TRAFFIC,end,2561,${session},${action},${sent + rcvd},${sent},${rcvd},${r.int(2, 900)},${t},${r.int(0, 600)},any,0,${r.int(1e6, 9e9)},0x0,10.0.0.0-10.255.255.255,United States,0,${r.int(1, 400)},${r.int(1, 500)},tcp-fin,0,0,0,0,,PA-5220,from-policy,,,0,,0,,N/A,0,0,0,0`;
  }
  const sev = r.pick(['informational', 'low', 'medium', 'high', 'critical']);
  return `<14>${bsdStamp(ms)} PA-5220 ${head}THREAT,url,2561,${session},${r.pick(['alert', 'block-url', 'reset-both'])},"www.example.com/a,b?q=""x""",Eicar Test File(39040),computer-and-internet-info,${sev},client-to-server,${r.int(1e6, 9e9)},0x2000000000000000,10.0.0.0-10.255.255.255,United States,0,text/html,0,,,1,,,,,,,,0,0,0,0,0,,PA-5220,,,`;
}

/** Cisco ASA connection and deny messages, with or without a syslog header. */
export function asaLine(r: Rng, ms: number): string {
  const id = r.int(10_000, 9_999_999);
  const inside = privateIp(r);
  const outside = publicIp(r);
  const sport = r.int(1024, 65535);
  const [port, proto] = r.pick(SERVICES);
  const P = proto.toUpperCase();
  const msgs = [
    `%ASA-6-${proto === 'tcp' ? 302013 : 302015}: Built outbound ${P} connection ${id} for outside:${outside}/${port} (${outside}/${port}) to inside:${inside}/${sport} (203.0.113.5/${sport})`,
    `%ASA-6-${proto === 'tcp' ? 302014 : 302016}: Teardown ${P} connection ${id} for outside:${outside}/${port} to inside:${inside}/${sport} duration 0:0${r.int(0, 9)}:${p2(r.int(0, 59))} bytes ${r.int(0, 900000)}${proto === 'tcp' ? r.pick([' TCP FINs', ' TCP Reset-O', ' SYN Timeout']) : ''}`,
    `%ASA-4-106023: Deny ${proto} src outside:${outside}/${sport} dst inside:${inside}/${port} by access-group "OUTSIDE_IN" [0x0, 0x0]`,
    `%ASA-4-106100: access-list OUTSIDE_IN ${r.pick(['denied', 'permitted'])} ${proto} outside/${outside}(${sport}) -> inside/${inside}(${port}) hit-cnt 1 first hit [0x91c26a3, 0x0]`,
    `%ASA-2-106001: Inbound TCP connection denied from ${outside}/${sport} to ${inside}/${port} flags SYN  on interface outside`,
    `%ASA-3-710003: TCP access denied by ACL from ${outside}/${sport} to outside:203.0.113.1/${port}`,
  ];
  const msg = r.pick(msgs);
  const form = r.int(0, 2);
  if (form === 0) return `<166>${bsdStamp(ms, true)} asa-edge-1 : ${msg}`;
  if (form === 1) return `<166>${bsdStamp(ms, true)}: ${msg}`;
  return `<166>${bsdStamp(ms)} asa-edge-2 ${msg}`;
}

/** netfilter LOG line (UFW or custom prefix) behind a kernel syslog header. */
export function iptablesLine(r: Rng, ms: number): string {
  const prefix = r.pick(['[UFW BLOCK] ', '[UFW ALLOW] ', '[UFW AUDIT] ', 'IPTABLES-DROP: ', 'FW-REJECT ']);
  const v6 = r.chance(0.1);
  const [port, proto] = r.pick(SERVICES);
  const addr = v6
    ? `SRC=${ipv6(r)} DST=${ipv6(r)} LEN=${r.int(60, 1500)} TC=0 HOPLIMIT=${r.int(30, 64)} FLOWLBL=${r.int(0, 99999)}`
    : `SRC=${publicIp(r)} DST=${privateIp(r)} LEN=${r.int(40, 1500)} TOS=0x00 PREC=0x00 TTL=${r.int(30, 64)} ID=${r.int(0, 65535)} DF`;
  const tail =
    proto === 'tcp'
      ? `PROTO=TCP SPT=${r.int(1024, 65535)} DPT=${port} WINDOW=${r.int(1000, 65535)} RES=0x00 SYN URGP=0`
      : `PROTO=UDP SPT=${r.int(1024, 65535)} DPT=${port} LEN=${r.int(8, 512)}`;
  return `<4>${bsdStamp(ms)} edge-gw kernel: [${r.int(1000, 999999)}.${r.int(100000, 999999)}] ${prefix}IN=eth0 OUT= MAC=52:54:00:12:34:56:52:54:00:65:43:21:08:00 ${addr} ${tail}`;
}

/** CEF events from a few vendors, with escapes in header and extension. */
export function cefLine(r: Rng, ms: number): string {
  const [port, proto] = r.pick(SERVICES);
  const vendor = r.pick([
    'Check Point|VPN-1 & FireWall-1|R81',
    'Fortinet|Fortigate|v7.2.5',
    'Trend Micro|Deep Security Agent|20.0',
    'Acme\\|Corp|Edge\\\\FW|1.0',
  ]);
  const act = r.pick(['accept', 'drop', 'reject', 'blocked', 'alert']);
  const ext = `rt=${ms} src=${privateIp(r)} spt=${r.int(1024, 65535)} dst=${publicIp(r)} dpt=${port} proto=${proto.toUpperCase()} act=${act} in=${r.int(0, 90000)} out=${r.int(0, 90000)} dvchost=cp-gw-${r.int(1, 3)} cs1Label=Rule Name cs1=Rule ${r.int(1, 40)} msg=Connection ${act}ed\\=ok path C:\\\\temp`;
  return `<134>${bsdStamp(ms)} cef-relay CEF:0|${vendor}|${r.int(100, 999)}|${r.pick(['Accept', 'Drop', 'Port scan'])}|${r.int(0, 10)}|${ext}`;
}

/** ECS-style or flat JSON object. */
export function jsonLine(r: Rng, ms: number): string {
  const [port, proto] = r.pick(SERVICES);
  if (r.chance(0.5)) {
    return JSON.stringify({
      '@timestamp': new Date(ms).toISOString(),
      source: { ip: privateIp(r), port: r.int(1024, 65535), bytes: r.int(0, 9000) },
      destination: { ip: publicIp(r), port, bytes: r.int(0, 90000) },
      network: { transport: proto },
      event: { action: r.pick(['allow', 'deny', 'drop']) },
      observer: { name: 'k8s-netpol' },
      message: 'flow "record" \t tab',
    });
  }
  return JSON.stringify({
    time: Math.floor(ms / 1000),
    srcip: privateIp(r),
    dstip: r.chance(0.1) ? ipv6(r) : publicIp(r),
    sport: r.int(1024, 65535),
    dport: port,
    proto,
    action: r.pick(['accept', 'reject']),
    bytes: r.int(0, 90000),
    rule: `r${r.int(1, 9)}`,
    level: 'info',
    host: 'edge-proxy',
    msg: 'Ünïcödé ✓',
  });
}

/** RFC 5424 with structured data, sometimes a BOM. */
export function rfc5424Line(r: Rng, ms: number): string {
  const iso = new Date(ms).toISOString();
  const sd = r.chance(0.7)
    ? `[conn@32473 src="${privateIp(r)}" dst="${publicIp(r)}" note="a \\"quoted\\" \\] value"][meta sequenceId="${r.int(1, 1e6)}"]`
    : '-';
  return `<${r.int(128, 191)}>1 ${iso} app-${r.int(1, 5)}.example.com ${r.pick(['nginx', 'sshd', 'radius'])} ${r.int(100, 9999)} ${r.pick(['ID47', '-'])} ${sd} ${r.chance(0.3) ? '\ufeff' : ''}User login accepted for user${r.int(1, 99)}`;
}

/** RFC 3164 / BSD generic lines. */
export function rfc3164Line(r: Rng, ms: number): string {
  return `<${r.int(0, 191)}>${bsdStamp(ms)} host-${r.int(1, 9)} ${r.pick(['sshd', 'CRON', 'systemd'])}[${r.int(100, 99999)}]: ${r.pick(['Accepted publickey for deploy from 10.0.0.5 port 51234 ssh2', 'pam_unix(cron:session): session opened for user root', 'Started Daily apt upgrade and clean activities.'])}`;
}
