import { ms, parseLine } from '../../../test/fixtures/parse-support';

/** PAN-OS 10.x TRAFFIC, positions as in the syslog field description (FUTURE_USE columns included). */
const TRAFFIC =
  '1,2024/01/15 10:23:45,012801096514,TRAFFIC,end,2561,2024/01/15 10:23:44,192.168.1.10,8.8.8.8,' +
  '203.0.113.5,8.8.8.8,Allow-DNS,corp\\alice,,dns,vsys1,trust,untrust,ethernet1/2,ethernet1/1,Forward,' +
  '2024/01/15 10:23:45,12345,1,53211,53,40000,53,0x400064,udp,allow,180,90,90,2,2024/01/15 10:23:44,0,any,0,' +
  '7193817,0x0,192.168.0.0-192.168.255.255,United States,0,1,1,aged-out,0,0,0,0,,PA-5220,from-policy,,,0,,0,,N/A';

const THREAT =
  '1,2024/01/15 10:23:45,012801096514,THREAT,vulnerability,2561,2024/01/15 10:23:45,10.0.0.5,198.51.100.7,' +
  '203.0.113.5,198.51.100.7,Outbound-Web,,,web-browsing,vsys1,trust,untrust,ethernet1/2,ethernet1/1,Forward,' +
  '2024/01/15 10:23:45,4455,1,50123,80,41000,80,0x402000,tcp,reset-both,"www.example.com/a,b?q=""x""",' +
  '"Apache Struts2, RCE(33209)",computer-and-internet-info,critical,client-to-server,7193818,0x2000000000000000,' +
  '10.0.0.0-10.255.255.255,United States,0,text/html,0,,,1,,,,,,,,0,0,0,0,0,,PA-5220,,,';

describe('paloalto', () => {
  it('parses a TRAFFIC log by column position', () => {
    const row = parseLine('paloalto', TRAFFIC, { timezone: 'Europe/Istanbul' });
    expect(row).toMatchObject({
      vendor: 'paloalto',
      timestamp: ms('2024-01-15T07:23:44Z'),
      device: 'PA-5220',
      src_ip: '192.168.1.10',
      dst_ip: '8.8.8.8',
      src_port: 53211,
      dst_port: 53,
      proto: 'udp',
      action: 'allow',
      bytes: 180,
      rule: 'Allow-DNS',
      'field:natsrc': '203.0.113.5',
      'field:natsport': '40000',
      'field:srcuser': 'corp\\alice',
      'field:app': 'dns',
      'field:session_end_reason': 'aged-out',
      'field:serial': '012801096514',
    });
  });

  it('parses a THREAT log with quoted CSV fields containing commas and doubled quotes', () => {
    const row = parseLine('paloalto', THREAT);
    expect(row).toMatchObject({
      action: 'reset',
      severity: 2,
      message: 'Apache Struts2, RCE(33209)',
      bytes: null,
      'field:misc': 'www.example.com/a,b?q="x"',
      'field:category': 'computer-and-internet-info',
      'field:direction': 'client-to-server',
      'field:device_name': 'PA-5220',
    });
  });

  it('works behind a BSD syslog header and in auto mode', () => {
    const row = parseLine('auto', `<14>Jan 15 10:23:45 PA-VM ${TRAFFIC}`);
    expect(row).toMatchObject({ vendor: 'paloalto', src_ip: '192.168.1.10', severity: 6 });
  });

  it('falls back to the serial number as device, and keeps other log types with common columns', () => {
    const noName = TRAFFIC.replace(',PA-5220,', ',,');
    expect(parseLine('paloalto', noName).device).toBe('012801096514');
    const system =
      '1,2024/01/15 10:23:45,012801096514,SYSTEM,general,0,2024/01/15 10:23:45,,general,,0,0,general,informational,"User admin logged in",1234,0x0,0,0,0,0,,PA-5220';
    expect(parseLine('paloalto', system)).toMatchObject({
      vendor: 'paloalto',
      'field:type': 'SYSTEM',
      src_ip: null,
    });
  });

  it('parses IPv6 sessions', () => {
    const v6 = TRAFFIC.replace('192.168.1.10,8.8.8.8,', '2001:db8::10,2001:4860:4860::8888,');
    expect(parseLine('paloalto', v6)).toMatchObject({
      src_ip: '2001:db8::10',
      dst_ip: '2001:4860:4860::8888',
    });
  });

  it('normalises PAN-OS actions', () => {
    const action = (a: string): unknown =>
      parseLine('paloalto', TRAFFIC.replace(',udp,allow,', `,udp,${a},`)).action;
    expect(action('deny')).toBe('deny');
    expect(action('drop')).toBe('drop');
    expect(action('reset-client')).toBe('reset');
    expect(action('block-url')).toBe('deny');
  });

  it.each([
    [TRAFFIC.slice(0, 120), 'bad_csv'],
    [TRAFFIC.replace('corp\\alice', '"corp\\alice'), 'bad_csv'],
    [TRAFFIC.replace('"', '').replace('Allow-DNS', '"Allow"-DNS'), 'bad_csv'],
    [TRAFFIC.replace('192.168.1.10', '192.168.1'), 'invalid_ip'],
    [TRAFFIC.replace(',53211,', ',653211,'), 'invalid_port'],
    [TRAFFIC.replace('2024/01/15 10:23:44,192', '2024-01-15 10:23:44,192'), 'bad_timestamp'],
  ])('dead-letters malformed lines (%#)', (line, reason) => {
    expect(parseLine('paloalto', line)).toEqual({ deadLetter: reason });
  });
});
