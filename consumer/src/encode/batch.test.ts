import { BatchEncoder, MessageInput } from './batch';
import { ACTION_ENUM } from './reference-columns';

const INGEST = Date.UTC(2024, 0, 15, 12, 0, 0, 5);

function msg(value: string | Buffer | null, offset = 0): MessageInput {
  return {
    value: typeof value === 'string' ? Buffer.from(value) : value,
    topic: 'fw-logs',
    partition: 3,
    offset: String(offset),
  };
}

function encoder(
  columns: Array<{ name: string; type: string; source: string }>,
  format = 'auto',
  staticFields = {},
): BatchEncoder {
  return new BatchEncoder({
    parser: { format, timezone: 'UTC' },
    columns,
    staticFields,
    initialBufferBytes: 64,
  });
}

const FG =
  'date=2024-01-15 time=10:00:00 srcip=10.0.0.1 dstip=2001:db8::1 srcport=1234 proto=6 action=deny policyid=7';

describe('BatchEncoder', () => {
  it('RowBinary: quoted values with and without backslash escapes read alike (no per-message scan)', () => {
    const enc = new BatchEncoder({
      parser: { format: 'fortigate', timezone: 'UTC' },
      columns: [
        { name: 'message', type: 'String', source: 'message' },
        { name: 'rule', type: 'String', source: 'rule' },
      ],
      format: 'RowBinary',
    });
    const lines = ['msg="a \\"b\\" c" policyid="7"', 'msg="plain" policyid="8\\\\"'];
    const out = enc.encode(
      lines.map((l, i) => msg(l, i)),
      INGEST,
    );
    expect(out.rows).toBe(2);
    const str = (v: string): Buffer => Buffer.concat([Buffer.of(v.length), Buffer.from(v)]);
    expect(out.data).toEqual(Buffer.concat([str('a "b" c'), str('7'), str('plain'), str('8\\')]));
  });

  it('writes each message its own topic when topics change between messages and batches', () => {
    const enc = encoder([{ name: 'topic', type: 'String', source: 'kafka_topic' }], 'fortigate');
    const on = (topic: string, offset: number): MessageInput => ({ ...msg(FG, offset), topic });
    const topics = (out: { data: Buffer }): string[] => out.data.toString().trimEnd().split('\n');
    expect(topics(enc.encode([on('a', 1), on('a', 2), on('b', 3), on('', 4), on('a', 5)], INGEST))).toEqual([
      'a',
      'a',
      'b',
      '',
      'a',
    ]);
    expect(topics(enc.encode([on('a', 6), on('c\td', 7)], INGEST))).toEqual(['a', 'c\\td']);
  });

  it('writes TSV rows with enrichment, epoch DateTime64 text, enum names and NULLs', () => {
    const enc = encoder(
      [
        { name: 'ts', type: "DateTime64(3, 'UTC')", source: 'timestamp' },
        { name: 'ingest', type: 'DateTime', source: 'ingest_time' },
        { name: 'src', type: 'IPv6', source: 'src_ip' },
        { name: 'dst', type: 'IPv6', source: 'dst_ip' },
        { name: 'sport', type: 'Nullable(UInt16)', source: 'src_port' },
        { name: 'dport', type: 'Nullable(UInt16)', source: 'dst_port' },
        { name: 'dport0', type: 'UInt16', source: 'dst_port' },
        { name: 'proto', type: 'LowCardinality(String)', source: 'proto' },
        { name: 'protonum', type: 'UInt8', source: 'proto' },
        { name: 'action', type: ACTION_ENUM, source: 'action' },
        { name: 'action_code', type: 'UInt8', source: 'action' },
        { name: 'rule', type: 'String', source: 'rule' },
        { name: 'topic', type: 'String', source: 'kafka_topic' },
        { name: 'part', type: 'UInt16', source: 'kafka_partition' },
        { name: 'off', type: 'UInt64', source: 'kafka_offset' },
        { name: 'site', type: 'String', source: 'static:site' },
      ],
      'fortigate',
      { site: 'ist\t1' },
    );
    const out = enc.encode([msg(FG, 42)], INGEST);
    expect(out.rows).toBe(1);
    expect(out.data.toString()).toBe(
      '1705312800.000\t1705320000\t10.0.0.1\t2001:db8::1\t1234\t\\N\t0\ttcp\t6\tdeny\t2\t7\tfw-logs\t3\t42\tist\\t1\n',
    );
  });

  it('splits multi-line messages, strips CR, counts blank lines and dead-letters per line with positions', () => {
    const enc = encoder([{ name: 'raw', type: 'String', source: 'raw' }], 'fortigate');
    const value = `${FG}\r\n\r\nbroken line\n${FG} msg="tab\there"\n`;
    const out = enc.encode([msg(value, 7), msg(null, 8), msg('', 9)], INGEST);
    expect(out.lines).toBe(6);
    expect(out.rows).toBe(2);
    expect(out.data.toString()).toBe(`${FG}\n${FG} msg="tab\\there"\n`);
    expect(
      out.deadLetters.map((d) => [d.reason, d.messageIndex, d.lineIndex, d.offset, d.line.toString()]),
    ).toEqual([['bad_kv', 0, 2, '7', 'broken line']]);
    // Issue 12: blank lines and empty messages are counted, not dead-lettered.
    expect(out.blankLines).toBe(3);
  });

  it('escapes tab, LF, CR and backslash in every string source', () => {
    const enc = encoder(
      [
        { name: 'raw', type: 'String', source: 'raw' },
        { name: 'msg', type: 'String', source: 'message' },
        { name: 'user', type: 'String', source: 'field:user' },
      ],
      'fortigate',
    );
    const line = 'srcip=10.0.0.1 user="a\\\\b" msg="x\\"y\tz\rq"';
    const out = enc.encode([msg(line)], INGEST);
    expect(out.data.toString()).toBe(
      'srcip=10.0.0.1 user="a\\\\\\\\b" msg="x\\\\"y\\tz\\rq"\tx"y\\tz\\rq\ta\\\\b\n',
    );
  });

  it('uses ingest time for clock-less lines and type defaults for absent values', () => {
    const enc = encoder(
      [
        { name: 'ts', type: "DateTime64(6, 'UTC')", source: 'timestamp' },
        { name: 'ts0', type: 'DateTime64(0)', source: 'timestamp' },
        { name: 'ms', type: 'Int64', source: 'timestamp' },
        { name: 'src4', type: 'IPv4', source: 'src_ip' },
        { name: 'src6', type: 'IPv6', source: 'src_ip' },
        { name: 'nsrc', type: 'Nullable(IPv4)', source: 'src_ip' },
        { name: 'sev', type: 'String', source: 'severity' },
        { name: 'dev', type: 'LowCardinality(Nullable(String))', source: 'device' },
        { name: 'missing', type: 'Nullable(UInt32)', source: 'field:nope' },
        { name: 'kind', type: "Enum8('traffic' = 1, 'unknown' = 0)", source: 'field:nope' },
        { name: 'kind2', type: "Enum8('traffic' = 1, 'event' = 2)", source: 'field:nope' },
      ],
      'cisco-asa',
    );
    const out = enc.encode([msg('%ASA-5-111008: User executed a command.')], INGEST);
    expect(out.data.toString()).toBe(
      '1705320000.005000\t1705320000\t1705320000005\t0.0.0.0\t::\t\\N\tnotice\t\\N\t\\N\tunknown\ttraffic\n',
    );
  });

  it('dead-letters rows whose values do not fit their column (bad_value:<column>)', () => {
    const enc = encoder(
      [
        { name: 'src4', type: 'IPv4', source: 'src_ip' },
        { name: 'dur', type: 'UInt8', source: 'field:duration' },
      ],
      'fortigate',
    );
    const out = enc.encode(
      [msg('srcip=2001:db8::1'), msg('srcip=10.0.0.1 duration=300'), msg('srcip=10.0.0.1 duration=255')],
      INGEST,
    );
    expect(out.deadLetters.map((d) => d.reason)).toEqual(['bad_value:src4', 'bad_value:dur']);
    expect(out.data.toString()).toBe('10.0.0.1\t255\n');
  });

  it('validates typed field: values (ints exact to 64 bits, IPs, enums, clocks)', () => {
    const enc = encoder(
      [
        { name: 'big', type: 'Nullable(UInt64)', source: 'field:big' },
        { name: 'neg', type: 'Nullable(Int8)', source: 'field:neg' },
        { name: 'ip', type: 'Nullable(IPv6)', source: 'field:ip' },
        { name: 'kind', type: "Nullable(Enum8('traffic' = 1, 'event' = 2))", source: 'field:type' },
        { name: 'when', type: 'Nullable(DateTime)', source: 'field:when' },
      ],
      'fortigate',
    );
    const good = enc.encode(
      [msg('big=18446744073709551615 neg=-128 ip=fe80::1%eth0 type=event when="2024-01-15T10:00:00Z"')],
      INGEST,
    );
    expect(good.data.toString()).toBe('18446744073709551615\t-128\tfe80::1\tevent\t1705312800\n');
    const bad = ['big=18446744073709551616', 'neg=-129', 'ip=10.0.0', 'type=utm', 'when=never', 'big=12a'];
    const out = enc.encode(
      bad.map((b) => msg(b)),
      INGEST,
    );
    expect(out.deadLetters.map((d) => d.reason)).toEqual([
      'bad_value:big',
      'bad_value:neg',
      'bad_value:ip',
      'bad_value:kind',
      'bad_value:when',
      'bad_value:big',
    ]);
  });

  it('is deterministic: same messages and ingest time give identical bytes; ranges select messages', () => {
    const enc = encoder([
      { name: 'ts', type: "DateTime64(3, 'UTC')", source: 'timestamp' },
      { name: 'raw', type: 'String', source: 'raw' },
      { name: 'off', type: 'UInt64', source: 'kafka_offset' },
    ]);
    const messages = [msg('<13>Dec 31 23:59:59 h a: x', 1), msg(FG, 2), msg('<13>Jan  1 00:00:01 h a: y', 3)];
    const first = Buffer.from(enc.encode(messages, INGEST).data);
    enc.encode([msg('other')], INGEST + 99_999);
    expect(Buffer.compare(enc.encode(messages, INGEST).data, first)).toBe(0);
    const tail = enc.encode(messages, INGEST, 1, 3).data.toString();
    expect(first.toString().endsWith(tail)).toBe(true);
    expect(tail.startsWith('1705312800.000')).toBe(true);
    // The year of year-less stamps follows the batch's ingest time, not the wall clock.
    expect(first.toString().startsWith('1704067199.000')).toBe(true);
  });

  it('dead-letters only the invalid UTF-8 line of a multi-line message and grows its buffer', () => {
    const enc = encoder([{ name: 'raw', type: 'String', source: 'raw' }], 'fortigate');
    const value = Buffer.concat([
      Buffer.from(`${FG}\nsrcip=10.0.0.1 msg="`),
      Buffer.of(0xff),
      Buffer.from(`"\n${FG} msg="${'é'.repeat(200)}"`),
    ]);
    const out = enc.encode([msg(value)], INGEST);
    expect(out.rows).toBe(2);
    expect(out.deadLetters.map((d) => [d.reason, d.lineIndex])).toEqual([['invalid_utf8', 1]]);
    expect(out.data.toString()).toContain('é'.repeat(200));
  });
});

