/**
 * RowBinary and TabSeparated inserts store the same rows: the same traffic (mixed formats, garbage
 * lines, rows a CHECK constraint refuses, escapes) goes through two
 * real workers into two tables of the bed, one per insert format, and both tables and both
 * dead-letter tables hold identical rows (ingest time aside: it is the cut's clock). Rejected rows
 * are isolated by bisection in both, RowBinary cutting at the encoder's row-start index.
 */
import { generateSampleLines } from './fixtures/samples';
import { readTestBed } from './env/testbed';
import { freePort } from './env/process';
import {
  chClient,
  createPipeline,
  dropPipeline,
  makeTraffic,
  newPipeline,
  pollUntil,
  produceLines,
  spawnWorker,
  stopWorker,
  storedCounts,
  testProducer,
  waitCaughtUp,
  workerConfig,
  type Pipeline,
  type WorkerProcess,
} from './worker-support';

const bed = readTestBed();
const ch = chClient(bed);
const PARTITIONS = 2;
const FORMATS = ['TabSeparated', 'RowBinary'] as const;
const pipelines = new Map<string, Pipeline>();
const workers: WorkerProcess[] = [];

/** Mixed traffic plus lines the CHECK refuses and FortiGate lines with special values. */
function traffic(): { lines: Buffer[]; garbage: number; poison: number } {
  const { lines, garbage } = makeTraffic(3_000, 97);
  const forti = generateSampleLines('fortigate', 300, { seed: 11 });
  let poison = 0;
  for (let i = 0; i < forti.length; i++) {
    let text = forti[i].toString();
    // A tab and a backslash inside a quoted value (escaped in TSV, raw bytes in RowBinary).
    if (i % 11 === 0) text = text.replace(/policyname="/, 'policyname="tab\there back\\slash ');
    if (i % 13 === 0) {
      text = `${text} note="poison-${i}"`;
      poison++;
    }
    lines.push(Buffer.from(text));
  }
  return { lines, garbage, poison };
}

afterAll(async () => {
  for (const w of workers) await stopWorker(w).catch(() => undefined);
  for (const p of pipelines.values()) await dropPipeline(bed, p);
  await ch.close();
});

/** Every stored column except ingest_time, in (partition, offset, line) order, as TSV text. */
async function dump(table: string, columns: string): Promise<string> {
  const rs = await ch.query({
    query: `SELECT ${columns} FROM default.\`${table}\` ORDER BY kafka_partition, kafka_offset, raw`,
    format: 'TabSeparated',
  });
  return rs.text();
}

test('TabSeparated and RowBinary workers store identical rows and dead letters', async () => {
  const t = traffic();
  const producer = await testProducer(bed);
  try {
    for (const format of FORMATS) {
      const p = newPipeline(`fmt_${format === 'RowBinary' ? 'rb' : 'tsv'}`, PARTITIONS);
      pipelines.set(format, p);
      await createPipeline(bed, p, "position(raw, 'poison-') = 0");
      await produceLines(producer, p.topic, PARTITIONS, t.lines, 10);
    }
  } finally {
    await producer.disconnect();
  }
  for (const format of FORMATS) {
    const p = pipelines.get(format)!;
    const cfg = workerConfig(bed, p);
    cfg.tuning = { ...cfg.tuning, insertFormat: format };
    workers.push(spawnWorker(bed, cfg, await freePort(), `format-${format}`));
  }
  const expectedRows = t.lines.length - t.garbage - t.poison;
  for (const p of pipelines.values()) {
    await pollUntil(
      () => storedCounts(ch, p),
      (c) => c.rows + c.dlq >= t.lines.length,
      240_000,
      1_000,
    );
    await waitCaughtUp(bed, p);
    expect(await storedCounts(ch, p)).toEqual({
      rows: expectedRows,
      distinct: expectedRows,
      dlq: t.garbage + t.poison,
      dlqDistinct: t.garbage + t.poison,
    });
  }
  const tsv = pipelines.get('TabSeparated')!;
  const rb = pipelines.get('RowBinary')!;
  const dataColumns =
    'ts, vendor, device, src_ip, dst_ip, src_port, dst_port, nat_src_ip, nat_src_port, nat_dst_ip, ' +
    'nat_dst_port, proto, action, bytes, rule, severity, message, raw, kafka_partition, kafka_offset';
  const a = await dump(tsv.table, dataColumns);
  expect(a.split('\n').length - 1).toBe(expectedRows);
  expect(await dump(rb.table, dataColumns)).toBe(a);
  expect(a).toContain('tab\\there back\\\\slash');
  // The server's rejection text may differ by format; the reason's class and the line must not.
  const dlqColumns =
    "if(startsWith(reason, 'clickhouse:'), 'clickhouse', reason), `partition`, `offset`, raw";
  const dlq = (table: string) =>
    ch
      .query({
        query: `SELECT ${dlqColumns} FROM default.\`${table}\` ORDER BY \`partition\`, \`offset\`, raw`,
        format: 'TabSeparated',
      })
      .then((r) => r.text());
  const dlqTsv = await dlq(tsv.dlqTable);
  expect(dlqTsv).toContain('poison-');
  expect(await dlq(rb.dlqTable)).toBe(dlqTsv);
});
