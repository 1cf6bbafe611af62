import { createHash } from 'node:crypto';
import { canonicalIp } from './canonical-ip';
import { BatchDigester, digestTsv, parseEpochMs } from './canonical';

const COLUMNS = [
  { name: 'ts', type: "DateTime64(3, 'UTC')" },
  { name: 'vendor', type: 'LowCardinality(String)' },
  { name: 'device', type: 'LowCardinality(String)' },
  { name: 'src_ip', type: 'IPv6' },
  { name: 'dst_ip', type: 'IPv4' },
  { name: 'src_port', type: 'Nullable(UInt16)' },
  { name: 'action', type: "Enum8('unknown' = 0, 'allow' = 1)" },
  { name: 'bytes', type: 'Int64' },
  { name: 'raw', type: 'String' },
  { name: 'kafka_offset', type: 'UInt64' },
];

const sha = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

describe('canonical IP form', () => {
  it.each([
    ['10.1.2.3', '00000000000000000000ffff0a010203'],
    ['0.0.0.0', '00000000000000000000ffff00000000'],
    ['::', '00000000000000000000000000000000'],
    ['::1', '00000000000000000000000000000001'],
    ['2001:DB8::1', '20010db8000000000000000000000001'],
    ['2001:db8:0:0:1:0:0:1', '20010db8000000000001000000000001'],
    ['::ffff:192.168.0.1', '00000000000000000000ffffc0a80001'],
    ['fe80::', 'fe800000000000000000000000000000'],
    ['1:2:3:4:5:6:7:8', '00010002000300040005000600070008'],
    ['1::2:3:4:5:6:7', '00010000000200030004000500060007'],
  ])('%s -> %s', (text, hex) => expect(canonicalIp(text)).toBe(hex));

  it.each([
    '',
    '1.2.3',
    '256.1.1.1',
    '1.2.3.4.5',
    ':::',
    '1::2::3',
    '1:2:3:4:5:6:7:8:9',
    '12345::',
    'g::1',
    '1:2:3:4:5:6:7:',
  ])('rejects %p', (text) => expect(canonicalIp(text)).toBeNull());
});

describe('parseEpochMs', () => {
  it.each([
    ['1767225600', 1767225600000],
    ['1767225600.5', 1767225600500],
    ['1767225600.123', 1767225600123],
    ['1767225600.123456', 1767225600123],
    ['1767225600.', -1],
    ['x', -1],
    ['17672256a0', -1],
  ])('%s -> %d', (text, ms) => {
    const b = Buffer.from(text);
    expect(parseEpochMs(b, 0, b.length)).toBe(ms);
  });
});

