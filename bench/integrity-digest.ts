/**
 * Cost of tamper evidence on the worker's hot path: `node dist/bench/integrity-digest.js
 * [--lines N] [--batch N] [--passes N]`. Encodes generated firewall traffic with the worker's
 * encoder and the firewall preset's columns, then computes each batch's canonical digest the way
 * ChainState.seal does, and prints JSON with medians per CPU-second (process.cpuUsage): CPU
 * seconds per million rows for encoding and for digesting, the digest's overhead relative to the
 * encoding, and plain SHA-256 over the same payload bytes as the floor. `rowBinary` does the same for
 * the worker's RowBinary bodies: digested through their TSV text (the old route) and directly.
 */
import { createHash } from 'node:crypto';
import { BatchEncoder, type MessageInput } from '../consumer/src/encode/batch';
import { BatchDigester } from '../common/src/integrity/canonical';
import { RowBinaryCanonical } from '../common/src/integrity/canonical-rowbinary';
import { RowBinaryToTsv } from '../consumer/src/integrity/rowbinary-tsv';
import { generateSampleLines } from '../test/fixtures/samples';
import { buildTableDDL, buildWorkerColumns } from '../operator/src/desired/clickhouse';
import { resolved } from '../test/fixtures/clickhouse-testing';

function cpu(since: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1e6;
}

function median(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

function option(argv: string[], name: string, fallback: number): number {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
}

/** Runs the benchmark and returns the JSON-able result. */
export function runDigestBench(argv: string[]): Record<string, unknown> {
  const lines = option(argv, 'lines', 500_000);
  const batch = option(argv, 'batch', 100_000);
  const passes = option(argv, 'passes', 5);
  const ddl = buildTableDDL(resolved());
  if (!ddl.ok) throw new Error(ddl.message);
  const columns = buildWorkerColumns(ddl.value.tables[0].schema).filter((c) => c.source !== 'kafka_line');
  const encoder = new BatchEncoder({ parser: { format: 'auto', timezone: 'UTC' }, columns });
  const messages: MessageInput[] = generateSampleLines('mix', lines, { seed: 7 }).map((value, i) => ({
    value,
    topic: 'bench',
    partition: 0,
    offset: i,
  }));
  const digester = new BatchDigester(columns.map((c) => ({ name: c.name, type: c.type, source: c.source })));
  const ingestMs = Date.UTC(2026, 0, 15, 12);
  const encodeSec: number[] = [];
  const digestSec: number[] = [];
  const shaSec: number[] = [];
  let rows = 0;
  let bytes = 0;
  for (let pass = 0; pass < passes; pass++) {
    rows = 0;
    bytes = 0;
    let enc = 0;
    let dig = 0;
    let sha = 0;
    for (let from = 0; from < messages.length; from += batch) {
      let t = process.cpuUsage();
      const out = encoder.encode(messages, ingestMs, from, Math.min(messages.length, from + batch));
      enc += cpu(t);
      rows += out.rows;
      bytes += out.data.length;
      t = process.cpuUsage();
      digester.reset();
      const err = digester.addTsv(out.data);
      if (err !== null) throw new Error(err);
      digester.finish();
      dig += cpu(t);
      t = process.cpuUsage();
      createHash('sha256').update(out.data).digest();
      sha += cpu(t);
    }
    encodeSec.push(enc);
    digestSec.push(dig);
    shaSec.push(sha);
  }
  const perMillion = (sec: number[]) => Math.round((median(sec) / rows) * 1e6 * 1000) / 1000;
  return {
    rows,
    payloadBytes: bytes,
    bytesPerRow: Math.round(bytes / rows),
    passes,
    encodeCpuSecondsPerMillionRows: perMillion(encodeSec),
    digestCpuSecondsPerMillionRows: perMillion(digestSec),
    plainSha256CpuSecondsPerMillionRows: perMillion(shaSec),
    digestRowsPerCpuSecond: Math.round(rows / median(digestSec)),
    digestMBPerCpuSecond: Math.round(bytes / 1e6 / median(digestSec)),
    digestOverheadVsEncode: Math.round((median(digestSec) / median(encodeSec)) * 1000) / 1000,
    rowBinary: rowBinaryRoutes(columns, messages, batch, passes, ingestMs),
  };
}

/** RowBinary bodies: encode, digest via TSV text (old route), digest directly (new); per million rows. */
function rowBinaryRoutes(
  columns: ReturnType<typeof buildWorkerColumns>,
  messages: MessageInput[],
  batch: number,
  passes: number,
  ingestMs: number,
): Record<string, number> {
  const canonical = columns.map((c) => ({ name: c.name, type: c.type, source: c.source }));
  const encoder = new BatchEncoder({
    parser: { format: 'auto', timezone: 'UTC' },
    columns,
    format: 'RowBinary',
  });
  const digester = new BatchDigester(canonical);
  const toTsv = new RowBinaryToTsv(canonical);
  const reader = new RowBinaryCanonical(canonical);
  const sec = { encode: [] as number[], viaTsv: [] as number[], direct: [] as number[] };
  let rows = 0;
  for (let pass = 0; pass < passes; pass++) {
    rows = 0;
    const t = { encode: 0, viaTsv: 0, direct: 0 };
    for (let from = 0; from < messages.length; from += batch) {
      let c = process.cpuUsage();
      const out = encoder.encode(messages, ingestMs, from, Math.min(messages.length, from + batch));
      t.encode += cpu(c);
      rows += out.rows;
      c = process.cpuUsage();
      digester.reset();
      const a = digester.addTsv(toTsv.convert(out.data));
      const old = digester.finish().digest;
      t.viaTsv += cpu(c);
      c = process.cpuUsage();
      digester.reset();
      const b = digester.addRowBinary(out.data, reader);
      const now = digester.finish().digest;
      t.direct += cpu(c);
      if (a !== null || b !== null || old !== now) throw new Error(`routes differ: ${a} ${b}`);
    }
    sec.encode.push(t.encode);
    sec.viaTsv.push(t.viaTsv);
    sec.direct.push(t.direct);
  }
  const perMillion = (s: number[]) => Math.round((median(s) / rows) * 1e6 * 1000) / 1000;
  return {
    rows,
    encodeCpuSecondsPerMillionRows: perMillion(sec.encode),
    digestViaTsvCpuSecondsPerMillionRows: perMillion(sec.viaTsv),
    digestDirectCpuSecondsPerMillionRows: perMillion(sec.direct),
    directSpeedup: Math.round((median(sec.viaTsv) / median(sec.direct)) * 1000) / 1000,
  };
}

if (require.main === module)
  process.stdout.write(JSON.stringify(runDigestBench(process.argv.slice(2)), null, 2) + '\n');
