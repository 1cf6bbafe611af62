/**
 * pfSense/OPNsense filterlog, Juniper SRX RT_FLOW and Huawei USG: lines written from the vendors'
 * published layouts (Netgate "Raw Filter Log Format", Junos RT_FLOW system log reference, Huawei
 * USG log reference), IPv4 and IPv6, and the NAT translations where the vendor logs them.
 */
import { ms, parseLine } from '../../../test/fixtures/parse-support';

describe('pfsense (filterlog)', () => {
  const v4tcp =
    '<134>Jan 15 10:23:45 filterlog[51234]: 5,,,1000000103,igb0,match,block,in,4,0x0,,51,23456,0,DF,6,tcp,60,' +
    '198.51.100.7,203.0.113.10,44321,22,0,S,3411000000,,64240,,mss;sackOK;TS;nop;wscale';
  it('reads IPv4 TCP', () => {
    expect(parseLine('pfsense', v4tcp)).toMatchObject({
      vendor: 'pfsense',
      timestamp: ms('2024-01-15T10:23:45Z'),
      src_ip: '198.51.100.7',
      dst_ip: '203.0.113.10',
      src_port: 44321,
      dst_port: 22,
      proto: 'tcp',
      action: 'deny',
      rule: '1000000103',
      bytes: 60,
      'field:filterlog.interface': 'igb0',
      'field:filterlog.direction': 'in',
    });
  });

  it('reads IPv4 UDP and ICMP (no ports) and IPv6 TCP/UDP inside RFC 5424 (OPNsense)', () => {
    const udp =
      '67,,,02f4bab031b57d1e30553ce08e0ec131,vtnet0,match,pass,out,4,0x0,,64,0,0,DF,17,udp,73,10.0.0.5,9.9.9.9,5353,53,53';
    expect(parseLine('pfsense', udp)).toMatchObject({
      proto: 'udp',
      dst_port: 53,
      action: 'allow',
      rule: '02f4bab031b57d1e30553ce08e0ec131',
    });
    const icmp =
      '9,,,1000000105,igb1,match,pass,in,4,0x0,,64,4411,0,none,1,icmp,84,10.0.0.9,192.0.2.1,request,31,7';
    expect(parseLine('pfsense', icmp)).toMatchObject({
      proto: 'icmp',
      src_ip: '10.0.0.9',
      src_port: null,
      dst_port: null,
    });
    const v6 =
      '<134>1 2024-01-15T10:23:45+03:00 opnsense.example filterlog 8123 - [meta sequenceId="42"] 77,,,0b7f2e,vtnet1,match,pass,out,6,0x00,0x00000,64,tcp,6,80,' +
      '2001:db8:10::5,2001:db8:20::7,51000,443,0,S,1000,,65228,,mss';
    expect(parseLine('auto', v6)).toMatchObject({
      vendor: 'pfsense',
      device: 'opnsense.example',
      timestamp: ms('2024-01-15T07:23:45Z'),
      src_ip: '2001:db8:10::5',
      dst_ip: '2001:db8:20::7',
      src_port: 51000,
      dst_port: 443,
      proto: 'tcp',
      bytes: 80,
    });
    const v6udp =
      '77,,,0b7f2e,vtnet1,match,block,in,6,0x00,0x00000,255,udp,17,40,fe80::1,ff02::fb,5353,5353,32';
    expect(parseLine('auto', v6udp)).toMatchObject({
      vendor: 'pfsense',
      proto: 'udp',
      src_ip: 'fe80::1',
      dst_port: 5353,
      action: 'deny',
    });
  });

  it('dead-letters broken lines', () => {
    expect(parseLine('pfsense', '5,,,1,igb0,match,block,in,4,0x0').deadLetter).toBe('bad_csv');
    expect(parseLine('pfsense', '5,,,1,igb0,match,block,in,5,a,b,c,d,e,f,g,h,i,j,k').deadLetter).toBe(
      'bad_csv',
    );
    expect(parseLine('pfsense', v4tcp.replace('198.51.100.7', '198.51.100.999')).deadLetter).toBe(
      'invalid_ip',
    );
  });
});