describe('BatchDigester', () => {
  const row1 = '1767225600.123\tfortigate\tfw1\t10.1.2.3\t8.8.8.8\t443\tallow\t0042\ta\\tb\\\\c\t100\n';
  const row2 = '1767225601.000\tfortigate\tfw1\t2001:DB8::1\t1.1.1.1\t\\N\tunknown\t-0\tplain line\t101\n';
  const canonical1 =
    '1767225600123\tfortigate\tfw1\t00000000000000000000ffff0a010203\t00000000000000000000ffff08080808\t443\tallow\t42\ta\\tb\\\\c\t100\n';
  const canonical2 =
    '1767225601000\tfortigate\tfw1\t20010db8000000000000000000000001\t00000000000000000000ffff01010101\t\\N\tunknown\t0\tplain line\t101\n';

  it('hashes the documented canonical rows', () => {
    const sum = digestTsv(COLUMNS, Buffer.from(row1 + row2));
    expect(sum).toEqual({
      digest: sha(canonical1 + canonical2),
      rows: 2,
      minTsMs: 1767225600123,
      maxTsMs: 1767225601000,
    });
  });

  it('gives the same digest however the payload is split and with a tiny scratch buffer', () => {
    const whole = digestTsv(COLUMNS, Buffer.from(row1 + row2));
    const d = new BatchDigester(COLUMNS, { scratchBytes: 16 });
    const buf = Buffer.from(row1 + row2);
    expect(d.addTsv(buf, 0, row1.length)).toBeNull();
    expect(d.addTsv(buf, row1.length)).toBeNull();
    expect(d.finish()).toEqual(whole);
  });

  it('is order sensitive and value sensitive', () => {
    const base = digestTsv(COLUMNS, Buffer.from(row1 + row2)).digest;
    expect(digestTsv(COLUMNS, Buffer.from(row2 + row1)).digest).not.toBe(base);
    expect(digestTsv(COLUMNS, Buffer.from(row1.replace('443', '444') + row2)).digest).not.toBe(base);
  });

  it('treats equivalent spellings ClickHouse stores identically as the same value', () => {
    const a = digestTsv(COLUMNS, Buffer.from(row1)).digest;
    const b = digestTsv(
      COLUMNS,
      Buffer.from(row1.replace('10.1.2.3', '::ffff:10.1.2.3').replace('0042', '42')),
    ).digest;
    expect(b).toBe(a);
  });

  it('reports malformed payloads instead of throwing', () => {
    const d = new BatchDigester(COLUMNS);
    expect(d.addTsv(Buffer.from(row1.replace('10.1.2.3', 'not-an-ip')))).toMatch(
      /row 0: column src_ip: not an IP address/,
    );
    d.reset();
    expect(d.addTsv(Buffer.from('1767225600\tx\n'))).toMatch(/too few columns/);
    d.reset();
    expect(d.addTsv(Buffer.from(row1.slice(0, -1)))).toMatch(/not newline-terminated/);
  });

  it('reports an empty batch with zero rows', () => {
    expect(digestTsv(COLUMNS, Buffer.alloc(0))).toEqual({ digest: sha(''), rows: 0, minTsMs: 0, maxTsMs: 0 });
  });

  it('rejects columns without a canonical form and a missing time column at construction', () => {
    expect(() => new BatchDigester([{ name: 'ts', type: 'Float64' }])).toThrow(/Float64/);
    expect(() => new BatchDigester([{ name: 'x', type: 'String' }])).toThrow(/time column/);
  });

  describe('without a line column (rows of one offset sorted)', () => {
    // Three rows of offset 100 (one packed message) in encoder order, then one of offset 101.
    const m1 = row1;
    const m2 = row1.replace('fw1', 'fw0');
    const m3 = row1.replace('a\\tb', 'a');
    const tail = row2;

    it('hashes the rows of one offset in canonical byte order (without the newline), offsets in order', () => {
      const sorted = digestTsv(COLUMNS, Buffer.from(m1 + m2 + m3 + tail), 'ts', 'kafka_offset');
      const shuffled = digestTsv(COLUMNS, Buffer.from(m3 + m1 + m2 + tail), 'ts', 'kafka_offset');
      expect(shuffled).toEqual(sorted);
      // The expected bytes: canonical rows of offset 100 sorted as strings, then offset 101.
      const c = (r: string) =>
        r
          .replace('1767225600.123', '1767225600123')
          .replace('10.1.2.3', '00000000000000000000ffff0a010203')
          .replace('8.8.8.8', '00000000000000000000ffff08080808')
          .replace('0042', '42');
      const group = [c(m1), c(m2), c(m3)].map((r) => r.slice(0, -1)).sort();
      expect(sorted.digest).toBe(sha(group.map((r) => r + '\n').join('') + canonical2));
      expect(sorted.rows).toBe(4);
      // Encoder order gives another digest: the mode matters.
      expect(digestTsv(COLUMNS, Buffer.from(m1 + m2 + m3 + tail)).digest).not.toBe(sorted.digest);
    });

    it('keeps groups intact across a tiny scratch buffer and split feeds', () => {
      const whole = digestTsv(COLUMNS, Buffer.from(m2 + m3 + m1 + tail), 'ts', 'kafka_offset');
      const d = new BatchDigester(COLUMNS, { scratchBytes: 16, sortByOffset: 'kafka_offset' });
      const buf = Buffer.from(m1 + m2 + m3 + tail);
      expect(d.addTsv(buf, 0, m1.length)).toBeNull();
      expect(d.addTsv(buf, m1.length)).toBeNull();
      expect(d.finish()).toEqual(whole);
    });

    it('refuses an offset column that is not written', () => {
      expect(() => new BatchDigester(COLUMNS, { sortByOffset: 'kafka_line' })).toThrow(
        /not an INSERT column/,
      );
    });
  });
});
