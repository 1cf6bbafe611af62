/**
 * Sample line makers for the second wave of vendors, written from each vendor's published layout:
 * Netgate's "Raw Filter Log Format" (pfSense/OPNsense filterlog), Junos RT_FLOW system log messages
 * (structured-data and text), Huawei USG information-center logs, Sophos Firewall log field lists
 * (SFOS 19 and 20), SonicOS log event reference, Check Point Log Exporter syslog and RouterOS
 * firewall logging. Deterministic from the Rng; used by benchmarks, the fuzz test and detection tests.
 */
import { bsdStamp, ipv6, privateIp, publicIp, Rng } from './sample-formats';

const p2 = (n: number): string => String(n).padStart(2, '0');
const SERVICES: Array<[number, number, string]> = [
  [443, 6, 'https'],
  [80, 6, 'http'],
  [53, 17, 'dns'],
  [22, 6, 'ssh'],
  [123, 17, 'ntp'],
];

/** RFC 3339 stamp in the +03:00 device zone. */
function iso(ms: number): string {
  const t = new Date(ms + 3 * 3600_000);
  return `${t.toISOString().slice(0, 23)}+03:00`;
}

/** Local civil date/time parts in +03:00. */
function civil(ms: number): { date: string; slashDate: string; time: string } {
  const t = new Date(ms + 3 * 3600_000);
  const y = t.getUTCFullYear();
  const mo = t.getUTCMonth() + 1;
  const d = t.getUTCDate();
  return {
    date: `${y}-${p2(mo)}-${p2(d)}`,
    slashDate: `${y}/${mo}/${d}`,
    time: `${p2(t.getUTCHours())}:${p2(t.getUTCMinutes())}:${p2(t.getUTCSeconds())}`,
  };
}

function natIp(r: Rng): string {
  return `100.64.${r.int(0, 63)}.${r.int(1, 254)}`;
}

/** pfSense/OPNsense filterlog: IPv4 TCP/UDP/ICMP and IPv6 TCP/UDP, BSD or RFC 5424 envelope. */
export function pfsenseLine(r: Rng, ms: number): string {
  const [port, protoId, name] = r.pick(SERVICES);
  const proto = protoId === 6 ? 'tcp' : 'udp';
  const action = r.pick(['pass', 'pass', 'block']);
  const dir = r.pick(['in', 'out']);
  const head = `${r.int(1, 120)},,,${1000000000 + r.int(100, 999)},${r.pick(['igb0', 'igb1', 'vtnet0'])},match,${action},${dir}`;
  const sport = r.int(1024, 65535);
  const l4 =
    protoId === 6
      ? `${sport},${port},0,S,${r.int(1, 4e9)},,64240,,mss;sackOK;TS;nop;wscale`
      : `${sport},${port},${r.int(20, 512)}`;
  let csv: string;
  const pick = r.int(0, 9);
  if (pick === 0) {
    csv = `${head},4,0x0,,64,${r.int(1, 65535)},0,none,1,icmp,84,${privateIp(r)},${publicIp(r)},request,${r.int(1, 65535)},${r.int(1, 99)}`;
  } else if (pick === 1) {
    csv = `${head},6,0x00,0x00000,64,${proto},${protoId},${r.int(60, 1500)},${ipv6(r)},${ipv6(r)},${l4}`;
  } else {
    csv = `${head},4,0x0,,64,${r.int(1, 65535)},0,DF,${protoId},${proto},${r.int(40, 1500)},${privateIp(r)},${publicIp(r)},${l4}`;
  }
  void name;
  return r.chance(0.5)
    ? `<134>${bsdStamp(ms)} filterlog[${r.int(100, 99999)}]: ${csv}`
    : `<134>1 ${iso(ms)} fw.example.net filterlog ${r.int(100, 99999)} - [meta sequenceId="${r.int(1, 1e6)}"] ${csv}`;
}

