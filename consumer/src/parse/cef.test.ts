import { ms, parseLine } from '../../../test/fixtures/parse-support';

describe('cef', () => {
  it('parses header fields and common extension keys', () => {
    const row = parseLine(
      'cef',
      'CEF:0|Security|threatmanager|1.0|100|worm successfully stopped|10|src=10.0.0.1 dst=2.1.2.2 spt=1232 dpt=80 proto=TCP act=blocked in=100 out=250 rt=1705303425123 dvchost=tm01 cs1Label=Rule Name cs1=Block all worms',
    );
    expect(row).toMatchObject({
      vendor: 'cef',
      timestamp: 1705303425123,
      device: 'tm01',
      src_ip: '10.0.0.1',
      dst_ip: '2.1.2.2',
      src_port: 1232,
      dst_port: 80,
      proto: 'tcp',
      action: 'deny',
      bytes: 350,
      rule: 'Block all worms',
      severity: 2,
      message: 'worm successfully stopped',
      'field:deviceVendor': 'Security',
      'field:deviceProduct': 'threatmanager',
      'field:deviceEventClassId': '100',
      'field:cs1Label': 'Rule Name',
    });
  });

  it('handles header escapes \\| and \\\\, and extension escapes \\= \\\\ \\n', () => {
    const row = parseLine(
      'cef',
      'CEF:0|Acme\\|Corp|Edge\\\\FW|1.0|7|Port scan|Low|msg=a\\=b c\\\\d\\nline2 filePath=C:\\\\temp\\\\x.exe suser=bob',
    );
    expect(row).toMatchObject({
      'field:deviceVendor': 'Acme|Corp',
      'field:deviceProduct': 'Edge\\FW',
      message: 'a=b c\\d\nline2',
      'field:filePath': 'C:\\temp\\x.exe',
      'field:suser': 'bob',
      severity: 5,
    });
  });

  it('values may contain spaces and unescaped = that is not a key', () => {
    const row = parseLine(
      'cef',
      'CEF:0|V|P|1|1|n|3|request=https://x.test/?a=1&b=2 msg=hello big world cs2=x',
    );
    expect(row).toMatchObject({
      'field:request': 'https://x.test/?a=1&b=2',
      message: 'hello big world',
      'field:cs2': 'x',
    });
  });

  it('reads rt as a date string in UTC, an offset, or the configured zone', () => {
    const base = 'CEF:0|V|P|1|1|n|3|src=10.0.0.1 rt=';
    expect(
      parseLine('cef', `${base}Jan 15 2024 10:23:45 UTC`, { timezone: 'Europe/Istanbul' }).timestamp,
    ).toBe(ms('2024-01-15T10:23:45Z'));
    expect(parseLine('cef', `${base}Jan 15 2024 10:23:45.250 +02:00`).timestamp).toBe(
      ms('2024-01-15T08:23:45.250Z'),
    );
    expect(parseLine('cef', `${base}Jan 15 2024 10:23:45`, { timezone: 'Europe/Istanbul' }).timestamp).toBe(
      ms('2024-01-15T07:23:45Z'),
    );
    expect(parseLine('cef', `${base}1705303425`).timestamp).toBe(1705303425000);
    expect(parseLine('cef', 'CEF:0|V|P|1|1|n|3|end=1705303425000 start=1705303400000').timestamp).toBe(
      1705303425000,
    );
  });

  it('uses IPv6 custom addresses when src/dst are absent and works behind syslog headers', () => {
    const row = parseLine(
      'auto',
      '<134>Jan 15 10:23:45 relay CEF:0|V|P|1|1|n|9|c6a2=2001:db8::1 c6a3=2001:db8::2 act=accept',
    );
    expect(row).toMatchObject({
      vendor: 'cef',
      src_ip: '2001:db8::1',
      dst_ip: '2001:db8::2',
      device: 'relay',
      action: 'allow',
      severity: 2,
    });
    const r5424 = parseLine(
      'auto',
      '<134>1 2024-01-15T10:23:45Z relay arcsight - - - CEF:1|V|P|1|1|n|Medium|src=10.0.0.1',
    );
    expect(r5424).toMatchObject({ vendor: 'cef', severity: 4, timestamp: ms('2024-01-15T10:23:45Z') });
  });

  it.each([
    ['CEF:0|V|P|1|1|n', 'bad_cef'],
    ['not cef', 'bad_cef'],
    ['CEF:0|V|P|1|1|n|3|src=10.0.0.999', 'invalid_ip'],
    ['CEF:0|V|P|1|1|n|3|dpt=http', 'invalid_port'],
    ['CEF:0|V|P|1|1|n|3|rt=yesterday', 'bad_timestamp'],
  ])('dead-letters %s', (line, reason) => {
    expect(parseLine('cef', line)).toEqual({ deadLetter: reason });
  });
});
