/**
 * Backfill benchmark, `npm run bench:backfill [-- --lines 50000 --days 730 --runs 3]`: a history
 * import of FortiGate lines spread over `days` distinct days, shuffled (every batch spans them
 * all), 100 lines per Kafka message, into a table partitioned by toYYYYMMDD(ts). A real worker
 * (dist/consumer/src/main.js) drains it, regrouping each batch by the partition key; its CPU time
 * (process.cpuUsage, logged at exit) gives backfill rows per worker CPU-second. The same lines on a
 * single day are the baseline. Prints JSON with medians, load average and Node version.
 */
import fs from 'node:fs';
import { freePort } from '../test/env/process';
import type { TestBed } from '../test/env/testbed';
import * as s from '../test/worker-support';
import { median } from './e2e';
import { benchMachine, runBenchMain, withKafkaBed } from './clickhouse-bench';

interface Options {
  lines: number;
  days: number;
  runs: number;
}

function parseOptions(argv: string[]): Options {
  const o: Options = { lines: 50_000, days: 730, runs: 3 };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '') as keyof Options;
    if (!(key in o)) throw new Error(`unknown option ${argv[i]}`);
    o[key] = Number(argv[i + 1]);
  }
  return o;
}

/** `count` FortiGate lines over `days` days from 2022-01-01, shuffled deterministically. */
function historyLines(count: number, days: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    // A multiplicative stride visits the days in a scrambled order.
    const day = (i * 7919) % days;
    const d = new Date(Date.UTC(2022, 0, 1) + day * 86_400_000).toISOString().slice(0, 10);
    out.push(
      Buffer.from(
        `date=${d} time=${String(i % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:07 devname="fw${i % 5}" ` +
          `logid="0000000013" type="traffic" subtype="forward" srcip=10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255} ` +
          `srcport=${1024 + (i % 60000)} dstip=192.0.2.${i % 250} dstport=443 proto=6 action="deny" policyid=7 sentbyte=${i % 9000}`,
      ),
    );
  }
  return out;
}

function exitCpu(logFile: string): { cpu: number; lines: number } {
  const line = fs
    .readFileSync(logFile, 'utf8')
    .split('\n')
    .find((l) => l.includes('"worker stopped"'));
  if (!line) throw new Error(`worker did not log its exit summary (${logFile})`);
  const j = JSON.parse(line) as { cpuUserSeconds: number; cpuSystemSeconds: number; lines: number };
  return { cpu: j.cpuUserSeconds + j.cpuSystemSeconds, lines: j.lines };
}

async function run(
  bed: TestBed,
  lines: Buffer[],
): Promise<{ rows: number; cpuSeconds: number; wallSeconds: number; rowsPerCpuSecond: number }> {
  const p = s.newPipeline('bench_backfill', 1);
  await s.createPipeline(bed, p); // the operator's DDL: partitioned by toYYYYMMDD(ts)
  const ch = s.chClient(bed);
  try {
    const producer = await s.testProducer(bed);
    await s.produceLines(producer, p.topic, 1, lines, 100);
    await producer.disconnect();
    const cfg = s.workerConfig(bed, p, {
      batch: { maxRows: 100_000, maxBytes: 16 * 1024 * 1024, maxDelayMs: 1_000 },
      tuning: {},
    });
    cfg.clickhouse.partitionBy = { column: 'ts', function: 'toYYYYMMDD' };
    const t0 = Date.now();
    const w = s.spawnWorker(bed, cfg, await freePort(), 'bench-backfill');
    const counts = await s.pollUntil(
      () => s.storedCounts(ch, p),
      (c) => c.rows + c.dlq >= lines.length,
      600_000,
      200,
    );
    const wallSeconds = (Date.now() - t0) / 1000;
    await s.stopWorker(w);
    if (counts.rows !== lines.length || counts.distinct !== lines.length)
      throw new Error(`stored ${JSON.stringify(counts)}, expected ${lines.length} rows`);
    const { cpu } = exitCpu(w.logFile);
    return {
      rows: lines.length,
      cpuSeconds: cpu,
      wallSeconds,
      rowsPerCpuSecond: Math.round(lines.length / cpu),
    };
  } finally {
    await ch.close();
    await s.dropPipeline(bed, p);
  }
}

/** Both backfill cases (`days` days, one day), `runs` times each, with their medians. */
async function bench(bed: TestBed, o: Options): Promise<Record<string, unknown>> {
  const results: Record<string, unknown> = {};
  for (const [name, days] of [
    ['backfill', o.days],
    ['oneDay', 1],
  ] as const) {
    const lines = historyLines(o.lines, days);
    const runs = [];
    for (let i = 0; i < o.runs; i++) runs.push(await run(bed, lines));
    results[name] = {
      days,
      medianRowsPerCpuSecond: median(runs.map((r) => r.rowsPerCpuSecond)),
      medianWallSeconds: median(runs.map((r) => r.wallSeconds)),
      runs,
    };
  }
  return results;
}

if (require.main === module) {
  runBenchMain(async (argv) => {
    const o = parseOptions(argv);
    return withKafkaBed('lp-bench-backfill-', async (bed) => ({
      benchmark: 'backfill',
      options: o,
      machine: benchMachine(),
      ...(await bench(bed, o)),
    }));
  });
}