/** Juniper SRX RT_FLOW session create/close/deny, structured data or text. */
export function juniperLine(r: Rng, ms: number): string {
  const [port, protoId, name] = r.pick(SERVICES);
  const v6 = r.chance(0.1);
  const src = v6 ? ipv6(r) : privateIp(r);
  const dst = v6 ? ipv6(r) : publicIp(r);
  const sport = r.int(1024, 65535);
  const nsrc = v6 ? src : natIp(r);
  const nport = v6 ? sport : r.int(1024, 65535);
  const event = r.pick(['CREATE', 'CLOSE', 'CLOSE', 'DENY']);
  const policy = `pol-${r.int(1, 40)}`;
  const session = r.int(1, 9e6);
  if (r.chance(0.5)) {
    const common =
      `source-address="${src}" source-port="${sport}" destination-address="${dst}" destination-port="${port}" ` +
      `connection-tag="0" service-name="junos-${name}"`;
    const nat =
      `nat-source-address="${nsrc}" nat-source-port="${nport}" nat-destination-address="${dst}" nat-destination-port="${port}" ` +
      `nat-connection-tag="0" src-nat-rule-type="source rule" src-nat-rule-name="cgnat-1" dst-nat-rule-type="N/A" dst-nat-rule-name="N/A"`;
    const tail = `protocol-id="${protoId}" policy-name="${policy}" source-zone-name="trust" destination-zone-name="untrust" session-id-32="${session}"`;
    const sd =
      event === 'DENY'
        ? `${common} protocol-id="${protoId}" icmp-type="0" policy-name="${policy}" source-zone-name="trust" destination-zone-name="untrust" application="UNKNOWN" nested-application="UNKNOWN" username="N/A" roles="N/A" packet-incoming-interface="ge-0/0/1.0" encrypted="No" reason="policy deny"`
        : event === 'CREATE'
          ? `${common} ${nat} ${tail} username="N/A" roles="N/A" packet-incoming-interface="ge-0/0/1.0" application="UNKNOWN" nested-application="UNKNOWN" encrypted="UNKNOWN"`
          : `reason="TCP FIN" ${common} ${nat} ${tail} packets-from-client="${r.int(1, 99)}" bytes-from-client="${r.int(60, 9e5)}" packets-from-server="${r.int(0, 99)}" bytes-from-server="${r.int(0, 9e6)}" elapsed-time="${r.int(0, 600)}" application="UNKNOWN" nested-application="UNKNOWN" username="N/A" roles="N/A" packet-incoming-interface="ge-0/0/1.0" encrypted="UNKNOWN"`;
    return `<14>1 ${iso(ms)} srx-ist1 RT_FLOW - RT_FLOW_SESSION_${event} [junos@2636.1.1.1.2.40 ${sd}]`;
  }
  const pair = `${src}/${sport}->${dst}/${port}`;
  const natPair = `${nsrc}/${nport}->${dst}/${port}`;
  const text =
    event === 'DENY'
      ? `session denied ${pair} 0x0 junos-${name} ${protoId}(0) ${policy} trust untrust UNKNOWN UNKNOWN N/A(N/A) ge-0/0/1.0 No policy deny`
      : event === 'CREATE'
        ? `session created ${pair} 0x0 junos-${name} ${natPair} 0x0 source rule cgnat-1 N/A N/A ${protoId} ${policy} trust untrust ${session} N/A(N/A) ge-0/0/1.0 UNKNOWN UNKNOWN UNKNOWN`
        : `session closed TCP FIN: ${pair} 0x0 junos-${name} ${natPair} 0x0 source rule cgnat-1 N/A N/A ${protoId} ${policy} trust untrust ${session} ${r.int(1, 99)}(${r.int(60, 9e5)}) ${r.int(0, 99)}(${r.int(0, 9e6)}) ${r.int(0, 600)} UNKNOWN UNKNOWN N/A(N/A) ge-0/0/1.0 UNKNOWN`;
  return `<14>${bsdStamp(ms)} srx-ist1 RT_FLOW: RT_FLOW_SESSION_${event}: ${text}`;
}

/** Huawei USG policy deny/permit and session teardown logs. */
export function huaweiLine(r: Rng, ms: number): string {
  const [port, protoId, name] = r.pick(SERVICES);
  const c = civil(ms);
  const src = r.chance(0.1) ? ipv6(r) : privateIp(r);
  const dst = src.includes(':') ? ipv6(r) : publicIp(r);
  const head = `<188>${bsdStamp(ms, true)} USG6650E`;
  const sport = r.int(1024, 65535);
  if (r.chance(0.5)) {
    const brief = r.pick(['POLICYDENY', 'POLICYPERMIT']);
    const sev = brief === 'POLICYDENY' ? 4 : 6;
    return `${head} %%01SEC/${sev}/${brief}(l)[${r.int(0, 999)}]:vsys=public, protocol=${protoId}, source-ip=${src}, source-port=${sport}, destination-ip=${dst}, destination-port=${port}, time=${c.slashDate} ${c.time}, source-zone=trust, destination-zone=untrust, application-name=${name}, rule-name=rule_${r.int(1, 50)}.`;
  }
  const v = src.includes(':') ? 6 : 4;
  const nat = v === 4 ? natIp(r) : src;
  return `${head} %%01SECLOG/6/SESSION_TEARDOWN(l)[${r.int(0, 999)}]:IPVer=${v},Protocol=${protoId === 6 ? 'tcp' : 'udp'},SourceIP=${src},DestinationIP=${dst},SourcePort=${sport},DestinationPort=${port},SourceNatIP=${nat},SourceNatPort=${r.int(1024, 65535)},DestinationNatIP=${dst},DestinationNatPort=${port},BeginTime=${Math.floor(ms / 1000) - 30},EndTime=${Math.floor(ms / 1000)},SendPkts=${r.int(1, 99)},SendBytes=${r.int(60, 9e5)},RcvPkts=${r.int(0, 99)},RcvBytes=${r.int(0, 9e6)},SourceVpnID=0,DestinationVpnID=0,SourceZone=trust,DestinationZone=untrust,PolicyName=rule_${r.int(1, 50)},CloseReason=tcp-fin.`;
}

