import { LINE_SAME_MESSAGE, LINE_UTF8_VALID, LineParser } from './parser';
import { generateSampleLines } from '../../../test/fixtures/samples';
import { parseLine } from '../../../test/fixtures/parse-support';
import { FORMAT_NAMES } from './record';

describe('auto detection', () => {
  it.each([
    ['CEF:0|V|P|1|1|n|3|src=10.0.0.1', 'cef'],
    ['{"src_ip":"10.0.0.1"}', 'json'],
    ['%ASA-4-106023: Deny tcp src outside:1.2.3.4/1 dst inside:10.0.0.1/2 by access-group "X"', 'cisco-asa'],
    [
      '1,2024/01/15 10:23:45,0123,TRAFFIC,end,1,2024/01/15 10:23:45,10.0.0.1,10.0.0.2,,,r,,,app,vsys1,a,b,e1,e2,F,2024/01/15 10:23:45,1,1,1,2,0,0,0x0,tcp,allow',
      'paloalto',
    ],
    ['date=2024-01-15 time=10:00:00 srcip=10.0.0.1', 'fortigate'],
    ['logver=700 itime=1705303425 devid=FG srcip=10.0.0.1', 'fortigate'],
    ['[UFW BLOCK] IN=eth0 OUT= SRC=10.0.0.1 DST=10.0.0.2', 'iptables'],
    ['<13>Jan 15 10:00:00 host app: hello', 'rfc3164'],
    [
      '<134>Jan 15 10:00:00 filterlog[1]: 5,,,1000000103,igb0,match,block,in,4,0x0,,64,1,0,DF,6,tcp,60,1.2.3.4,5.6.7.8,1,2,0,S',
      'pfsense',
    ],
    [
      '<134>1 2024-01-15T10:00:00Z fw filterlog 1 - - 5,,,abc,vtnet0,match,pass,out,6,0x00,0x00000,64,udp,17,40,2001:db8::1,2001:db8::2,1,2,8',
      'pfsense',
    ],
    [
      '<14>1 2024-01-15T10:00:00Z srx RT_FLOW - RT_FLOW_SESSION_DENY [junos@2636.1.1.1.2.40 source-address="10.0.0.1"]',
      'juniper-srx',
    ],
    [
      '<14>Jan 15 10:00:00 srx RT_FLOW: RT_FLOW_SESSION_CREATE: session created 10.0.0.1/1->10.0.0.2/2 0x0 x',
      'juniper-srx',
    ],
    [
      '<188>Jan 15 2024 10:00:00 USG %%01SEC/4/POLICYDENY(l)[0]:vsys=public, source-ip=10.0.0.1.',
      'huawei-usg',
    ],
    ['device="SFW" date=2024-01-15 time=10:00:00 device_name="XG" log_id=1 src_ip=10.0.0.1', 'sophos'],
    ['date=2024-01-15 time=10:00:00 timezone="+03" device_name="XG" log_id=1', 'sophos'],
    ['id=firewall sn=0040 time="2024-01-15 10:00:00" src=10.0.0.1:1:X0', 'sonicwall'],
    ['<134>1 2024-01-15T10:00:00Z gw CheckPoint 1 - [action:"Accept"; src:"10.0.0.1"]', 'checkpoint'],
    [
      '<134>Jan 15 10:00:00 MikroTik firewall,info forward: in:a out:b, proto TCP (SYN), 1.2.3.4:1->5.6.7.8:2, len 60',
      'mikrotik',
    ],
    ['<13>1 2024-01-15T10:00:00Z host app - - - hello', 'rfc5424'],
  ])('%s -> %s', (line, vendor) => {
    expect(parseLine('auto', line).vendor).toBe(vendor);
  });

  it('dead-letters unknown bare lines and keeps unknown syslog payloads as syslog', () => {
    expect(parseLine('auto', 'random text without structure')).toEqual({ deadLetter: 'unknown_format' });
    expect(parseLine('auto', '<13>Jan 15 10:00:00 host random text').message).toBe('random text');
  });

  it('detects every generated sample format', () => {
    for (const format of FORMAT_NAMES) {
      for (const line of generateSampleLines(format, 200, { seed: 3 })) {
        const row = parseLine('auto', line, { timezone: 'Europe/Istanbul' });
        expect([format, row.deadLetter ?? row.vendor]).toEqual([format, format]);
      }
    }
  });
});

