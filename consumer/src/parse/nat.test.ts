/**
 * NAT / CGNAT translations as identity fields in the formats that existed before the second wave:
 * FortiGate transip/transport (and tranip/tranport), PAN-OS natsrc/natdst/natsport/natdport, Cisco
 * ASA Built mapped addresses and 305011/305012 translation messages.
 */
import { REQUIRABLE_SOURCES as REQUIRED_FIELD_SOURCES } from '../../../common/src/parser-contract';
import { REQUIRABLE_SOURCES } from './required';
import { parseLine } from '../../../test/fixtures/parse-support';

describe('NAT columns', () => {
  it('fortigate: source NAT transip/transport, destination NAT tranip/tranport', () => {
    const snat =
      'srcip=10.0.0.5 srcport=51000 dstip=198.51.100.9 dstport=443 transip=203.0.113.5 transport=40001';
    expect(parseLine('fortigate', snat)).toMatchObject({
      nat_src_ip: '203.0.113.5',
      nat_src_port: 40001,
      nat_dst_ip: null,
      nat_dst_port: null,
    });
    const dnat = 'srcip=198.51.100.9 dstip=203.0.113.80 dstport=443 tranip=10.0.0.80 tranport=8443';
    expect(parseLine('fortigate', dnat)).toMatchObject({ nat_dst_ip: '10.0.0.80', nat_dst_port: 8443 });
    expect(parseLine('fortigate', 'srcip=10.0.0.5 transip=203.0.113.5.1').deadLetter).toBe('invalid_ip');
  });

  it('paloalto: natsrc/natdst/natsport/natdport; 0.0.0.0 and port 0 mean not translated', () => {
    const line =
      '1,2024/01/15 10:23:45,012801096514,TRAFFIC,end,2561,2024/01/15 10:23:44,192.168.1.10,8.8.8.8,' +
      '203.0.113.5,0.0.0.0,Allow-DNS,,,dns,vsys1,trust,untrust,ethernet1/2,ethernet1/1,Forward,' +
      '2024/01/15 10:23:45,12345,1,53211,53,40000,0,0x400064,udp,allow,180,90,90,2,2024/01/15 10:23:44,0,any,0,' +
      '7193817,0x0,192.168.0.0-192.168.255.255,United States,0,1,1,aged-out,0,0,0,0,,PA-5220,from-policy,,,0,,0,,N/A';
    expect(parseLine('paloalto', line)).toMatchObject({
      nat_src_ip: '203.0.113.5',
      nat_src_port: 40000,
      nat_dst_ip: null,
      nat_dst_port: null,
    });
  });

  it('cisco-asa: Built outbound keeps the mapped source, equal mapped addresses are not NAT', () => {
    const line =
      '%ASA-6-302013: Built outbound TCP connection 1496 for outside:93.184.216.34/443 (93.184.216.34/443) ' +
      'to inside:192.168.1.10/54321 (203.0.113.5/61001)';
    expect(parseLine('cisco-asa', line)).toMatchObject({
      src_ip: '192.168.1.10',
      nat_src_ip: '203.0.113.5',
      nat_src_port: 61001,
      nat_dst_ip: null,
    });
    const inbound =
      '%ASA-6-302013: Built inbound TCP connection 5 for outside:198.51.100.7/40000 (198.51.100.7/40000) ' +
      'to dmz:10.1.1.10/443 (203.0.113.10/443)';
    expect(parseLine('cisco-asa', inbound)).toMatchObject({
      src_ip: '198.51.100.7',
      dst_ip: '10.1.1.10',
      nat_src_ip: null,
      nat_dst_ip: '203.0.113.10',
      nat_dst_port: 443,
    });
  });

  it('cisco-asa: 305011/305012 dynamic PAT translations, IPv4 and IPv6', () => {
    const built =
      '%ASA-6-305011: Built dynamic TCP translation from inside:10.0.0.5/51234 to outside:203.0.113.5/23456';
    expect(parseLine('auto', built)).toMatchObject({
      vendor: 'cisco-asa',
      src_ip: '10.0.0.5',
      src_port: 51234,
      nat_src_ip: '203.0.113.5',
      nat_src_port: 23456,
      proto: 'tcp',
      action: 'allow',
    });
    const torn =
      '%ASA-6-305012: Teardown dynamic UDP translation from inside:2001:db8::5/5353 to outside:2001:db8:f::1/40000 duration 0:02:01';
    expect(parseLine('cisco-asa', torn)).toMatchObject({
      src_ip: '2001:db8::5',
      nat_src_ip: '2001:db8:f::1',
      nat_src_port: 40000,
      action: 'close',
      'field:duration': '0:02:01',
    });
  });
});

describe('requiredFields', () => {
  it('names the same sources in the CRD enum and the parser', () => {
    expect([...REQUIRED_FIELD_SOURCES].sort()).toEqual([...REQUIRABLE_SOURCES].sort());
  });

  it('dead-letters rows without a required NAT field under the CRD name requiredFields', () => {
    const line = 'srcip=10.0.0.5 dstip=198.51.100.9';
    expect(parseLine('fortigate', line, { requiredFields: ['src_ip', 'nat_src_ip'] })).toEqual({
      deadLetter: 'missing_field:nat_src_ip',
    });
  });
});
