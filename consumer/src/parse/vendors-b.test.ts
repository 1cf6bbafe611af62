/**
 * Sophos SFOS, SonicWall SonicOS, Check Point Log Exporter and MikroTik RouterOS: lines written
 * from the vendors' published log field references, IPv4 and IPv6, with NAT translations.
 */
import { ms, parseLine } from '../../../test/fixtures/parse-support';

describe('sophos', () => {
  it('reads the SFOS 19 layout (date/time/timezone, tran_*)', () => {
    const line =
      'device="SFW" date=2024-01-15 time=10:23:45 timezone="+03" device_name="XG230" device_id=C23012345 ' +
      'log_id=010101600001 log_type="Firewall" log_component="Firewall Rule" log_subtype="Allowed" status="Allow" ' +
      'priority=Information duration=30 fw_rule_id=7 src_ip=172.16.5.4 dst_ip=198.51.100.20 protocol="TCP" ' +
      'src_port=40000 dst_port=443 sent_bytes=1000 recv_bytes=2000 tran_src_ip=203.0.113.9 tran_src_port=61000 ' +
      'tran_dst_ip= tran_dst_port=0';
    expect(parseLine('auto', line)).toMatchObject({
      vendor: 'sophos',
      timestamp: ms('2024-01-15T07:23:45Z'),
      device: 'XG230',
      src_ip: '172.16.5.4',
      dst_ip: '198.51.100.20',
      src_port: 40000,
      dst_port: 443,
      nat_src_ip: '203.0.113.9',
      nat_src_port: 61000,
      nat_dst_ip: null,
      nat_dst_port: null,
      proto: 'tcp',
      action: 'allow',
      bytes: 3000,
      rule: '7',
      severity: 6,
    });
  });

  it('reads the SFOS 20 layout (timestamp, *_trans_*) and IPv6, and old lines starting with date=', () => {
    const v20 =
      'device_name="SFW" timestamp="2024-01-15T10:23:45+0300" log_id="010101600002" log_type="Firewall" ' +
      'log_subtype="Denied" severity="Warning" fw_rule_id="3" src_ip="2001:db8:5::4" dst_ip="2001:db8:7::1" ' +
      'protocol="UDP" src_port="5353" dst_port="53" src_trans_ip="" dst_trans_ip=""';
    expect(parseLine('auto', v20)).toMatchObject({
      vendor: 'sophos',
      timestamp: ms('2024-01-15T07:23:45Z'),
      src_ip: '2001:db8:5::4',
      action: 'deny',
      severity: 4,
      proto: 'udp',
    });
    const old =
      'date=2024-01-15 time=10:23:45 timezone="IST" device_name="SF01V" log_id=010101600001 src_ip=10.0.0.1 dst_ip=10.0.0.2';
    expect(parseLine('auto', old, { timezone: 'Europe/Istanbul' })).toMatchObject({
      vendor: 'sophos',
      timestamp: ms('2024-01-15T07:23:45Z'),
    });
  });

  it('dead-letters broken pairs and clocks', () => {
    expect(parseLine('sophos', 'device_name="SFW src_ip=1.2.3.4').deadLetter).toBe('bad_kv');
    expect(parseLine('sophos', 'device_name="SFW" timestamp="yesterday"').deadLetter).toBe('bad_timestamp');
  });
});

describe('sonicwall', () => {
  const opened =
    'id=firewall sn=0040103A1B2C time="2024-01-15 07:23:45 UTC" fw=198.51.100.1 pri=6 c=262144 m=98 ' +
    'msg="Connection Opened" app=49177 appName=\'General HTTPS MGMT\' n=5521 src=192.168.168.10:51515:X0 ' +
    'dst=198.51.100.30:443:X1:www.example.com srcMac=00:17:c5:01:02:03 proto=tcp/https sent=60 rcvd=0 ' +
    'rule="12 (LAN->WAN)" natSrc=203.0.113.44:40001 natDst=198.51.100.30:443 fw_action="NA"';
  it('reads a connection with NAT and endpoint ports', () => {
    expect(parseLine('auto', opened)).toMatchObject({
      vendor: 'sonicwall',
      timestamp: ms('2024-01-15T07:23:45Z'),
      device: '0040103A1B2C',
      src_ip: '192.168.168.10',
      src_port: 51515,
      dst_ip: '198.51.100.30',
      dst_port: 443,
      nat_src_ip: '203.0.113.44',
      nat_src_port: 40001,
      proto: 'tcp',
      action: 'allow',
      severity: 6,
      rule: '12 (LAN->WAN)',
      'field:appName': 'General HTTPS MGMT',
    });
  });

  it('reads IPv6 (srcV6/dstV6), drops and closes', () => {
    const v6 =
      'id=firewall sn=0040103A1B2C time="2024-01-15 10:23:45" pri=5 m=36 msg="TCP packet dropped" src=:51515:X0 ' +
      'dst=:22:X1 srcV6=2001:db8:3::9 dstV6=2001:db8:4::1 proto=tcp/ssh fw_action="drop"';
    expect(parseLine('sonicwall', v6, { timezone: 'Europe/Istanbul' })).toMatchObject({
      src_ip: '2001:db8:3::9',
      dst_ip: '2001:db8:4::1',
      src_port: 51515,
      dst_port: 22,
      action: 'drop',
      timestamp: ms('2024-01-15T07:23:45Z'),
    });
    expect(parseLine('auto', opened.replace('Connection Opened', 'Connection Closed')).action).toBe('close');
  });

  it('dead-letters bad endpoints', () => {
    expect(parseLine('sonicwall', 'id=firewall sn=1 src=10.0.0.300:1:X0').deadLetter).toBe('invalid_ip');
    expect(parseLine('sonicwall', 'id=firewall sn=1 src=10.0.0.3:99999:X0').deadLetter).toBe('invalid_port');
  });
});