describe('line-level edge cases', () => {
  it('dead-letters empty and whitespace-only lines', () => {
    expect(parseLine('auto', '')).toEqual({ deadLetter: 'empty_line' });
    expect(parseLine('fortigate', '  \t ')).toEqual({ deadLetter: 'empty_line' });
  });

  it('dead-letters lines over the configured limit (default 64 KiB)', () => {
    const long = `date=2024-01-15 time=10:00:00 msg="${'x'.repeat(70_000)}"`;
    expect(parseLine('fortigate', long)).toEqual({ deadLetter: 'line_too_long' });
    expect(parseLine('fortigate', long, { maxLineBytes: 100_000 }).vendor).toBe('fortigate');
    expect(parseLine('fortigate', 'srcip=10.0.0.1 msg="0123456789"', { maxLineBytes: 20 })).toEqual({
      deadLetter: 'line_too_long',
    });
  });

  it('dead-letters invalid UTF-8 (overlong, lone continuation, truncated sequence)', () => {
    for (const bad of [[0xc0, 0xaf], [0x80], [0xe2, 0x82], [0xed, 0xa0, 0x80]]) {
      const line = Buffer.concat([Buffer.from('srcip=10.0.0.1 msg="'), Buffer.from(bad), Buffer.from('"')]);
      expect(parseLine('fortigate', line)).toEqual({ deadLetter: 'invalid_utf8' });
    }
    expect(parseLine('fortigate', 'srcip=10.0.0.1 msg="çağrı ✓ 😀"').message).toBe('çağrı ✓ 😀');
  });

  it('keeps NUL and control bytes inside values', () => {
    expect(parseLine('fortigate', 'srcip=10.0.0.1 msg="a\u0000b\u0001c"').message).toBe('a\u0000b\u0001c');
  });

  it('only looks at [s, e) of a shared buffer', () => {
    const buf = Buffer.from('XXdate=2024-01-15 time=10:00:00 srcip=10.0.0.1\nCEF:0|should|not|be|read');
    const parser = new LineParser({ format: 'auto' });
    expect(parser.parse(buf, 2, buf.indexOf(10))).toBeNull();
    expect(parser.record.srcIpVersion).toBe(4);
  });

  it('detects the same formats line by line within a message as line by line alone (LINE_SAME_MESSAGE)', () => {
    // The Sophos check reuses one forward scan for `_` across the lines of a message.
    const lines = [
      'date=2024-01-15 time=10:00:00 srcip=10.0.0.1',
      'date=2024-01-15 time=10:00:00 timezone="+03" device_name="XG" log_id=1',
      'date=2024-01-15 time=10:00:00 srcip=10.0.0.2 msg="a_b"',
      'date=2024-01-15 time=10:00:00 srcip=10.0.0.3',
      'device="SFW" date=2024-01-15 time=10:00:00 device_name="XG" log_id=1 src_ip=10.0.0.1',
      `date=2024-01-15 time=10:00:00 ${'x'.repeat(250)}=1 log_id=1`,
      'date=2024-01-15 time=10:00:00 log_id=1',
      'date=2024-01-15 time=10:00:00 srcip=10.0.0.4',
    ];
    const alone = lines.map((l) => {
      const parser = new LineParser({ format: 'auto' });
      const reason = parser.parse(Buffer.from(l), 0, Buffer.byteLength(l));
      return `${reason}/${FORMAT_NAMES[parser.record.format]}`;
    });
    const [forti, sophos] = ['null/fortigate', 'null/sophos'];
    expect(alone).toEqual([forti, sophos, forti, forti, sophos, forti, sophos, forti]);
    const message = Buffer.from(lines.join('\n'));
    const parser = new LineParser({ format: 'auto' });
    const together: string[] = [];
    let s = 0;
    lines.forEach((l, i) => {
      const e = s + Buffer.byteLength(l);
      const reason = parser.parse(message, s, e, LINE_UTF8_VALID | (i > 0 ? LINE_SAME_MESSAGE : 0));
      together.push(`${reason}/${FORMAT_NAMES[parser.record.format]}`);
      s = e + 1;
    });
    expect(together).toEqual(alone);
  });

  it('rejects unknown formats, zones and required sources at construction', () => {
    expect(() => new LineParser({ format: 'xml' })).toThrow(/unknown parser format/);
    expect(() => new LineParser({ format: 'auto', timezone: 'Mars/Olympus' })).toThrow(/unknown timezone/);
    expect(() => new LineParser({ format: 'auto', required: ['raw'] })).toThrow(/cannot require/);
  });
});
