/** User-defined formats: kv, csv (with layouts) and RFC 5424 structured data, alone and as auto rules. */
import { LineParser } from './parser';
import { ms, parseLine } from '../../../test/fixtures/parse-support';

const KV = {
  pairDelimiter: ';',
  keyValueDelimiter: ':',
  quote: "'",
  fields: {
    src_ip: ['source', 'src'],
    dst_ip: ['destination'],
    src_port: ['sport'],
    dst_port: ['dport'],
    nat_src_ip: ['public_ip'],
    nat_src_port: ['public_port'],
    proto: ['proto'],
    action: ['verdict'],
    timestamp: ['when'],
    rule: ['policy'],
  },
  actions: { pass: 'allow', kill: 'drop' },
};

describe('declarative kv', () => {
  it('maps several vendor keys to our columns, quotes, actions, NAT and the clock', () => {
    const line =
      "when:2024-01-15T10:23:45+03:00; src:10.0.0.5; sport:51000; destination:2001:db8::9; dport:443; proto:tcp; verdict:KILL; policy:'web out'; public_ip:203.0.113.5; public_port:40001";
    expect(parseLine('kv', line, { kv: KV })).toMatchObject({
      vendor: 'kv',
      timestamp: ms('2024-01-15T07:23:45Z'),
      src_ip: '10.0.0.5',
      src_port: 51000,
      dst_ip: '2001:db8::9',
      dst_port: 443,
      nat_src_ip: '203.0.113.5',
      nat_src_port: 40001,
      proto: 'tcp',
      action: 'drop',
      rule: 'web out',
      'field:verdict': 'KILL',
    });
    expect(parseLine('kv', 'source:10.0.0.1;verdict:accept;when:1705303425', { kv: KV })).toMatchObject({
      action: 'allow', // unmapped words fall back to the built-in action words
      timestamp: 1705303425000,
    });
  });

  it('dead-letters broken values and lines, and refuses bad configurations', () => {
    expect(parseLine('kv', 'source:10.0.0.999', { kv: KV }).deadLetter).toBe('invalid_ip');
    expect(parseLine('kv', "source:'10.0.0.1", { kv: KV }).deadLetter).toBe('bad_kv');
    expect(parseLine('kv', 'when:yesterday', { kv: KV }).deadLetter).toBe('bad_timestamp');
    expect(
      parseLine('kv', 'source:10.0.0.1', { kv: KV, requiredFields: ['src_ip', 'dst_ip'] }).deadLetter,
    ).toBe('missing_field:dst_ip');
    expect(() => new LineParser({ format: 'kv' })).toThrow(/needs parser.kv/);
    expect(() => new LineParser({ format: 'kv', kv: { ...KV, pairDelimiter: ':' } })).toThrow(/different/);
    expect(() => new LineParser({ format: 'kv', kv: { fields: { raw: ['x'] } } })).toThrow(
      /cannot map column "raw"/,
    );
    expect(() => new LineParser({ format: 'kv', kv: { fields: {}, actions: { x: 'maybe' } } })).toThrow(
      /unknown action/,
    );
  });
});

describe('declarative csv', () => {
  const CSV = {
    fields: { timestamp: 0, device: 1 },
    layoutField: 2,
    layouts: {
      CONN: { timestamp: 0, device: 1, src_ip: 3, dst_ip: 4, dst_port: 5, action: 6 },
      NAT: { timestamp: 0, device: 1, src_ip: 3, src_port: 4, nat_src_ip: 5, nat_src_port: 6 },
    },
  };
  it('selects the layout by a column value, handles quotes, keeps fields by position', () => {
    expect(
      parseLine('csv', '1705303425000,fw1,CONN,10.0.0.5,198.51.100.7,443,"deny"', { csv: CSV }),
    ).toMatchObject({
      vendor: 'csv',
      timestamp: 1705303425000,
      device: 'fw1',
      src_ip: '10.0.0.5',
      dst_port: 443,
      action: 'deny',
      'field:csv.2': 'CONN',
    });
    expect(
      parseLine('csv', '1705303425,"fw ""2""",NAT,10.0.0.5,51000,203.0.113.5,40001', { csv: CSV }),
    ).toMatchObject({
      device: 'fw "2"',
      nat_src_ip: '203.0.113.5',
      nat_src_port: 40001,
    });
    // An unknown layout value keeps the base fields only.
    expect(parseLine('csv', '1705303425,fw1,OTHER,10.0.0.5', { csv: CSV })).toMatchObject({
      device: 'fw1',
      src_ip: null,
    });
    expect(parseLine('csv', '1705303425,"fw1,CONN', { csv: CSV }).deadLetter).toBe('bad_csv');
    expect(() => new LineParser({ format: 'csv', csv: { fields: { src_ip: -1 } } })).toThrow(/position/);
  });
});

describe('declarative structured data', () => {
  const SD = {
    sdId: 'acme@32473',
    fields: { src_ip: ['src'], dst_ip: ['dst'], action: ['act'] },
    actions: { ok: 'allow' },
  };
  const line =
    '<134>1 2024-01-15T10:23:45Z fw1 acme - - [meta x="1"][acme@32473 src="10.0.0.5" dst="2001:db8::1" act="ok"] hello';
  it('maps params of one SD-ID and ignores other elements', () => {
    expect(parseLine('structured-data', line, { structuredData: SD })).toMatchObject({
      vendor: 'structured-data',
      device: 'fw1',
      src_ip: '10.0.0.5',
      dst_ip: '2001:db8::1',
      action: 'allow',
    });
    expect(
      parseLine('structured-data', '<134>1 2024-01-15T10:23:45Z fw1 a - - [other@1 src="1.2.3.4"]', {
        structuredData: SD,
      }).deadLetter,
    ).toBe('unknown_format');
  });

  it('runs as auto rules before the built-in detection, by match or SD-ID', () => {
    const rules = [
      { name: 'acme-sd', structuredData: SD },
      { name: 'acme-kv', match: { prefix: 'ACME ' }, kv: { fields: { src_ip: ['s'], dst_ip: ['d'] } } },
      {
        name: 'pipes',
        match: { contains: '|v2|' },
        csv: { delimiter: '|', fields: { src_ip: 2, dst_ip: 3 } },
      },
    ];
    expect(parseLine('auto', line, { rules })).toMatchObject({
      vendor: 'structured-data',
      src_ip: '10.0.0.5',
    });
    expect(parseLine('auto', '<13>Jan 15 10:00:00 h ACME s=10.0.0.1 d=10.0.0.2', { rules })).toMatchObject({
      vendor: 'kv',
      dst_ip: '10.0.0.2',
    });
    expect(parseLine('auto', 'x|v2|10.0.0.1|10.0.0.3', { rules })).toMatchObject({
      vendor: 'csv',
      dst_ip: '10.0.0.3',
    });
    // Lines no rule matches still go through the built-in detection.
    expect(parseLine('auto', 'date=2024-01-15 time=10:00:00 srcip=10.0.0.1', { rules }).vendor).toBe(
      'fortigate',
    );
    expect(() => new LineParser({ format: 'auto', rules: [{ kv: { fields: {} } }] })).toThrow(
      /match.prefix or match.contains/,
    );
    expect(() => new LineParser({ format: 'auto', rules: [{ match: { prefix: 'x' } }] })).toThrow(
      /exactly one/,
    );
  });
});