describe('juniper-srx (RT_FLOW)', () => {
  const sd =
    '<14>1 2024-01-15T10:23:45.120+03:00 srx-edge RT_FLOW - RT_FLOW_SESSION_CREATE [junos@2636.1.1.1.2.129 ' +
    'source-address="10.20.0.5" source-port="50123" destination-address="198.51.100.80" destination-port="443" ' +
    'connection-tag="0" service-name="junos-https" nat-source-address="100.64.1.9" nat-source-port="20444" ' +
    'nat-destination-address="198.51.100.80" nat-destination-port="443" nat-connection-tag="0" ' +
    'src-nat-rule-type="source rule" src-nat-rule-name="cgn" dst-nat-rule-type="N/A" dst-nat-rule-name="N/A" ' +
    'protocol-id="6" policy-name="trust-to-untrust" source-zone-name="trust" destination-zone-name="untrust" session-id-32="40001"]';
  it('reads the structured-data form with NAT', () => {
    expect(parseLine('auto', sd)).toMatchObject({
      vendor: 'juniper-srx',
      timestamp: ms('2024-01-15T07:23:45.120Z'),
      device: 'srx-edge',
      src_ip: '10.20.0.5',
      src_port: 50123,
      dst_ip: '198.51.100.80',
      dst_port: 443,
      nat_src_ip: '100.64.1.9',
      nat_src_port: 20444,
      nat_dst_ip: '198.51.100.80',
      proto: 'tcp',
      action: 'allow',
      rule: 'trust-to-untrust',
      'field:service-name': 'junos-https',
    });
    expect(parseLine('juniper-srx', sd).nat_src_ip).toBe('100.64.1.9');
  });

  it('reads the structured-data close with byte counters and IPv6', () => {
    const close =
      '<14>1 2024-01-15T10:23:45Z srx-edge RT_FLOW - RT_FLOW_SESSION_CLOSE [junos@2636.1.1.1.2.129 reason="TCP RST" ' +
      'source-address="2001:db8:1::5" source-port="50123" destination-address="2001:db8:2::9" destination-port="22" ' +
      'nat-source-address="2001:db8:1::5" nat-source-port="50123" protocol-id="6" policy-name="p6" ' +
      'packets-from-client="4" bytes-from-client="300" packets-from-server="3" bytes-from-server="1200"]';
    expect(parseLine('auto', close)).toMatchObject({
      src_ip: '2001:db8:1::5',
      dst_ip: '2001:db8:2::9',
      action: 'close',
      bytes: 1500,
      message: 'TCP RST',
    });
  });

  it('reads the text forms (create, close, deny), IPv4 and IPv6', () => {
    const create =
      '<14>Jan 15 10:23:45 srx-edge RT_FLOW: RT_FLOW_SESSION_CREATE: session created 10.20.0.5/50123->198.51.100.80/443 0x0 ' +
      'junos-https 100.64.1.9/20444->198.51.100.80/443 0x0 source rule cgn N/A N/A 6 trust-to-untrust trust untrust 40001 ' +
      'N/A(N/A) ge-0/0/1.0 UNKNOWN UNKNOWN UNKNOWN';
    expect(parseLine('auto', create)).toMatchObject({
      vendor: 'juniper-srx',
      device: 'srx-edge',
      src_ip: '10.20.0.5',
      dst_port: 443,
      nat_src_ip: '100.64.1.9',
      nat_src_port: 20444,
      proto: 'tcp',
      rule: 'trust-to-untrust',
      action: 'allow',
    });
    const close =
      'RT_FLOW_SESSION_CLOSE: session closed TCP FIN: 2001:db8:1::5/50123->2001:db8:2::9/443 0x0 junos-https ' +
      '2001:db8:1::5/50123->2001:db8:2::9/443 0x0 N/A N/A N/A N/A 6 p6 trust untrust 40002 12(2400) 10(9000) 30 UNKNOWN';
    expect(parseLine('auto', close)).toMatchObject({
      src_ip: '2001:db8:1::5',
      src_port: 50123,
      action: 'close',
      bytes: 11400,
      rule: 'p6',
    });
    const deny =
      'RT_FLOW_SESSION_DENY: session denied 10.20.0.5/50124->192.0.2.9/23 0x0 junos-telnet 6(0) deny-all trust untrust UNKNOWN UNKNOWN N/A(N/A) ge-0/0/1.0 No policy deny';
    expect(parseLine('auto', deny)).toMatchObject({
      action: 'deny',
      proto: 'tcp',
      rule: 'deny-all',
      dst_port: 23,
      nat_src_ip: null,
    });
  });

  it('dead-letters text lines without endpoints and bad addresses', () => {
    expect(parseLine('juniper-srx', 'RT_FLOW_SESSION_CREATE: session created').deadLetter).toBe(
      'bad_message',
    );
    expect(
      parseLine('juniper-srx', 'RT_FLOW_SESSION_DENY: session denied 10.0.0.999/1->1.2.3.4/2 0x0').deadLetter,
    ).toBe('invalid_ip');
  });
});