/** Sophos Firewall: SFOS 19 (date/time, tran_*) and SFOS 20 (timestamp, *_trans_*) layouts. */
export function sophosLine(r: Rng, ms: number): string {
  const [port, protoId] = r.pick(SERVICES);
  const proto = protoId === 6 ? 'TCP' : 'UDP';
  const c = civil(ms);
  const v6 = r.chance(0.1);
  const src = v6 ? ipv6(r) : privateIp(r);
  const dst = v6 ? ipv6(r) : publicIp(r);
  const allowed = r.chance(0.8);
  if (r.chance(0.5)) {
    return (
      `<30>device="SFW" date=${c.date} time=${c.time} timezone="+03" device_name="XG310" device_id=C310${r.int(1e5, 9e5)}XY log_id=01010160000${allowed ? 1 : 2} ` +
      `log_type="Firewall" log_component="Firewall Rule" log_subtype="${allowed ? 'Allowed' : 'Denied'}" status="${allowed ? 'Allow' : 'Deny'}" priority=Information ` +
      `duration=${r.int(0, 600)} fw_rule_id=${r.int(1, 60)} policy_type=1 user_name="" user_gp="" iap=0 ips_policy_id=0 appfilter_policy_id=0 application="" ` +
      `in_interface="Port1" out_interface="Port2" src_mac=00:1a:8c:${p2(r.int(10, 99))}:01:02 src_ip=${src} src_country_code= dst_ip=${dst} dst_country_code=USA ` +
      `protocol="${proto}" src_port=${r.int(1024, 65535)} dst_port=${port} sent_pkts=${r.int(1, 99)} recv_pkts=${r.int(0, 99)} sent_bytes=${r.int(60, 9e5)} recv_bytes=${r.int(0, 9e6)} ` +
      `tran_src_ip=${v6 ? '' : natIp(r)} tran_src_port=${v6 ? 0 : r.int(1024, 65535)} tran_dst_ip= tran_dst_port=0 srczonetype="LAN" srczone="LAN" dstzonetype="WAN" dstzone="WAN" con_id=${r.int(1, 9e8)}`
    );
  }
  return (
    `<30>device_name="SFW" timestamp="${c.date}T${c.time}+0300" device_model="XGS2100" device_serial_id="X21${r.int(1e5, 9e5)}" log_id="01010160000${allowed ? 1 : 2}" ` +
    `log_type="Firewall" log_component="Firewall Rule" log_subtype="${allowed ? 'Allowed' : 'Denied'}" log_version=1 severity="Information" fw_rule_id="${r.int(1, 60)}" ` +
    `fw_rule_name="LAN to WAN" fw_rule_section="Local rule" src_ip="${src}" dst_ip="${dst}" protocol="${proto}" src_port="${r.int(1024, 65535)}" dst_port="${port}" ` +
    `bytes_sent="${r.int(60, 9e5)}" bytes_received="${r.int(0, 9e6)}" src_trans_ip="${v6 ? '' : natIp(r)}" src_trans_port="${v6 ? '' : r.int(1024, 65535)}" dst_trans_ip="" dst_trans_port="" ` +
    `src_zone_type="LAN" src_zone="LAN" dst_zone_type="WAN" dst_zone="WAN" con_id="${r.int(1, 9e8)}"`
  );
}

