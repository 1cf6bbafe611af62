/**
 * End-to-end benchmark: Kafka -> worker process -> ClickHouse, `npm run bench:e2e [-- --runs 3 ...]`.
 * For packed messages (100 lines each) and single-line messages, a backlog of FortiGate lines is
 * produced, a real worker (dist/consumer/src/main.js) drains it into the test bed's ClickHouse,
 * and its CPU time (process.cpuUsage, logged by the worker at exit) gives lines per worker
 * CPU-second; a worker's idle start+stop cost (measured on an empty topic) is subtracted for the
 * net figure. The steady-state figure counts only the worker's CPU from its first group join to
 * the moment the last row was stored (start-up, module loading, connect and the final drain are
 * left out; this is the throughput a long-running worker sees): the worker logs its CPU at the
 * join, the bench reads the worker's CPU from /proc when the last row lands (seen in the group's
 * committed offsets: polling ClickHouse or the worker would add CPU to what is measured). The
 * ClickHouse server's CPU during the run is reported too. The peer — ClickHouse's
 * own Kafka table engine with a materialized view into the same schema, inside chdb — consumes
 * the same backlog in its own process (bench/e2e-peer.ts). Each worker run is repeated per insert
 * format (RowBinary and TabSeparated, alternating) so worker and ClickHouse CPU per million lines
 * compare in one run; one extra single-line run under `--cpu-prof` gives the stage breakdown
 * (bench/profile-breakdown.ts). `--integrity true` adds packed runs with tamper evidence on (link and
 * checkpoint tables, a signing key), alternating with the same runs off, so the digest's end-to-end
 * cost is measured in one run. Each run also reports the worker's own stage CPU (stage-cpu.ts:
 * user and system seconds of intake, encode, the insert call and the integrity seal, GC pauses, and
 * what no stage holds: Kafka client, decompression, HTTP, timers, page faults outside the stages).
 * The worker runs with the worker image's Node flags (common/src/worker-runtime.ts; `workerRuntime`
 * in the JSON).
 * `LP_BENCH_TUNING` (JSON) overrides worker tuning for A/B runs,
 * `LP_BENCH_WORKER_NODE_ARGS` adds Node flags to the worker (after the image's: they win).
 * Prints JSON with medians.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateSampleLines } from '../test/fixtures/samples';
import type { TestBed } from '../test/env/testbed';
import type { PeerRun } from './e2e-peer-run';
import { profileBreakdown, type ProfileBreakdown } from './profile-breakdown';
import { benchMachine, runBenchMain, withKafkaBed } from './clickhouse-bench';
import { e2eTargets, targetsBlock } from './targets';
import { WORKER_NODE_ARGS } from '../common/src/worker-runtime';
import { idleWorkerCpu, peerRun, round3, workerRun, type Format, type RunResult } from './e2e-worker-run';

export { procCpuSeconds, procUsage, serverPid } from './e2e-process';

/** Benchmark settings (CLI flags of the same name). */
export interface E2eOptions {
  packedLines: number;
  singleLines: number;
  runs: number;
  partitions: number;
  peer: boolean;
  /** Comma-separated insert formats to compare; the first is the headline (default RowBinary,TabSeparated). */
  formats: string;
  /** Extra profiled runs (first format) for the stage breakdown (profileMode names the traffic). */
  profile: boolean;
  /** Which traffic the profiled runs use, comma-separated: single, packed100 (default both). */
  profileMode: string;
  /** Comma-separated traffic modes to run (default packed100,single; `single` alone for intake A/B). */
  modes: string;
  /** Also run packed traffic with integrity on vs off (same schema, alternating). */
  integrity: boolean;
}

/** Median of numbers (upper median for even counts). */
export function median(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  return v.length === 0 ? NaN : v[Math.floor(v.length / 2)];
}

function parseOptions(argv: string[]): E2eOptions {
  const o: E2eOptions = {
    packedLines: 300_000,
    singleLines: 100_000,
    runs: 3,
    partitions: 3,
    peer: true,
    formats: 'RowBinary,TabSeparated',
    profile: true,
    profileMode: 'single,packed100',
    modes: 'packed100,single',
    integrity: false,
  };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i]
      .replace(/^--/, '')
      .replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()) as keyof E2eOptions;
    if (!(key in o)) throw new Error(`unknown option ${argv[i]}`);
    const v = argv[i + 1];
    (o as unknown as Record<string, unknown>)[key] =
      key === 'peer' || key === 'profile' || key === 'integrity'
        ? v !== 'false'
        : key === 'formats' || key === 'profileMode' || key === 'modes'
          ? v
          : Number(v);
  }
  return o;
}

function summarize<T extends object>(runs: T[], keys: Array<keyof T>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of keys) out[String(k)] = Math.round(median(runs.map((r) => Number(r[k]))) * 1000) / 1000;
  return out;
}

