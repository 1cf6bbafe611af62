import { ms, parseLine } from '../../../test/fixtures/parse-support';

describe('json', () => {
  it('maps ECS nested keys and flattens them into dotted field names', () => {
    const row = parseLine(
      'json',
      JSON.stringify({
        '@timestamp': '2024-01-15T10:23:45.123Z',
        source: { ip: '10.1.1.1', port: 5555, bytes: 100 },
        destination: { ip: '8.8.4.4', port: 53, bytes: 300 },
        network: { transport: 'udp' },
        event: { action: 'allow', severity: 3 },
        observer: { name: 'edge-1' },
        rule: { name: 'dns-out' },
        message: 'flow "record"\twith tab',
        tags: ['a', 'b'],
      }),
    );
    expect(row).toMatchObject({
      vendor: 'json',
      timestamp: ms('2024-01-15T10:23:45.123Z'),
      src_ip: '10.1.1.1',
      src_port: 5555,
      dst_ip: '8.8.4.4',
      dst_port: 53,
      proto: 'udp',
      action: 'allow',
      bytes: 400,
      rule: 'dns-out',
      device: 'edge-1',
      message: 'flow "record"\twith tab',
      'field:network.transport': 'udp',
      'field:tags': '["a","b"]',
    });
  });

  it('accepts flat vendor keys, epoch seconds/ms numbers and strings, and unicode', () => {
    const row = parseLine(
      'json',
      '{"time":1705303425,"srcip":"2001:db8::1","dstip":"2001:db8::2","sport":"1234","dport":443,"proto":6,"action":"reject","bytes":"900","level":"warning","host":"px","msg":"Ünïcödé ✓"}',
    );
    expect(row).toMatchObject({
      timestamp: 1705303425000,
      src_ip: '2001:db8::1',
      src_port: 1234,
      proto: 'tcp',
      action: 'deny',
      bytes: 900,
      severity: 4,
      device: 'px',
      message: 'Ünïcödé ✓',
    });
    expect(parseLine('json', '{"timestamp":1705303425123}').timestamp).toBe(1705303425123);
    expect(parseLine('json', '{"timestamp":"1705303425.5"}').timestamp).toBe(1705303425500);
    expect(parseLine('json', '{"ts":"2024-01-15 10:23:45"}', { timezone: 'Europe/Istanbul' }).timestamp).toBe(
      ms('2024-01-15T07:23:45Z'),
    );
  });

  it('first alias wins, a total byte count beats parts, and null values are absent', () => {
    const row = parseLine(
      'json',
      '{"src_ip":"10.0.0.1","srcip":"10.0.0.2","bytes_sent":5,"bytes":7,"rule":null}',
    );
    expect(row).toMatchObject({ src_ip: '10.0.0.1', bytes: 7, rule: null });
  });

  it('works behind a syslog header', () => {
    expect(
      parseLine('auto', '<14>Jan 15 10:23:45 k8s app[7]: {"src_ip":"10.0.0.1","action":"drop"}'),
    ).toMatchObject({ vendor: 'json', action: 'drop', device: 'k8s' });
  });

  it.each([
    ['{"src_ip":"10.0.0.1"', 'bad_json'],
    ['{bad}', 'bad_json'],
    ['[1,2]', 'json_not_object'],
    ['"text"', 'json_not_object'],
    ['{"src_ip":"10.0.0"}', 'invalid_ip'],
    ['{"dst_port":65536}', 'invalid_port'],
    ['{"timestamp":"soon"}', 'bad_timestamp'],
    ['{"timestamp":12}', 'bad_timestamp'],
  ])('dead-letters %s', (line, reason) => {
    expect(parseLine('json', line)).toEqual({ deadLetter: reason });
  });
});
