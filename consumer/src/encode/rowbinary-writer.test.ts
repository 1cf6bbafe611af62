/**
 * RowBinary round trip: the same batch encoded as TabSeparated and as RowBinary is inserted into
 * two identical tables of a real ClickHouse engine (chdb, in-process); every stored value, every
 * row count and every dead-letter decision must be identical. Covers every type the column plan
 * accepts: String, LowCardinality, Nullable, [U]Int8..64 (text and numbers), Enum8/Enum16
 * (explicit and implicit values), DateTime, DateTime64(0/3/6/9), IPv4, IPv6 (IPv4-mapped), static.
 * The Native prototype's equivalent lives in bench/native-block.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Session } from 'chdb';
import { generateSampleLines } from '../../../test/fixtures/samples';
import { BatchEncoder } from './batch';
import { parseColumnType } from '../../../common/src/columns/column-type';
import { COLUMNS, EDGE_LINES, INGEST, messagesOf, STATIC } from '../../../test/fixtures/rowbinary-columns';

// chdb start-up and the 3,000-line round trip take seconds on a loaded 2-core machine.
jest.setTimeout(60_000);

describe('RowBinary encoder', () => {
  let session: Session;
  let dir: string;
  const structure = COLUMNS.map((c) => `\`${c.name}\` ${c.type}`).join(', ');

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rowbinary-'));
    session = new Session();
    for (const t of ['t_tsv', 't_rb'])
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
    const dump = async (t: string) =>
      (
        await session.queryAsync(`SELECT * FROM ${t} ORDER BY kafka_offset, kafka_line`, {
          format: 'TabSeparated',
        })
      ).text();
    const [a, b] = [await dump('t_tsv'), await dump('t_rb')];
    expect(a.split('\n').length).toBe(tsv.rows + 1);
    expect(b).toBe(a);
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
