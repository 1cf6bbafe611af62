import { ms, parseLine } from '../../../test/fixtures/parse-support';

describe('cisco-asa', () => {
  it('302013 outbound: the "to" side is the initiator', () => {
    const row = parseLine(
      'cisco-asa',
      '<166>Jan 15 2024 10:23:45 fw01 : %ASA-6-302013: Built outbound TCP connection 1496 for outside:93.184.216.34/443 ' +
        '(93.184.216.34/443) to inside:192.168.1.10/54321 (203.0.113.5/54321)',
    );
    expect(row).toMatchObject({
      vendor: 'cisco-asa',
      timestamp: ms('2024-01-15T10:23:45Z'),
      device: 'fw01',
      severity: 6,
      src_ip: '192.168.1.10',
      src_port: 54321,
      dst_ip: '93.184.216.34',
      dst_port: 443,
      proto: 'tcp',
      action: 'allow',
      'field:message_id': '302013',
      'field:connection_id': '1496',
    });
    expect(row.message).toMatch(/^Built outbound TCP connection 1496/);
  });

  it('302015 inbound UDP with identity-firewall users: the "for" side is the initiator', () => {
    const row = parseLine(
      'cisco-asa',
      '%ASA-6-302015: Built inbound UDP connection 77 for outside:198.51.100.7/5353 (198.51.100.7/5353) (LOCAL\\bob) ' +
        'to dmz:10.2.2.2/53 (203.0.113.9/53) (LOCAL\\svc)',
    );
    expect(row).toMatchObject({
      src_ip: '198.51.100.7',
      src_port: 5353,
      dst_ip: '10.2.2.2',
      dst_port: 53,
      proto: 'udp',
      timestamp: null,
    });
  });

  it('302014 teardown: bytes, reason, reset action and service-port heuristic', () => {
    const row = parseLine(
      'auto',
      '<166>Jan 15 2024 10:23:45: %ASA-6-302014: Teardown TCP connection 1496 for outside:93.184.216.34/443 to ' +
        'inside:192.168.1.10/54321 duration 0:00:15 bytes 12345 TCP Reset-O',
    );
    expect(row).toMatchObject({
      device: null,
      src_ip: '192.168.1.10',
      dst_ip: '93.184.216.34',
      dst_port: 443,
      bytes: 12345,
      action: 'reset',
      'field:duration': '0:00:15',
      'field:reason': 'TCP Reset-O',
    });
    const fins = parseLine(
      'cisco-asa',
      '%ASA-6-302016: Teardown UDP connection 9 for outside:8.8.8.8/53 to inside:10.0.0.2/40000 duration 0:00:01 bytes 120',
    );
    expect(fins).toMatchObject({
      action: 'close',
      proto: 'udp',
      bytes: 120,
      src_ip: '10.0.0.2',
      dst_ip: '8.8.8.8',
    });
  });

  it('parses IPv6 endpoints with interface prefixes', () => {
    const row = parseLine(
      'cisco-asa',
      '%ASA-6-302013: Built inbound TCP connection 5 for outside:2001:db8::7/40000 (2001:db8::7/40000) to inside:2001:db8:1::10/443 (2001:db8:1::10/443)',
    );
    expect(row).toMatchObject({
      src_ip: '2001:db8::7',
      src_port: 40000,
      dst_ip: '2001:db8:1::10',
      dst_port: 443,
    });
  });

  it.each([
    [
      '%ASA-4-106023: Deny tcp src outside:198.51.100.1/4444 dst inside:10.0.0.5/22 by access-group "OUTSIDE_IN" [0x0, 0x0]',
      { src_ip: '198.51.100.1', dst_port: 22, proto: 'tcp', rule: 'OUTSIDE_IN' },
    ],
    [
      '%ASA-4-106023: Deny icmp src outside:198.51.100.1 dst inside:10.0.0.5 (type 8, code 0) by access-group "OUT" [0x0, 0x0]',
      { src_port: null, proto: 'icmp', dst_ip: '10.0.0.5' },
    ],
    [
      '%ASA-2-106001: Inbound TCP connection denied from 198.51.100.1/4444 to 10.0.0.5/22 flags SYN  on interface outside',
      { src_port: 4444, dst_ip: '10.0.0.5', proto: 'tcp', severity: 2 },
    ],
    [
      '%ASA-2-106006: Deny inbound UDP from 198.51.100.1/4444 to 10.0.0.5/53 on interface outside',
      { proto: 'udp', dst_port: 53 },
    ],
    [
      '%ASA-2-106007: Deny inbound UDP from 198.51.100.1/53 to 10.0.0.5/5353 due to DNS Query',
      { src_port: 53, dst_port: 5353 },
    ],
    [
      '%ASA-6-106015: Deny TCP (no connection) from 10.0.0.5/443 to 198.51.100.1/4444 flags RST  on interface inside',
      { src_ip: '10.0.0.5', proto: 'tcp' },
    ],
    [
      '%ASA-3-710003: TCP access denied by ACL from 198.51.100.1/4444 to outside:203.0.113.1/22',
      { dst_ip: '203.0.113.1', dst_port: 22 },
    ],
    [
      '%ASA-3-313001: Denied ICMP type=8, code=0 from 198.51.100.1 on interface outside',
      { src_ip: '198.51.100.1', dst_ip: null, proto: 'icmp' },
    ],
    [
      '%ASA-1-106021: Deny TCP reverse path check from 198.51.100.1 to 10.0.0.5 on interface outside',
      { dst_ip: '10.0.0.5' },
    ],
  ])('deny family: %s', (line, expected) => {
    expect(parseLine('cisco-asa', line)).toMatchObject({ action: 'deny', ...expected });
  });

  it('106100 access-list hits carry the ACL as rule and permitted/denied as action', () => {
    const denied = parseLine(
      'cisco-asa',
      '%ASA-4-106100: access-list OUTSIDE_IN denied tcp outside/198.51.100.1(4444) -> inside/10.0.0.5(22) hit-cnt 1 first hit [0x1, 0x0]',
    );
    expect(denied).toMatchObject({
      action: 'deny',
      rule: 'OUTSIDE_IN',
      src_ip: '198.51.100.1',
      src_port: 4444,
      dst_ip: '10.0.0.5',
      dst_port: 22,
    });
    const permitted = parseLine(
      'cisco-asa',
      '%ASA-6-106100: access-list IN permitted udp inside/10.0.0.5(5000) -> outside/8.8.8.8(53) hit-cnt 3 300-second interval [0x1, 0x0]',
    );
    expect(permitted).toMatchObject({ action: 'allow', proto: 'udp' });
  });

  it('keeps other message ids with severity and text, and accepts FTD tags', () => {
    expect(
      parseLine('cisco-asa', "%ASA-5-111008: User 'enable_15' executed the 'write memory' command."),
    ).toMatchObject({
      severity: 5,
      action: 'unknown',
      src_ip: null,
      message: "User 'enable_15' executed the 'write memory' command.",
    });
    expect(
      parseLine(
        'auto',
        '%FTD-6-302013: Built inbound TCP connection 1 for outside:1.2.3.4/1000 (1.2.3.4/1000) to inside:10.0.0.1/80 (10.0.0.1/80)',
      ).vendor,
    ).toBe('cisco-asa');
  });

  it('takes the year-less header clock in the configured zone', () => {
    const row = parseLine(
      'cisco-asa',
      '<166>Jan 15 10:23:45 fw02 %ASA-4-106023: Deny udp src outside:1.2.3.4/1 dst inside:10.0.0.1/2 by access-group "X"',
      { timezone: 'Europe/Istanbul' },
    );
    expect(row).toMatchObject({ device: 'fw02', timestamp: ms('2024-01-15T07:23:45Z') });
  });

  it.each([
    [
      '%ASA-6-302013: Built outbound TCP connection 1 for outside:999.1.1.1/443 (x) to inside:10.0.0.1/5 (y)',
      'invalid_ip',
    ],
    ['%ASA-6-302013: Built outbound TCP connection 1', 'bad_message'],
    ['%ASA-4-106100: access-list OUT denied tcp outside/1.2.3.4 -> inside/10.0.0.5(22)', 'bad_message'],
    ['%ASA-6: no id', 'unknown_format'],
    ['hello world', 'unknown_format'],
  ])('dead-letters %s', (line, reason) => {
    expect(parseLine('cisco-asa', line)).toEqual({ deadLetter: reason });
  });
});
