/**
 * RowBinary round trip: the same batch encoded as TabSeparated and as RowBinary is inserted into
 * two identical tables of a real ClickHouse engine (chdb, in-process); every stored value, every
 * row count and every dead-letter decision must be identical. Covers every type the column plan
 * accepts: String, LowCardinality, Nullable, [U]Int8..64 (text and numbers), Enum8/Enum16
 * (explicit and implicit values), DateTime, DateTime64(0/3/6/9), IPv4, IPv6 (IPv4-mapped), static.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Session } from 'chdb';
import { generateSampleLines } from '../../../test/fixtures/samples';
import { BatchEncoder, MessageInput } from './batch';
import { ColumnInput } from './column-plan';
import { parseColumnType } from '../../../common/src/columns/column-type';
import { NativeBlockBuilder, nativeLayout } from './native-block';
import { REFERENCE_COLUMNS } from './reference-columns';

const INGEST = Date.UTC(2024, 0, 15, 12, 0, 0, 789);
const EXTRA: ColumnInput[] = [
  { name: 'kafka_line', type: 'UInt32', source: 'kafka_line' },
  { name: 'src_ip_text', type: 'String', source: 'src_ip' },
  { name: 'nat_ip4', type: 'Nullable(IPv4)', source: 'field:transip' },
  { name: 'dst_ip4', type: 'IPv4', source: 'field:dstip4' },
  { name: 'ts_sec', type: "DateTime('Europe/Istanbul')", source: 'timestamp' },
  { name: 'ts_s0', type: 'DateTime64(0)', source: 'timestamp' },
  { name: 'ts_cs', type: 'DateTime64(2)', source: 'timestamp' },
  { name: 'ts_us', type: "DateTime64(6, 'Asia/Kolkata')", source: 'timestamp' },
  { name: 'ts_ns', type: 'Nullable(DateTime64(9))', source: 'field:when' },
  { name: 'ts_ms', type: 'Int64', source: 'timestamp' },
  { name: 'ts_text', type: 'String', source: 'ingest_time' },
  { name: 'severity_name', type: 'LowCardinality(Nullable(String))', source: 'severity' },
  { name: 'severity_num', type: 'Nullable(UInt8)', source: 'severity' },
  { name: 'vendor_name', type: 'String', source: 'vendor' },
  { name: 'proto_num', type: 'Nullable(UInt8)', source: 'proto' },
  { name: 'proto_enum', type: "Enum16('unknown', 'tcp', 'udp', 'icmp')", source: 'proto' },
  { name: 'policy', type: 'Nullable(String)', source: 'field:policyname' },
  { name: 'i8', type: 'Nullable(Int8)', source: 'field:i8' },
  { name: 'i16', type: 'Int16', source: 'field:i16' },
  { name: 'i32', type: 'Nullable(Int32)', source: 'field:i32' },
  { name: 'u32', type: 'UInt32', source: 'field:u32' },
  { name: 'i64', type: 'Nullable(Int64)', source: 'field:i64' },
  { name: 'u64', type: 'Nullable(UInt64)', source: 'field:u64' },
  { name: 'level_enum', type: "Nullable(Enum8('low' = -3, 'high' = 100))", source: 'field:lvl' },
  { name: 'port_text', type: 'String', source: 'src_port' },
  { name: 'site', type: 'LowCardinality(String)', source: 'static:site' },
  { name: 'site_num', type: 'Nullable(Int32)', source: 'static:num' },
  { name: 'site_ip', type: 'IPv6', source: 'static:ip' },
];
const COLUMNS = [...REFERENCE_COLUMNS, ...EXTRA];
const STATIC = { site: 'İstanbul\t"edge"\\1', num: '-42', ip: '192.0.2.7' };

const EDGE_LINES = [
  'date=2024-01-15 time=10:00:00 srcip=10.0.0.1 dstip=10.0.0.2 proto=6 msg="tab\there back\\\\slash quote\\" end" policyname="Çıkış ✓" i8=-128 i16=32767 i32=-2147483648 u32=4294967295 i64=-9223372036854775808 u64=18446744073709551615 lvl=low dstip4=192.0.2.1 when=2024-01-15T10:00:00.123456789Z',
  'date=2024-01-15 time=10:00:01 srcip=2001:db8::1 dstip=::ffff:192.0.2.1 msg="nul\u0000 bell\u0007 cr\rX" policyname="" i8=127 i16=-32768 i32=0 u32=0 i64=9223372036854775807 u64=0 lvl=high',
  'date=2024-01-15 time=10:00:02 srcip=10.0.0.3 dstip=10.0.0.4 i8=128 msg="i8 out of range: dead letter"',
  'date=2024-01-15 time=10:00:03 srcip=10.0.0.3 dstip=10.0.0.4 u64=18446744073709551616 msg="u64 out of range"',
  'date=2024-01-15 time=10:00:04 srcip=10.0.0.3 dstip=10.0.0.4 lvl=medium msg="not an enum name"',
  'date=2024-01-15 time=10:00:05 srcip=10.0.0.3 dstip=10.0.0.4 dstip4=2001:db8::2 msg="v6 in IPv4"',
  'date=2024-01-15 time=10:00:06 srcip=10.0.0.3 dstip=10.0.0.4 i64=12345678901234567 u32=42 when=garbage',
  '%ASA-6-302013: Built outbound TCP connection 1 for outside:8.8.8.8/53 (8.8.8.8/53) to inside:192.168.1.10/40000 (1.1.1.1/40000)',
  'CEF:0|Acme\\|Corp|FW|1|9|Blocked \\\\ thing|High|src=10.9.9.9 dst=fe80::1 msg=line1\\nline2 \\= ok rt=1705312800999',
  '{"@timestamp":"2024-01-15T10:00:00.5Z","source":{"ip":"10.0.0.7"},"message":"😀 emoji\\u0000nul","event":{"action":"drop"}}',
];

function messagesOf(lines: Buffer[]): MessageInput[] {
  // Two lines per message for part of the batch: kafka_line must follow the line index.
  const out: MessageInput[] = [];
  for (let i = 0; i < lines.length; i++) {
    const value =
      i % 3 === 0 && i + 1 < lines.length
        ? Buffer.concat([lines[i], Buffer.from('\n'), lines[++i]])
        : lines[i];
    out.push({ value, topic: 'fw\\logs', partition: 5, offset: 1_000_000_000_000 + i });
  }
  return out;
}

// chdb start-up and the 3,000-line round trip take seconds on a loaded 2-core machine.
jest.setTimeout(60_000);

describe('RowBinary encoder', () => {
  let session: Session;
  let dir: string;
  const structure = COLUMNS.map((c) => `\`${c.name}\` ${c.type}`).join(', ');

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rowbinary-'));
    session = new Session();
    for (const t of ['t_tsv', 't_rb', 't_native'])
      await session.queryAsync(
        `CREATE TABLE ${t} (${structure}) ENGINE = MergeTree ORDER BY (kafka_offset, kafka_line)`,
      );
  });

  afterAll(() => {
    session.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function insertFile(table: string, format: string, body: Buffer): Promise<void> {
    const file = path.join(dir, `${table}.bin`);
    fs.writeFileSync(file, body);
    await session.queryAsync(
      `INSERT INTO ${table} SELECT * FROM file('${file}', '${format}', '${structure.replace(/'/g, "\\'")}')`,
    );
  }

  it('stores exactly what the TabSeparated encoder stores, with the same dead letters', async () => {
    const lines = [
      ...EDGE_LINES.map((l) => Buffer.from(l)),
      ...generateSampleLines('mix', 3000, { seed: 11, malformedRatio: 0.05 }),
    ];
    const messages = messagesOf(lines);
    const opts = {
      parser: { format: 'auto', timezone: 'Europe/Istanbul' },
      columns: COLUMNS,
      staticFields: STATIC,
    };
    const tsv = new BatchEncoder(opts).encode(messages, INGEST);
    const tsvData = Buffer.from(tsv.data);
    const rb = new BatchEncoder({ ...opts, format: 'RowBinary' }).encode(messages, INGEST);
    expect(rb.rows).toBe(tsv.rows);
    expect(rb.rows).toBeGreaterThan(2500);
    expect(rb.deadLetters.map((d) => [d.reason, d.messageIndex, d.lineIndex])).toEqual(
      tsv.deadLetters.map((d) => [d.reason, d.messageIndex, d.lineIndex]),
    );
    expect([...new Set(rb.deadLetters.map((d) => d.reason))]).toEqual(
      expect.arrayContaining(['bad_value:i8', 'bad_value:u64', 'bad_value:level_enum', 'bad_value:dst_ip4']),
    );
    // The row index cuts the body into rows: rows + 1 increasing offsets ending at the body's end.
    expect(rb.rowStarts).toHaveLength(rb.rows + 1);
    expect(rb.rowStarts![0]).toBe(0);
    expect(rb.rowStarts![rb.rows]).toBe(rb.data.length);
    await insertFile('t_tsv', 'TabSeparated', tsvData);
    await insertFile('t_rb', 'RowBinary', Buffer.from(rb.data));
    const enc = new BatchEncoder({ ...opts, format: 'RowBinary' });
    const again = enc.encode(messages, INGEST);
    const native = new NativeBlockBuilder(nativeLayout(enc.plan)).build(
      again.data,
      again.rowStarts!,
      0,
      again.rows,
    );
    const file = path.join(dir, 'block.native');
    fs.writeFileSync(file, native);
    await session.queryAsync(`INSERT INTO t_native SELECT * FROM file('${file}', 'Native')`);
    const dump = async (t: string) =>
      (
        await session.queryAsync(`SELECT * FROM ${t} ORDER BY kafka_offset, kafka_line`, {
          format: 'TabSeparated',
        })
      ).text();
    const [a, b] = [await dump('t_tsv'), await dump('t_rb')];
    expect(a.split('\n').length).toBe(tsv.rows + 1);
    expect(b).toBe(a);
    expect(await dump('t_native')).toBe(a);
    // Spot checks of the extremes (in both tables by the equality above).
    const first = (
      await session.queryAsync(
        "SELECT i8, i16, i32, u32, toString(i64), toString(u64), level_enum, toString(dst_ip4), toString(ts_ns), site_num, toString(site_ip) FROM t_rb WHERE policy = 'Çıkış ✓'",
        { format: 'TabSeparated' },
      )
    ).text();
    expect(first.trim()).toBe(
      '-128\t32767\t-2147483648\t4294967295\t-9223372036854775808\t18446744073709551615\tlow\t192.0.2.1\t2024-01-15 10:00:00.123000000\t-42\t::ffff:192.0.2.7',
    );
  });

  it('cuts a row range out of the body that inserts on its own (row isolation)', async () => {
    const lines = generateSampleLines('fortigate', 50, { seed: 3 });
    const enc = new BatchEncoder({
      parser: { format: 'auto', timezone: 'UTC' },
      columns: COLUMNS,
      staticFields: STATIC,
      format: 'RowBinary',
    });
    const batch = enc.encode(messagesOf(lines), INGEST);
    const s = batch.rowStarts!;
    await session.queryAsync('TRUNCATE TABLE t_rb');
    await insertFile('t_rb', 'RowBinary', Buffer.from(batch.data.subarray(s[10], s[20])));
    const n = (await session.queryAsync('SELECT count() FROM t_rb', { format: 'TabSeparated' }))
      .text()
      .trim();
    expect(n).toBe('10');
  });

  it('builds Native blocks of row ranges and of reordered rows (isolation, regrouping)', async () => {
    const lines = generateSampleLines('mix', 200, { seed: 5 });
    const enc = new BatchEncoder({
      parser: { format: 'auto', timezone: 'UTC' },
      columns: COLUMNS,
      staticFields: STATIC,
      format: 'RowBinary',
    });
    const batch = enc.encode(messagesOf(lines), INGEST);
    const builder = new NativeBlockBuilder(nativeLayout(enc.plan));
    const file = path.join(dir, 'part.native');
    await session.queryAsync('TRUNCATE TABLE t_native');
    fs.writeFileSync(file, builder.build(batch.data, batch.rowStarts!, 10, 30));
    await session.queryAsync(`INSERT INTO t_native SELECT * FROM file('${file}', 'Native')`);
    fs.writeFileSync(file, builder.build(batch.data, batch.rowStarts!, 0, 0, Uint32Array.from([40, 35, 31])));
    await session.queryAsync(`INSERT INTO t_native SELECT * FROM file('${file}', 'Native')`);
    await session.queryAsync('TRUNCATE TABLE t_rb');
    const s = batch.rowStarts!;
    for (const [a, b] of [
      [10, 30],
      [31, 32],
      [35, 36],
      [40, 41],
    ]) {
      fs.writeFileSync(path.join(dir, 'x.bin'), batch.data.subarray(s[a], s[b]));
      await session.queryAsync(
        `INSERT INTO t_rb SELECT * FROM file('${path.join(dir, 'x.bin')}', 'RowBinary', '${structure.replace(/'/g, "\\'")}')`,
      );
    }
    const dump = async (t: string) =>
      (
        await session.queryAsync(`SELECT * FROM ${t} ORDER BY kafka_offset, kafka_line`, {
          format: 'TabSeparated',
        })
      ).text();
    const got = await dump('t_native');
    expect(got.split('\n').length).toBe(24);
    expect(got).toBe(await dump('t_rb'));
  });

  it.each(['RowBinary', 'TabSeparated'] as const)(
    'stores integer text with leading zeros (%s)',
    async (format) => {
      // ClickHouse's TSV reader stops an integer at a leading 0 ("007" -> "expected tab before 07"):
      // the TSV writer must write the canonical digits, RowBinary carries the value itself.
      const line = Buffer.from(
        'date=2024-01-15 time=10:00:00 srcip=10.0.0.1 dstip=10.0.0.2 u32=007 u64=000 i16=-0007',
      );
      const enc = new BatchEncoder({
        parser: { format: 'auto', timezone: 'UTC' },
        columns: COLUMNS,
        staticFields: STATIC,
        format,
      });
      const batch = enc.encode([{ value: line, topic: 't', partition: 0, offset: 7 }], INGEST);
      expect(batch.rows).toBe(1);
      const table = format === 'RowBinary' ? 't_rb' : 't_tsv';
      await session.queryAsync(`TRUNCATE TABLE ${table}`);
      await insertFile(table, format, Buffer.from(batch.data));
      const got = (
        await session.queryAsync(`SELECT u32, u64, i16 FROM ${table}`, { format: 'TabSeparated' })
      ).text();
      expect(got).toBe('7\t0\t-7\n');
    },
  );

  it('reads enum values, implicit ones counting from 1', () => {
    expect(parseColumnType("Enum8('a', 'b')").enumValues).toEqual([1, 2]);
    expect(parseColumnType("Enum16('a' = -5, 'b' = 300)").enumValues).toEqual([-5, 300]);
    expect(() => parseColumnType("Enum8('a' = 1, 'b')")).toThrow(RangeError);
  });
});
