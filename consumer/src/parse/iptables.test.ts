import { ms, parseLine } from '../../../test/fixtures/parse-support';

const UFW =
  '<4>Jan 15 10:23:45 ubuntu kernel: [12345.678901] [UFW BLOCK] IN=eth0 OUT= MAC=00:11:22:33:44:55:66:77:88:99:aa:bb:08:00 ' +
  'SRC=203.0.113.9 DST=192.168.1.2 LEN=60 TOS=0x00 PREC=0x00 TTL=50 ID=54321 DF PROTO=TCP SPT=44321 DPT=22 ' +
  'WINDOW=64240 RES=0x00 SYN URGP=0';

describe('iptables', () => {
  it('parses a UFW block behind a kernel syslog header', () => {
    expect(parseLine('iptables', UFW)).toMatchObject({
      vendor: 'iptables',
      timestamp: ms('2024-01-15T10:23:45Z'),
      device: 'ubuntu',
      src_ip: '203.0.113.9',
      dst_ip: '192.168.1.2',
      src_port: 44321,
      dst_port: 22,
      proto: 'tcp',
      action: 'deny',
      bytes: 60,
      rule: 'UFW BLOCK',
      severity: 4,
      'field:IN': 'eth0',
      'field:OUT': '',
      'field:TTL': '50',
      'field:SYN': '',
      'field:syslog.app': 'kernel',
    });
  });

  it.each([
    ['[UFW ALLOW] ', 'allow', 'UFW ALLOW'],
    ['[UFW AUDIT] ', 'alert', 'UFW AUDIT'],
    ['[UFW LIMIT BLOCK] ', 'deny', 'UFW LIMIT BLOCK'],
    ['IPTABLES-DROP: ', 'drop', 'IPTABLES-DROP'],
    ['FW-REJECT ', 'deny', 'FW-REJECT'],
    ['custom-prefix ', 'unknown', 'custom-prefix'],
    ['', 'unknown', null],
  ])('prefix %j gives action %s and rule %j', (prefix, action, rule) => {
    const line = `kernel: ${prefix}IN=eth0 OUT=eth1 SRC=10.0.0.1 DST=10.0.0.2 LEN=40 PROTO=UDP SPT=5000 DPT=53 LEN=20`;
    expect(parseLine('iptables', line)).toMatchObject({ action, rule, proto: 'udp' });
  });

  it('parses IPv6 and ICMP without ports, bare lines and dmesg uptime stamps', () => {
    const v6 = parseLine(
      'auto',
      '[ 55.1] [UFW BLOCK] IN=eth0 OUT= MAC=aa SRC=2001:db8::1 DST=ff02::1 LEN=72 TC=0 HOPLIMIT=1 FLOWLBL=0 PROTO=ICMPv6 TYPE=134 CODE=0',
    );
    expect(v6).toMatchObject({
      vendor: 'iptables',
      src_ip: '2001:db8::1',
      dst_ip: 'ff02::1',
      proto: 'icmpv6',
      src_port: null,
      timestamp: null,
    });
    expect(
      parseLine('iptables', 'IN=eth0 OUT= SRC=10.0.0.1 DST=10.0.0.2 PROTO=ICMP TYPE=8 CODE=0'),
    ).toMatchObject({ proto: 'icmp', rule: null });
  });

  it('is detected by auto behind a journald-style 5424 header', () => {
    const row = parseLine(
      'auto',
      '<4>1 2024-01-15T10:23:45.5+03:00 gw kernel - - - [UFW BLOCK] IN=eth0 OUT= SRC=10.0.0.1 DST=10.0.0.2 PROTO=TCP SPT=1 DPT=2',
    );
    expect(row).toMatchObject({
      vendor: 'iptables',
      timestamp: ms('2024-01-15T07:23:45.500Z'),
      device: 'gw',
    });
  });

  it.each([
    ['kernel: [UFW BLOCK] no netfilter here', 'unknown_format'],
    ['IN=eth0 SRC=10.0.0 DST=10.0.0.2', 'invalid_ip'],
    ['IN=eth0 SRC=10.0.0.1 DST=10.0.0.2 SPT=99999', 'invalid_port'],
    ['IN=eth0 =x SRC=10.0.0.1', 'bad_kv'],
  ])('dead-letters %s', (line, reason) => {
    expect(parseLine('iptables', line)).toEqual({ deadLetter: reason });
  });
});