/** SonicOS connection opened/closed/dropped events. */
export function sonicwallLine(r: Rng, ms: number): string {
  const [port, protoId, name] = r.pick(SERVICES);
  const c = civil(ms - 3 * 3600_000);
  const kind = r.pick([
    [98, 'Connection Opened', 'NA'],
    [537, 'Connection Closed', 'NA'],
    [36, 'TCP packet received on non-existent/closed connection; TCP packet dropped', 'drop'],
  ] as const);
  const src = privateIp(r);
  const dst = publicIp(r);
  const sport = r.int(1024, 65535);
  const v6 = r.chance(0.1);
  const endpoints = v6
    ? `src=:${sport}:X0 dst=:${port}:X1 srcV6=${ipv6(r)} dstV6=${ipv6(r)}`
    : `src=${src}:${sport}:X0 dst=${dst}:${port}:X1:${name}.example.com`;
  const nat = v6 ? '' : ` natSrc=${natIp(r)}:${r.int(1024, 65535)} natDst=${dst}:${port}`;
  return (
    `<134>id=firewall sn=0040103${r.int(10000, 99999)} time="${c.date} ${c.time} UTC" fw=198.51.100.1 pri=6 c=262144 m=${kind[0]} msg="${kind[1]}" ` +
    `app=49177 appName='General ${name.toUpperCase()}' n=${r.int(1, 9e6)} ${endpoints} srcMac=00:17:c5:${p2(r.int(10, 99))}:aa:01 dstMac=00:17:c5:00:bb:02 ` +
    `proto=${protoId === 6 ? 'tcp' : 'udp'}/${name} sent=${r.int(60, 9e5)} rcvd=${r.int(0, 9e6)} spkt=${r.int(1, 99)} rpkt=${r.int(0, 99)} cdur=${r.int(0, 9e4)} ` +
    `rule="${r.int(1, 40)} (LAN->WAN)"${nat} fw_action="${kind[2]}"`
  );
}

/** Check Point Log Exporter, syslog format, in the RFC 5424 structured-data position. */
export function checkpointLine(r: Rng, ms: number): string {
  const [port, protoId, name] = r.pick(SERVICES);
  const v6 = r.chance(0.1);
  const action = r.pick(['Accept', 'Accept', 'Drop', 'Reject']);
  const xlate = v6
    ? ''
    : `; xlatesrc:"${natIp(r)}"; xlatesport:"${r.int(1024, 65535)}"; xlatedst:"0.0.0.0"; xlatedport:"0"`;
  return (
    `<134>1 ${iso(ms)} cp-gw-ist CheckPoint ${r.int(1000, 99999)} - [action:"${action}"; flags:"411908"; ifdir:"outbound"; ifname:"eth1"; ` +
    `logid:"0"; loguid:"{0x65a4f2b1,0x${r.int(1, 1e6).toString(16)},0x5a01a8c0,0x1c28}"; origin:"192.0.2.10"; originsicname:"CN=gw-ist,O=mgmt..abc123"; ` +
    `sequencenum:"${r.int(1, 99)}"; time:"${Math.floor(ms / 1000)}"; version:"5"; dst:"${v6 ? ipv6(r) : publicIp(r)}"; inzone:"Internal"; ` +
    `layer_name:"Network"; layer_uuid:"8a994dd3-993e-4c0c-92a1-a8630b153f4c"; match_id:"${r.int(1, 60)}"; outzone:"External"; ` +
    `product:"VPN-1 & FireWall-1"; proto:"${protoId}"; rule_action:"${action}"; rule_name:"web-out-${r.int(1, 9)}"; s_port:"${r.int(1024, 65535)}"; ` +
    `service:"${port}"; service_id:"${name}"; src:"${v6 ? ipv6(r) : privateIp(r)}"${xlate}]`
  );
}

/** RouterOS firewall log lines: forward with srcnat, input drops, ICMP, IPv6. */
export function mikrotikLine(r: Rng, ms: number): string {
  const [port, protoId] = r.pick(SERVICES);
  const proto = protoId === 6 ? 'TCP (SYN)' : 'UDP';
  const mac = `64:d1:54:${p2(r.int(10, 99))}:3c:${p2(r.int(10, 99))}`;
  const head = `<134>${bsdStamp(ms)} MikroTik firewall,info`;
  const kind = r.int(0, 9);
  if (kind === 0) {
    return `${head} ICMP-LOG input: in:ether1 out:(unknown 0), src-mac ${mac}, proto ICMP (type 8, code 0), ${publicIp(r)}->203.0.113.1, len 84`;
  }
  if (kind === 1) {
    return `${head} forward: in:bridge out:ether1, src-mac ${mac}, proto ${proto}, [${ipv6(r)}]:${r.int(1024, 65535)}->[${ipv6(r)}]:${port}, len ${r.int(60, 1500)}`;
  }
  if (kind === 2) {
    return `${head} DROP-WAN input: in:ether1 out:(unknown 0), src-mac ${mac}, proto ${proto}, ${publicIp(r)}:${r.int(1024, 65535)}->203.0.113.1:${port}, len ${r.int(40, 1500)}`;
  }
  const src = privateIp(r);
  const sport = r.int(1024, 65535);
  const dst = publicIp(r);
  return `${head} CGNAT forward: in:bridge out:ether1, src-mac ${mac}, proto ${proto}, ${src}:${sport}->${dst}:${port}, NAT (${src}:${sport}->${natIp(r)}:${r.int(1024, 65535)})->${dst}:${port}, len ${r.int(40, 1500)}`;
}