const RUN_KEYS: Array<keyof RunResult> = [
  'lines',
  'wallSeconds',
  'cpuSeconds',
  'netCpuSeconds',
  'steadyCpuSeconds',
  'serverCpuSeconds',
  'linesPerCpuSecond',
  'netLinesPerCpuSecond',
  'steadyLinesPerCpuSecond',
  'workerCpuSecondsPerMillionLines',
  'serverCpuSecondsPerMillionLines',
  'totalCpuSecondsPerMillionLines',
  'peakRssMiB',
  'workerSystemCpuShare',
  'workerMinorFaultsPerMillionLines',
  'inserts',
];

/** Worker runs per format (alternating order per round so load drifts hit both), then the peer. */
async function benchMode(
  bed: TestBed,
  o: E2eOptions,
  lines: Buffer[],
  perMessage: number,
  idleCpu: number,
): Promise<Record<string, unknown>> {
  const formats = o.formats.split(',') as Format[];
  const runs = new Map<Format, RunResult[]>(formats.map((f) => [f, []]));
  const peerRuns: PeerRun[] = [];
  for (let i = 0; i < o.runs; i++) {
    const order = i % 2 === 0 ? formats : [...formats].reverse();
    // The peer runs in every round (last in even rounds, first in odd ones) so a load drift hits
    // both sides of a round's ratio alike.
    if (o.peer && i % 2 === 1) peerRuns.push(await peerRun(bed, o, lines, perMessage));
    for (const f of order) runs.get(f)!.push(await workerRun(bed, o, lines, perMessage, idleCpu, f));
    if (o.peer && i % 2 === 0) peerRuns.push(await peerRun(bed, o, lines, perMessage));
  }
  const peer = o.peer ? summarize(peerRuns, PEER_KEYS) : undefined;
  const worker: Record<string, unknown> = {};
  for (const [f, r] of runs) {
    const median = summarize(r, RUN_KEYS);
    worker[f] = {
      median,
      steadySpread: spread(r.map((x) => x.steadyLinesPerCpuSecond)),
      vsPeer: peer ? versusPeer(median, r, peer, peerRuns) : undefined,
      runs: r,
    };
  }
  const [a, b] = formats;
  const ma = (worker[a] as { median: Record<string, number> } | undefined)?.median;
  const mb = (worker[b] as { median: Record<string, number> } | undefined)?.median;
  const saving =
    ma && mb
      ? {
          [`totalCpuPerMillionLines_${a}_vs_${b}`]: round3(
            ma.totalCpuSecondsPerMillionLines / mb.totalCpuSecondsPerMillionLines - 1,
          ),
        }
      : undefined;
  return {
    worker,
    formatComparison: saving,
    peerKafkaEngine: o.peer
      ? { median: peer, steadySpread: spread(peerRuns.map((x) => x.steadyLinesPerCpuSecond)), runs: peerRuns }
      : undefined,
  };
}

const PEER_KEYS: Array<keyof PeerRun> = [
  'lines',
  'steadyWallSeconds',
  'steadyCpuSeconds',
  'steadyLinesPerCpuSecond',
  'wallSeconds',
  'cpuSeconds',
  'linesPerCpuSecond',
  'messagesRead',
  'rebalanceRevocations',
  'parts',
];

/** Lowest and highest value and (highest / lowest - 1). */
function spread(values: number[]): { min: number; max: number; relative: number } {
  const min = Math.min(...values);
  const max = Math.max(...values);
  return { min: Math.round(min), max: Math.round(max), relative: round3(max / min - 1) };
}

/**
 * The worker against the peer: the steady-state ratio is the median of each round's own ratio
 * (the worker's run against the peer's run of the same round), the other two compare medians.
 */
function versusPeer(
  med: Record<string, number>,
  runs: RunResult[],
  peer: Record<string, number>,
  peerRuns: PeerRun[],
): Record<string, unknown> {
  const rounds = runs.map((r, i) => round3(r.steadyLinesPerCpuSecond / peerRuns[i].steadyLinesPerCpuSecond));
  return {
    steadyLinesPerCpuSecond: round3(median(rounds)),
    steadyRoundRatios: rounds,
    steadyRatioOfMedians: round3(med.steadyLinesPerCpuSecond / peer.steadyLinesPerCpuSecond),
    linesPerCpuSecond: round3(med.linesPerCpuSecond / peer.linesPerCpuSecond),
    netLinesPerCpuSecond: round3(med.netLinesPerCpuSecond / peer.linesPerCpuSecond),
  };
}

/** Packed runs (first format) with integrity off and on, alternating; medians and the on/off ratio. */
async function integrityMode(
  bed: TestBed,
  o: E2eOptions,
  lines: Buffer[],
  idleCpu: number,
): Promise<Record<string, unknown>> {
  const format = o.formats.split(',')[0] as Format;
  const runs: Record<'off' | 'on', RunResult[]> = { off: [], on: [] };
  for (let i = 0; i < o.runs; i++) {
    const order: Array<'off' | 'on'> = i % 2 === 0 ? ['on', 'off'] : ['off', 'on'];
    for (const k of order)
      runs[k].push(await workerRun(bed, o, lines, 100, idleCpu, format, { integrity: k === 'on' }));
  }
  const off = summarize(runs.off, RUN_KEYS);
  const on = summarize(runs.on, RUN_KEYS);
  return {
    format,
    off: { median: off, runs: runs.off },
    on: { median: on, runs: runs.on },
    steadyOnVsOff: round3(on.steadyLinesPerCpuSecond / off.steadyLinesPerCpuSecond),
  };
}