describe('BatchEncoder retention check', () => {
  it('dead-letters rows older than the table keeps instead of letting ClickHouse drop them', () => {
    const day = 86_400_000;
    const ingest = Date.UTC(2026, 11, 2);
    const encoder = new BatchEncoder({
      parser: { format: 'json', timezone: 'UTC' },
      columns: [{ name: 'ts', type: "DateTime64(3, 'UTC')", source: 'timestamp' }],
      retainMs: 730 * day,
    });
    const line = (ms: number) =>
      Buffer.from(JSON.stringify({ timestamp: new Date(ms).toISOString(), src_ip: '10.0.0.1' }));
    const out = encoder.encode(
      [
        { topic: 't', partition: 0, offset: 1, value: line(ingest - 10 * day) },
        { topic: 't', partition: 0, offset: 2, value: line(ingest - 800 * day) },
      ],
      ingest,
    );
    expect(out.rows).toBe(1);
    expect(out.deadLetters.map((d) => [d.offset, d.reason])).toEqual([['2', 'expired_timestamp']]);
  });
});

describe('BatchEncoder floods (issue 12)', () => {
  it('caps lines per message: the excess is one too_many_lines dead letter', () => {
    const enc = new BatchEncoder({
      parser: { format: 'fortigate', timezone: 'UTC' },
      columns: [{ name: 'raw', type: 'String', source: 'raw' }],
      maxLinesPerMessage: 3,
    });
    const value = [FG, '', FG, FG, FG, 'x'].join('\n');
    const out = enc.encode([msg(value, 5)], INGEST);
    // Blank lines do not count against the cap.
    expect([out.rows, out.blankLines]).toEqual([3, 1]);
    expect(out.deadLetters.map((d) => [d.reason, d.lineIndex, d.line.toString()])).toEqual([
      ['too_many_lines', 4, `${FG}\nx`],
    ]);
  });

  it('a message of 900,000 newlines is 900,000 blank lines and no dead letter', () => {
    const enc = new BatchEncoder({
      parser: { format: 'auto', timezone: 'UTC' },
      columns: [{ name: 'raw', type: 'String', source: 'raw' }],
    });
    const out = enc.encode([msg(Buffer.alloc(900_000, 10), 1)], INGEST);
    expect([out.rows, out.blankLines, out.deadLetters.length]).toEqual([0, 900_000, 0]);
  });
});
