/**
 * The ClickHouse side of one batch: server CPU per million rows for the worker's INSERT of
 * single-line FortiGate batches under insert settings A/B — format (RowBinary, TabSeparated with
 * and without input_format_parallel_parsing), request body compression (none, gzip: the only one
 * @clickhouse/client sends) and rows per INSERT. The bodies are encoded once by the worker's own
 * encoder; each variant inserts the same rows (fresh deduplication tokens) into the pipeline table
 * and the server process's CPU (/proc) is read around it; variants alternate per round.
 * `node dist/bench/e2e-insert.js [--lines 20000] [--rounds 3]` (reuses LP_TESTBED_FILE's bed).
 */
import { Readable } from 'node:stream';
import { createClient } from '@clickhouse/client';
import { generateSampleLines } from '../test/fixtures/samples';
import type { TestBed } from '../test/env/testbed';
import * as s from '../test/worker-support';
import { createEncoder } from '../consumer/src/worker-parts';
import type { InsertFormat } from '../consumer/src/encode/batch';
import { median, procCpuSeconds, serverPid } from './e2e';
import { benchMachine, option, runBenchMain, withKafkaBed } from './clickhouse-bench';

interface Variant {
  format: InsertFormat;
  rowsPerInsert: number;
  gzip: boolean;
  settings: Record<string, number>;
}

const VARIANTS: Record<string, Variant> = {
  rowBinary10k: { format: 'RowBinary', rowsPerInsert: 10_000, gzip: false, settings: {} },
  rowBinary2k: { format: 'RowBinary', rowsPerInsert: 2_000, gzip: false, settings: {} },
  rowBinary10kGzip: { format: 'RowBinary', rowsPerInsert: 10_000, gzip: true, settings: {} },
  tsv10k: { format: 'TabSeparated', rowsPerInsert: 10_000, gzip: false, settings: {} },
  tsv10kSerialParsing: {
    format: 'TabSeparated',
    rowsPerInsert: 10_000,
    gzip: false,
    settings: { input_format_parallel_parsing: 0 },
  },
};

/** Encoded bodies of `lines` (one message per line) cut into `rowsPerInsert` batches. */
function bodies(bed: TestBed, p: s.Pipeline, lines: Buffer[], v: Variant): Buffer[] {
  const encoder = createEncoder(s.workerConfig(bed, p), undefined, v.format);
  const messages = lines.map((value, i) => ({ topic: p.topic, partition: 0, offset: i, value }));
  const out: Buffer[] = [];
  for (let i = 0; i < messages.length; i += v.rowsPerInsert) {
    const e = encoder.encode(messages, Date.now(), i, Math.min(messages.length, i + v.rowsPerInsert));
    out.push(Buffer.from(e.data));
  }
  return out;
}

async function insertAll(bed: TestBed, p: s.Pipeline, v: Variant, data: Buffer[], round: number) {
  const ch = bed.clickhouse!;
  const client = createClient({
    url: ch.url,
    username: ch.username,
    password: ch.password,
    compression: { request: v.gzip, response: false },
  });
  const server = serverPid(bed);
  const cpu0 = procCpuSeconds(server);
  for (let i = 0; i < data.length; i++) {
    const r = await client.exec({
      query: `INSERT INTO ${p.database}.\`${p.table}\` FORMAT ${v.format}`,
      values: Readable.from([data[i]], { objectMode: false }),
      clickhouse_settings: {
        insert_deduplication_token: `bench-${round}-${i}-${Date.now()}`,
        insert_deduplicate: 1,
        async_insert: 0,
        ...v.settings,
      },
    });
    r.stream.resume();
    await new Promise((resolve) => r.stream.once('close', resolve));
  }
  const cpu = procCpuSeconds(server) - cpu0;
  await client.close();
  return cpu;
}

async function bench(bed: TestBed, lineCount: number, rounds: number) {
  const p = s.newPipeline('insert', 1);
  await s.createPipeline(bed, p);
  try {
    const lines = generateSampleLines('fortigate', lineCount, { seed: 6 });
    const names = Object.keys(VARIANTS);
    const data = new Map(names.map((n) => [n, bodies(bed, p, lines, VARIANTS[n])]));
    const cpu = new Map<string, number[]>(names.map((n) => [n, []]));
    for (let r = 0; r < rounds; r++) {
      for (const n of r % 2 === 0 ? names : [...names].reverse())
        cpu.get(n)!.push(await insertAll(bed, p, VARIANTS[n], data.get(n)!, r));
    }
    const out: Record<string, unknown> = {};
    for (const n of names) {
      const perMillion = cpu.get(n)!.map((c) => (c * 1e6) / lineCount);
      out[n] = {
        serverCpuSecondsPerMillionRows: Math.round(median(perMillion) * 100) / 100,
        runs: perMillion.map((x) => Math.round(x * 100) / 100),
        bodyBytesPerRow: Math.round(data.get(n)!.reduce((a, b) => a + b.length, 0) / lineCount),
      };
    }
    return out;
  } finally {
    await s.dropPipeline(bed, p);
  }
}

if (require.main === module) {
  runBenchMain((argv) =>
    withKafkaBed('lp-bench-insert-', async (bed) => {
      const results = await bench(bed, option(argv, 'lines', 20_000), option(argv, 'rounds', 3));
      return { benchmark: 'e2e-insert', machine: benchMachine(), results };
    }),
  );
}