describe('checkpoint', () => {
  const line =
    '<134>1 2024-01-15T07:23:45Z gw-ist CheckPoint 2641 - [action:"Accept"; flags:"411908"; ifdir:"outbound"; ' +
    'ifname:"eth1"; logid:"0"; loguid:"{0x65a4f2b1,0x1,0x5a01a8c0,0x1c28}"; origin:"192.0.2.10"; time:"1705303425"; ' +
    'version:"5"; dst:"198.51.100.50"; proto:"6"; rule_name:"web-out"; s_port:"50000"; service:"443"; ' +
    'src:"10.9.8.7"; xlatesrc:"203.0.113.77"; xlatesport:"35000"; xlatedst:"0.0.0.0"; xlatedport:"0"]';
  it('reads the Log Exporter syslog form in the structured-data position, with NAT', () => {
    expect(parseLine('auto', line)).toMatchObject({
      vendor: 'checkpoint',
      timestamp: 1705303425000,
      device: '192.0.2.10',
      src_ip: '10.9.8.7',
      src_port: 50000,
      dst_ip: '198.51.100.50',
      dst_port: 443,
      nat_src_ip: '203.0.113.77',
      nat_src_port: 35000,
      nat_dst_ip: null,
      nat_dst_port: null,
      proto: 'tcp',
      action: 'allow',
      rule: 'web-out',
    });
  });

  it('reads IPv6 and a bare (bracketless) payload, drop action', () => {
    const v6 =
      'action:"Drop"; origin:"192.0.2.10"; src:"2001:db8::77"; dst:"2001:db8:1::1"; proto:"17"; s_port:"5000"; service:"53"';
    expect(parseLine('auto', v6)).toMatchObject({
      vendor: 'checkpoint',
      src_ip: '2001:db8::77',
      action: 'drop',
      proto: 'udp',
    });
    expect(parseLine('checkpoint', '[action:"Accept"; src:"1.2.3.4"').deadLetter).toBe('bad_kv');
  });
});

describe('mikrotik', () => {
  it('reads a forward with source NAT (CGNAT)', () => {
    const line =
      '<134>Jan 15 10:23:45 MikroTik firewall,info CGNAT forward: in:bridge out:ether1, src-mac 64:d1:54:11:22:33, ' +
      'proto TCP (SYN), 10.10.1.5:50100->198.51.100.9:443, NAT (10.10.1.5:50100->100.64.0.9:2050)->198.51.100.9:443, len 60';
    expect(parseLine('auto', line)).toMatchObject({
      vendor: 'mikrotik',
      device: 'MikroTik',
      src_ip: '10.10.1.5',
      src_port: 50100,
      dst_ip: '198.51.100.9',
      dst_port: 443,
      nat_src_ip: '100.64.0.9',
      nat_src_port: 2050,
      proto: 'tcp',
      bytes: 60,
      rule: 'CGNAT',
      'field:mikrotik.chain': 'forward',
    });
  });

  it('reads destination NAT, ICMP, IPv6 and drop prefixes', () => {
    const dnat =
      'firewall,info DROP-IN input: in:ether1 out:(unknown 0), src-mac 00:0c:42:01:02:03, proto UDP, ' +
      '198.51.100.7:5353->203.0.113.1:8080, NAT 198.51.100.7:5353->(203.0.113.1:8080->10.0.0.5:80), len 72';
    expect(parseLine('auto', dnat)).toMatchObject({
      action: 'drop',
      nat_dst_ip: '10.0.0.5',
      nat_dst_port: 80,
      nat_src_ip: null,
    });
    const icmp =
      'firewall,info input: in:ether1 out:(unknown 0), proto ICMP (type 8, code 0), 198.51.100.7->203.0.113.1, len 84';
    expect(parseLine('auto', icmp)).toMatchObject({
      proto: 'icmp',
      src_ip: '198.51.100.7',
      src_port: null,
      rule: null,
    });
    const v6 =
      'firewall,info ACCEPT6 forward: in:bridge out:ether1, proto TCP (ACK), [2001:db8::5]:51000->[2001:db8:1::1]:443, len 80';
    expect(parseLine('auto', v6)).toMatchObject({
      src_ip: '2001:db8::5',
      src_port: 51000,
      dst_ip: '2001:db8:1::1',
      action: 'allow',
    });
    const icmp6 =
      'firewall,info forward: in:bridge out:ether1, proto ICMP (type 128, code 0), 2001:db8::5->2001:db8:1::1, len 104';
    expect(parseLine('mikrotik', icmp6).dst_ip).toBe('2001:db8:1::1');
  });

  it('dead-letters lines without endpoints or with bad ones', () => {
    expect(parseLine('mikrotik', 'firewall,info forward: in:bridge out:ether1, len 60').deadLetter).toBe(
      'bad_message',
    );
    expect(
      parseLine('mikrotik', 'firewall,info forward: in:a out:b, 10.0.0.1:99999->10.0.0.2:1').deadLetter,
    ).toBe('invalid_port');
  });
});
