/**
 * Daily-seal throughput and memory: `node dist/bench/seal.js [--rows 1000000] [--keep]`. Writes one
 * day of rows the worker's way (bench/integrity-verify.ts's generator, firewall preset), then seals
 * the day twice through `sealDay` — hash only (what the scheduled seal does) and with the gzip
 * files (`--out`) — against a loopback TSA, and prints JSON: rows/s, canonical MB/s, the sealer's
 * CPU seconds per million rows and its peak RSS (sampled every 50 ms; it must stay flat as the day grows).
 */
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { sealDay } from '../operator/src/compliance/seal';
import { startTsa } from '../test/env/tsa';
import { benchClient, connectBed, option, runBenchMain } from './clickhouse-bench';
import { fill } from './integrity-verify';

const DAY = '2026-11-20';

async function measure(client: ClickHouseClient, db: string, tsaUrl: string, outDir?: string) {
  const key = generateKeyPairSync('ed25519').privateKey;
  await client.command({ query: `TRUNCATE TABLE \`${db}\`.fw_seals` });
  let peak = process.memoryUsage.rss();
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 50);
  const cpu0 = process.cpuUsage();
  const t0 = Date.now();
  const r = await sealDay(client, {
    database: db,
    table: 'fw',
    day: DAY,
    signingKey: key,
    tsaUrl,
    graceMs: 0,
    outDir,
  });
  const seconds = (Date.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  clearInterval(sampler);
  const manifest = JSON.parse(r.record.manifest) as { export: { rows: number; bytes: number } };
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  return {
    rows: manifest.export.rows,
    canonicalMB: Math.round(manifest.export.bytes / 1e4) / 100,
    seconds,
    rowsPerSecond: Math.round(manifest.export.rows / seconds),
    canonicalMBPerSecond: Math.round(manifest.export.bytes / 1e4 / seconds) / 100,
    sealerCpuSecondsPerMillionRows: Math.round((cpuSeconds / manifest.export.rows) * 1e8) / 100,
    peakRssMB: Math.round(peak / 1048576),
    gzipMB: outDir
      ? Math.round(fs.statSync(path.join(outDir, `fw-${DAY}.tsv.gz`)).size / 1e4) / 100
      : undefined,
  };
}

/** Runs the benchmark; returns the JSON result. */
export async function runSealBench(argv: string[]): Promise<Record<string, unknown>> {
  const rows = option(argv, 'rows', 1_000_000);
  const { bed, stop } = await connectBed();
  const tsa = await startTsa();
  const client = benchClient(bed);
  const db = `seal_bench_${rows}`;
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'seal-bench-'));
  try {
    const tables = await client.query({
      query: `SELECT count() AS c FROM system.tables WHERE database = '${db}' AND name = 'fw_seals'`,
      format: 'JSONEachRow',
    });
    const exists = Number((await tables.json<{ c: string }>())[0].c) > 0;
    const fillSeconds = exists ? 0 : await fill(client, db, rows, 100_000, 4);
    const rssBeforeMB = Math.round(process.memoryUsage.rss() / 1048576);
    const hashOnly = await measure(client, db, tsa.url);
    const withFiles = await measure(client, db, tsa.url, out);
    if (!argv.includes('--keep')) await client.command({ query: `DROP DATABASE IF EXISTS \`${db}\`` });
    return {
      rows,
      fillSeconds,
      rssBeforeMB,
      hashOnly,
      withFiles,
      node: process.version,
      loadavg: os.loadavg(),
    };
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
    await client.close();
    await tsa.close();
    await stop?.();
  }
}

if (require.main === module) runBenchMain(runSealBench);