describe('huawei-usg', () => {
  it('reads a policy deny (issue example shape) with the header clock', () => {
    const line =
      '<188>Jan 15 2024 10:23:45 USG6650E %%01SEC/4/POLICYDENY(l)[12]:vsys=public, protocol=6, source-ip=10.1.1.20, ' +
      'source-port=50211, destination-ip=192.0.2.44, destination-port=3389, time=2024/1/15 10:23:45, source-zone=trust, ' +
      'destination-zone=untrust, application-name=, rule-name=block-rdp.';
    expect(parseLine('auto', line)).toMatchObject({
      vendor: 'huawei-usg',
      device: 'USG6650E',
      timestamp: ms('2024-01-15T10:23:45Z'),
      src_ip: '10.1.1.20',
      src_port: 50211,
      dst_ip: '192.0.2.44',
      dst_port: 3389,
      proto: 'tcp',
      action: 'deny',
      rule: 'block-rdp',
      severity: 4,
      message: 'SEC/4/POLICYDENY',
    });
  });

  it('reads the session log with source NAT, IPv4 and IPv6', () => {
    const line =
      '%%01SECLOG/6/SESSION_TEARDOWN(l):IPVer=4,Protocol=udp,SourceIP=10.1.1.20,DestinationIP=9.9.9.9,SourcePort=5353,' +
      'DestinationPort=53,SourceNatIP=100.64.7.7,SourceNatPort=31001,DestinationNatIP=9.9.9.9,DestinationNatPort=53,' +
      'SendBytes=80,RcvBytes=120,PolicyName=dns-out,CloseReason=aged-out.';
    expect(parseLine('huawei-usg', line)).toMatchObject({
      nat_src_ip: '100.64.7.7',
      nat_src_port: 31001,
      proto: 'udp',
      bytes: 200,
      action: 'close',
      rule: 'dns-out',
    });
    const v6 =
      '%%01SEC/6/POLICYPERMIT(l):vsys=public, protocol=17, source-ip=2001:db8::10, source-port=5000, destination-ip=2001:db8:9::1, destination-port=53, rule-name=dns6.';
    expect(parseLine('auto', v6)).toMatchObject({
      src_ip: '2001:db8::10',
      dst_ip: '2001:db8:9::1',
      action: 'allow',
      rule: 'dns6',
    });
  });

  it('dead-letters a malformed tag or address', () => {
    expect(parseLine('huawei-usg', '%%01SEC-POLICYDENY:source-ip=1.2.3.4').deadLetter).toBe('bad_message');
    expect(parseLine('huawei-usg', '%%01SEC/4/POLICYDENY(l):source-ip=1.2.3').deadLetter).toBe('invalid_ip');
  });
});
