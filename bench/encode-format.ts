/**
 * Insert-format benchmark: the same generated traffic through the worker's encoder as
 * TabSeparated and as RowBinary (alternating passes, lines per worker CPU-second), then the
 * engine-side cost of ingesting each body (plus Native, converted by the engine from the same rows)
 * into a MergeTree table with the reference columns, as engine CPU-seconds per million rows.
 *   node dist/bench/encode-format.js [--format fortigate] [--lines 100000] [--passes 5]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Session } from 'chdb';
import { BatchEncoder, InsertFormat, MessageInput } from '../consumer/src/encode/batch';
import { NativeBlockBuilder, nativeLayout } from './native-block';
import { REFERENCE_COLUMNS } from '../consumer/src/encode/reference-columns';
import { FormatName } from '../consumer/src/parse/record';
import { generateSampleLines } from '../test/fixtures/samples';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
}

function cpu(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const format = arg('format', 'fortigate');
  const lines = Number(arg('lines', '100000'));
  const passes = Number(arg('passes', '5'));
  const batch = Number(arg('batch', '10000'));
  const sample = generateSampleLines(format as FormatName, lines, { seed: 42 });
  const messages: MessageInput[] = sample.map((value, i) => ({
    value,
    topic: 'logs',
    partition: 0,
    offset: i,
  }));
  const ingest = Date.UTC(2026, 11, 3, 8, 0, 0);
  const encoders: Record<InsertFormat, BatchEncoder> = {
    TabSeparated: new BatchEncoder({
      parser: { format: format as FormatName, timezone: 'UTC' },
      columns: REFERENCE_COLUMNS,
    }),
    RowBinary: new BatchEncoder({
      parser: { format: format as FormatName, timezone: 'UTC' },
      columns: REFERENCE_COLUMNS,
      format: 'RowBinary',
    }),
  };
  const rates: Record<string, number[]> = { TabSeparated: [], RowBinary: [], Native: [] };
  const bodies: Record<string, Buffer[]> = { TabSeparated: [], RowBinary: [], Native: [] };
  const builder = new NativeBlockBuilder(nativeLayout(encoders.RowBinary.plan));
  for (let p = 0; p < passes + 1; p++) {
    for (const f of ['TabSeparated', 'RowBinary', 'Native']) {
      const t0 = cpu();
      let rows = 0;
      for (let i = 0; i < messages.length; i += batch) {
        const enc = encoders[f === 'Native' ? 'RowBinary' : (f as InsertFormat)];
        const out = enc.encode(messages, ingest, i, Math.min(messages.length, i + batch));
        rows += out.rows;
        const data = f === 'Native' ? builder.build(out.data, out.rowStarts!, 0, out.rows) : out.data;
        if (p === 0) bodies[f].push(Buffer.from(data));
      }
      if (p > 0) rates[f].push(Math.round(rows / (cpu() - t0)));
    }
  }
  const size = (f: string) => bodies[f].reduce((n, b) => n + b.length, 0);
  // Engine side: ingest every body once per round, alternating formats.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'encode-format-'));
  const session = new Session(dir);
  const structure = REFERENCE_COLUMNS.map((c) => `\`${c.name}\` ${c.type}`).join(', ');
  await session.queryAsync(`CREATE TABLE t (${structure}) ENGINE = MergeTree ORDER BY (kafka_offset)`);
  const files: Record<string, string[]> = { TabSeparated: [], RowBinary: [], Native: [], NativeLC: [] };
  for (const f of ['TabSeparated', 'RowBinary', 'Native']) {
    bodies[f].forEach((b, i) => {
      const file = path.join(dir, `${f}-${i}.bin`);
      fs.writeFileSync(file, b);
      files[f].push(file);
    });
  }
  // NativeLC: the engine's own Native (LowCardinality dictionaries), as a reference point.
  for (const [i, rb] of files.RowBinary.entries()) {
    const file = path.join(dir, `NativeLC-${i}.bin`);
    await session.queryAsync(
      `INSERT INTO FUNCTION file('${file}', 'Native') SELECT * FROM file('${rb}', 'RowBinary', '${structure.replace(/'/g, "\\'")}')`,
    );
    files.NativeLC.push(file);
  }
  const engine: Record<string, number[]> = { TabSeparated: [], RowBinary: [], Native: [], NativeLC: [] };
  for (let r = 0; r < 3; r++) {
    for (const f of ['TabSeparated', 'RowBinary', 'Native', 'NativeLC']) {
      await session.queryAsync('TRUNCATE TABLE t');
      const t0 = cpu();
      for (const file of files[f]) {
        const fmt = f.startsWith('Native') ? `'Native'` : `'${f}', '${structure.replace(/'/g, "\\'")}'`;
        await session.queryAsync(`INSERT INTO t SELECT * FROM file('${file}', ${fmt})`);
      }
      engine[f].push(((cpu() - t0) / lines) * 1e6);
    }
  }

  session.cleanup();
  fs.rmSync(dir, { recursive: true, force: true });
  console.log(
    JSON.stringify({
      node: process.version,
      load: os.loadavg().map((x) => +x.toFixed(2)),
      format,
      lines,
      batch,
      encodeLinesPerCpuSecond: {
        TabSeparated: median(rates.TabSeparated),
        RowBinary: median(rates.RowBinary),
        Native: median(rates.Native),
      },
      encodeRuns: rates,
      bodyBytesPerLine: {
        TabSeparated: +(size('TabSeparated') / lines).toFixed(1),
        RowBinary: +(size('RowBinary') / lines).toFixed(1),
        Native: +(size('Native') / lines).toFixed(1),
      },
      engineCpuSecondsPerMillionRows: {
        TabSeparated: +median(engine.TabSeparated).toFixed(2),
        RowBinary: +median(engine.RowBinary).toFixed(2),
        Native: +median(engine.Native).toFixed(2),
        NativeLC: +median(engine.NativeLC).toFixed(2),
      },
      engineRuns: engine,
    }),
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
