/**
 * The Native prototype (bench/native-block.ts, measured by bench/encode-format.ts, not used by the
 * worker): Native blocks built from RowBinary rows — a whole batch, a row range and reordered rows —
 * store exactly what the RowBinary rows store in a real ClickHouse engine (chdb, in-process).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Session } from 'chdb';
import { generateSampleLines } from '../test/fixtures/samples';
import { BatchEncoder } from '../consumer/src/encode/batch';
import { COLUMNS, EDGE_LINES, INGEST, messagesOf, STATIC } from '../test/fixtures/rowbinary-columns';
import { NativeBlockBuilder, nativeLayout } from './native-block';

// chdb start-up and the inserts take seconds on a loaded 2-core machine.
jest.setTimeout(60_000);

describe('Native blocks from RowBinary rows', () => {
  let session: Session;
  let dir: string;
  const structure = COLUMNS.map((c) => `\`${c.name}\` ${c.type}`).join(', ');
  const quoted = structure.replace(/'/g, "\\'");

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'native-'));
    session = new Session();
    for (const t of ['t_rb', 't_native'])
      await session.queryAsync(
        `CREATE TABLE ${t} (${structure}) ENGINE = MergeTree ORDER BY (kafka_offset, kafka_line)`,
      );
  });

  afterAll(() => {
    session.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function insert(table: string, format: string, body: Buffer): Promise<void> {
    const file = path.join(dir, `${table}.bin`);
    fs.writeFileSync(file, body);
    const structureArg = format === 'Native' ? '' : `, '${quoted}'`;
    await session.queryAsync(
      `INSERT INTO ${table} SELECT * FROM file('${file}', '${format}'${structureArg})`,
    );
  }

  const dump = async (t: string) =>
    (
      await session.queryAsync(`SELECT * FROM ${t} ORDER BY kafka_offset, kafka_line`, {
        format: 'TabSeparated',
      })
    ).text();

  function encode(lines: Buffer[]) {
    const enc = new BatchEncoder({
      parser: { format: 'auto', timezone: 'Europe/Istanbul' },
      columns: COLUMNS,
      staticFields: STATIC,
      format: 'RowBinary',
    });
    return {
      batch: enc.encode(messagesOf(lines), INGEST),
      builder: new NativeBlockBuilder(nativeLayout(enc.plan)),
    };
  }

  beforeEach(async () => {
    for (const t of ['t_rb', 't_native']) await session.queryAsync(`TRUNCATE TABLE ${t}`);
  });

  it('stores a whole batch exactly as its RowBinary body', async () => {
    const lines = [
      ...EDGE_LINES.map((l) => Buffer.from(l)),
      ...generateSampleLines('mix', 1000, { seed: 11, malformedRatio: 0.05 }),
    ];
    const { batch, builder } = encode(lines);
    expect(batch.rows).toBeGreaterThan(800);
    await insert('t_rb', 'RowBinary', Buffer.from(batch.data));
    await insert('t_native', 'Native', builder.build(batch.data, batch.rowStarts!, 0, batch.rows));
    const rb = await dump('t_rb');
    expect(rb.split('\n').length).toBe(batch.rows + 1);
    expect(await dump('t_native')).toBe(rb);
  });

  it('builds blocks of row ranges and of reordered rows (isolation, regrouping)', async () => {
    const { batch, builder } = encode(generateSampleLines('mix', 200, { seed: 5 }));
    await insert('t_native', 'Native', builder.build(batch.data, batch.rowStarts!, 10, 30));
    await insert(
      't_native',
      'Native',
      builder.build(batch.data, batch.rowStarts!, 0, 0, Uint32Array.from([40, 35, 31])),
    );
    const s = batch.rowStarts!;
    for (const [a, b] of [
      [10, 30],
      [31, 32],
      [35, 36],
      [40, 41],
    ])
      await insert('t_rb', 'RowBinary', Buffer.from(batch.data.subarray(s[a], s[b])));
    const got = await dump('t_native');
    expect(got.split('\n').length).toBe(24);
    expect(got).toBe(await dump('t_rb'));
  });
});
