import { ms, parseLine, TEST_REF_MS } from '../../../test/fixtures/parse-support';
import { LINE_NO_SPECIALS, LineParser } from './parser';
import { recordToObject } from './to-json';

const TRAFFIC =
  'date=2024-01-15 time=10:23:45 devname="FG100F-HQ" devid="FG100FTK19000000" eventtime=1705303425123456789 ' +
  'tz="+0300" logid="0000000013" type="traffic" subtype="forward" level="notice" vd="root" srcip=192.168.10.25 ' +
  'srcport=54321 srcintf="port1" srcintfrole="lan" dstip=93.184.216.34 dstport=443 dstintf="wan1" ' +
  'dstintfrole="wan" sessionid=123456789 proto=6 action="close" policyid=12 policytype="policy" ' +
  'policyname="LAN-to-WAN" service="HTTPS" trandisp="snat" transip=203.0.113.5 transport=54321 duration=15 ' +
  'sentbyte=2345 rcvdbyte=12345 sentpkt=12 rcvdpkt=15';

describe('fortigate', () => {
  it('parses a forward traffic log with a nanosecond eventtime', () => {
    const row = parseLine('fortigate', TRAFFIC);
    expect(row).toMatchObject({
      timestamp: 1705303425123,
      vendor: 'fortigate',
      device: 'FG100F-HQ',
      src_ip: '192.168.10.25',
      dst_ip: '93.184.216.34',
      src_port: 54321,
      dst_port: 443,
      proto: 'tcp',
      action: 'close',
      bytes: 2345 + 12345,
      rule: '12',
      severity: 5,
      'field:policyname': 'LAN-to-WAN',
      'field:transip': '203.0.113.5',
      'field:srcintf': 'port1',
    });
  });

  it('reads date/time in the line tz when there is no eventtime', () => {
    const row = parseLine(
      'fortigate',
      'date=2024-01-15 time=10:23:45 tz="+0300" srcip=10.0.0.1 dstip=10.0.0.2',
    );
    expect(row.timestamp).toBe(ms('2024-01-15T07:23:45Z'));
  });

  it('reads date/time in the configured zone when the line has no tz', () => {
    const line = 'date=2024-07-15 time=10:23:45 devname=fw srcip=10.0.0.1 dstip=10.0.0.2 action=accept';
    expect(parseLine('fortigate', line, { timezone: 'Europe/Istanbul' }).timestamp).toBe(
      ms('2024-07-15T07:23:45Z'),
    );
    expect(parseLine('fortigate', line, { timezone: 'America/New_York' }).timestamp).toBe(
      ms('2024-07-15T14:23:45Z'),
    );
    expect(parseLine('fortigate', line).action).toBe('allow');
  });

  it('accepts eventtime in seconds and microseconds', () => {
    expect(parseLine('fortigate', 'eventtime=1705303425 srcip=10.0.0.1').timestamp).toBe(1705303425000);
    expect(parseLine('fortigate', 'eventtime=1705303425123456 srcip=10.0.0.1').timestamp).toBe(1705303425123);
  });

  it('parses IPv6 traffic and UDP', () => {
    const row = parseLine(
      'fortigate',
      'date=2024-01-15 time=10:23:45 srcip=2001:db8::1 dstip=2001:db8:0:1::53 proto=17 dstport=53 action="deny"',
    );
    expect(row).toMatchObject({
      src_ip: '2001:db8::1',
      dst_ip: '2001:db8:0:1::53',
      proto: 'udp',
      action: 'deny',
      dst_port: 53,
    });
  });

  it('unescapes quoted values and keeps spaces and = inside quotes', () => {
    const row = parseLine(
      'fortigate',
      'logid="0100032001" type="event" msg="User \\"admin\\" set a=b from C:\\\\temp" user="admin"',
    );
    expect(row.message).toBe('User "admin" set a=b from C:\\temp');
    expect(row['field:user']).toBe('admin');
  });

  it('maps a UTM webfilter block to deny with warning severity', () => {
    const line =
      'date=2024-01-15 time=10:23:45 logid="0316013056" type="utm" subtype="webfilter" eventtype="ftgd_blk" ' +
      'level="warning" vd="root" eventtime=1705303425 policyid=1 sessionid=123 srcip=10.1.100.11 srcport=50000 ' +
      'dstip=185.230.63.107 dstport=443 proto=6 service="HTTPS" hostname="example.com" action="blocked" ' +
      'url="https://example.com/?a=1&b=2" sentbyte=0 rcvdbyte=0 msg="URL belongs to a denied category in policy"';
    expect(parseLine('fortigate', line)).toMatchObject({
      action: 'deny',
      severity: 4,
      bytes: 0,
      message: 'URL belongs to a denied category in policy',
      'field:url': 'https://example.com/?a=1&b=2',
    });
  });

  it('uses logdesc as message when there is no msg, and devid when there is no devname', () => {
    const row = parseLine(
      'fortigate',
      'devid="FG100FTK1" logdesc="Admin login successful" level="information"',
    );
    expect(row).toMatchObject({
      device: 'FG100FTK1',
      message: 'Admin login successful',
      severity: 6,
      timestamp: null,
    });
  });

  it('works behind a PRI-only and a BSD syslog header', () => {
    expect(parseLine('fortigate', `<189>${TRAFFIC}`)).toMatchObject({ severity: 5, src_ip: '192.168.10.25' });
    const wrapped = parseLine(
      'auto',
      `<189>Jan 15 10:23:45 relay01 date=2024-01-15 time=10:23:45 srcip=10.0.0.1 dstip=10.0.0.2`,
    );
    expect(wrapped).toMatchObject({
      vendor: 'fortigate',
      device: 'relay01',
      timestamp: ms('2024-01-15T10:23:45Z'),
    });
  });

  it('treats empty quoted addresses as absent', () => {
    expect(parseLine('fortigate', 'srcip="" dstip=10.0.0.2 srcport=""')).toMatchObject({
      src_ip: null,
      src_port: null,
    });
  });

  it.each([
    ['srcip=10.0.0.300 dstip=10.0.0.2', 'invalid_ip'],
    ['srcip=hello dstip=10.0.0.2', 'invalid_ip'],
    ['srcip=10.0.0.1 srcport=70000', 'invalid_port'],
    ['srcip=10.0.0.1 dstport=-1', 'invalid_port'],
    ['srcip=10.0.0.1 msg="unterminated', 'bad_kv'],
    ['srcip=10.0.0.1 msg="ends in a backslash\\', 'bad_kv'],
    ['srcip=10.0.0.1 msg="escaped close\\"', 'bad_kv'],
    ['srcip=10.0.0.1 msg="', 'bad_kv'],
    ['srcip=10.0.0.1 lonely dstip=10.0.0.2', 'bad_kv'],
    ['=value', 'bad_kv'],
    ['eventtime=12345 srcip=10.0.0.1', 'bad_timestamp'],
    ['date=2024-01-15 srcip=10.0.0.1', 'bad_timestamp'],
    ['date=2024-02-30 time=10:00:00', 'bad_timestamp'],
    ['date=1999-12-31 time=10:00:00', 'bad_timestamp'],
    // A clock value with an escape (read from the source line, so never valid), even beside eventtime.
    ['date="2024-01-1\\5" time=10:00:00', 'bad_timestamp'],
    ['eventtime=1705303425123456789 tz="+03\\00"', 'bad_timestamp'],
  ])('dead-letters %s as %s', (line, reason) => {
    expect(parseLine('fortigate', line)).toEqual({ deadLetter: reason });
  });

  it('finds closing quotes alike with and without the no-backslash hint', () => {
    const parser = new LineParser({ format: 'fortigate', timezone: 'UTC' });
    const outcomes: Array<string | null> = [];
    for (const line of [
      'devname="FG" srcip=10.0.0.1 msg="a b=c" dstip=10.0.0.2',
      'msg="open srcip=10.0.0.1',
    ]) {
      const buf = Buffer.from(line);
      const plain = parser.parse(buf, 0, buf.length);
      const plainRow = plain === null ? recordToObject(parser.record) : plain;
      const hinted = parser.parse(buf, 0, buf.length, LINE_NO_SPECIALS);
      expect(hinted === null ? recordToObject(parser.record) : hinted).toEqual(plainRow);
      outcomes.push(plain);
    }
    expect(outcomes).toEqual([null, 'bad_kv']);
  });

  it('dead-letters lines lacking a required source', () => {
    expect(parseLine('fortigate', 'type="event" msg="x"', { required: ['src_ip'] })).toEqual({
      deadLetter: 'missing_field:src_ip',
    });
    expect(parseLine('fortigate', TRAFFIC, { required: ['src_ip', 'dst_ip'] }).src_ip).toBe('192.168.10.25');
  });

  it('parses each line the same whatever key order the previous line had (KeyLayout)', () => {
    const lines = [
      TRAFFIC,
      TRAFFIC.replace('srcip=', 'srcipx=').replace('dstport=', 'dstport2='),
      'srcip=10.0.0.9 srcport=1 dstip=10.0.0.8',
      'srcport=2 srcip=10.0.0.7 dstip=10.0.0.6 srcip=10.0.0.5',
      'srcip10.0.0.1 dstip=10.0.0.2',
      'srcip= dstip=10.0.0.2',
      'srcip=10.0.0.1 src=x dstip=10.0.0.2',
      `${'k'.repeat(40)}=1 srcip=10.0.0.3`,
      TRAFFIC.replace(' proto=6', ' proto=17 level="warning"'),
      'srcip=10.0.0.1 dstip',
    ].map((l) => Buffer.from(l));
    const parser = new LineParser({ format: 'fortigate', timezone: 'UTC', collectFields: true });
    parser.setReferenceTime(TEST_REF_MS);
    const parseAll = (order: Buffer[]): string[] =>
      order.map((b) => {
        const reason = parser.parse(b, 0, b.length);
        return JSON.stringify(reason === null ? recordToObject(parser.record) : { deadLetter: reason });
      });
    const alone = lines.map((b) => JSON.stringify(parseLine('fortigate', b)));
    const forward = parseAll([...lines, ...lines]);
    const backward = parseAll([...lines].reverse()).reverse();
    expect(forward).toEqual([...alone, ...alone]);
    expect(backward).toEqual(alone);
    expect(alone[4]).toBe(JSON.stringify({ deadLetter: 'bad_kv' }));
  });
});