/** One profiled run (first format) summarised by stage. */
async function profiledRun(
  bed: TestBed,
  o: E2eOptions,
  lines: Buffer[],
  perMessage: number,
  idleCpu: number,
): Promise<{ run: RunResult; breakdown: ProfileBreakdown; file: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lp-bench-prof-'));
  const format = o.formats.split(',')[0] as Format;
  const run = await workerRun(bed, o, lines, perMessage, idleCpu, format, { profileDir: dir });
  const file = path.join(
    dir,
    fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))!,
  );
  return { run, breakdown: profileBreakdown(file), file };
}

async function bench(bed: TestBed, o: E2eOptions) {
  const idle = [];
  for (let i = 0; i < o.runs; i++) idle.push(await idleWorkerCpu(bed, o.partitions));
  const idleCpu = median(idle);
  const modes = [
    {
      name: 'packed100',
      lines: generateSampleLines('fortigate', o.packedLines, { seed: 5 }),
      perMessage: 100,
    },
    { name: 'single', lines: generateSampleLines('fortigate', o.singleLines, { seed: 6 }), perMessage: 1 },
  ];
  const results: Record<string, unknown> = {};
  const wanted = o.modes.split(',');
  for (const m of modes)
    if (wanted.includes(m.name)) results[m.name] = await benchMode(bed, o, m.lines, m.perMessage, idleCpu);
  if (o.integrity) results.packed100Integrity = await integrityMode(bed, o, modes[0].lines, idleCpu);
  // One profiled run per named traffic (comma-separated: single, packed100) that was run.
  const profiled = modes.filter((m) => wanted.includes(m.name) && o.profileMode.split(',').includes(m.name));
  for (const m of o.profile ? profiled : [])
    results[m.name === 'single' ? 'singleLineProfile' : `${m.name}Profile`] = await profiledRun(
      bed,
      o,
      m.lines,
      m.perMessage,
      idleCpu,
    );
  return { idleWorkerCpuSeconds: idleCpu, ...results };
}

/** What each figure of the printed JSON means. */
const MEASURES = {
  linesPerCpuSecond:
    'gross: lines / worker CPU of the whole process life (start-up, join, drain, exit included)',
  netLinesPerCpuSecond:
    'gross minus the median CPU of an idle worker that starts, joins an empty topic and stops',
  steadyLinesPerCpuSecond:
    "lines / CPU from the consumer group's first assignment to the last row stored, the same window for the worker and the peer (steady-state throughput; the targets use it). Start: the worker logs its join; the peer's assignment is seen by polling the group every 50 ms. End: the group's committed offsets reach the end of the topic (both commit after the rows are stored), polled every 200 ms; CPU read from /proc, nothing polled inside either process",
  perMillionLines: 'worker figures use the steady-state CPU; server = ClickHouse process CPU during the run',
  peer: "ClickHouse's Kafka engine in its own chdb process, one consumer (like the one worker), a materialized view parsing FortiGate in SQL into the same schema; steady* = the window above, linesPerCpuSecond = its own CPU from creating its tables to the end of that window; messagesRead above the topic's messages means a rebalance made it read again",
  vsPeer:
    "steadyLinesPerCpuSecond = median of the rounds' own ratios (each round runs the worker and the peer back to back on the same backlog: steadyRoundRatios), steadyRatioOfMedians = ratio of the two medians",
  steadySpread:
    'lowest and highest steady lines per CPU-second over the runs, relative = highest / lowest - 1',
  threadsPerMillionLines:
    "worker CPU of its whole life up to the last row, by thread, per million lines: Node's main thread, V8's worker threads (GC tasks, JIT compilation), other threads (libuv's threadpool, native addons)",
};

if (require.main === module) {
  runBenchMain(async (argv) => {
    const o = parseOptions(argv);
    // Reuse a running bed (LP_TESTBED_FILE) or start a private Kafka + ClickHouse one.
    return withKafkaBed('lp-bench-e2e-', async (bed) => {
      const results = await bench(bed, o);
      return {
        benchmark: 'e2e',
        targets: targetsBlock(e2eTargets(results)),
        traffic: 'fortigate (format auto)',
        options: o,
        machine: benchMachine(),
        // What the worker processes ran with (test/worker-support.ts spawnWorker).
        workerRuntime: {
          nodeArgs: WORKER_NODE_ARGS.join(' '),
          extraNodeArgs: process.env.LP_BENCH_WORKER_NODE_ARGS ?? '',
        },
        engine: bed.clickhouse?.version,
        measures: MEASURES,
        ...results,
      };
    });
  });
}
