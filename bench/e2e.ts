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
import { freePort } from '../test/env/process';
import type { TestBed } from '../test/env/testbed';
import * as s from '../test/worker-support';
import { committedEverything, measurePeer, type PeerRun } from './e2e-peer-run';
import { profileBreakdown, type ProfileBreakdown } from './profile-breakdown';
import { benchMachine, runBenchMain, withKafkaBed } from './clickhouse-bench';
import type { StageCpuSummary } from '../common/src/stage-cpu';
import { generateKeyPairSync } from 'node:crypto';
import { buildTableDDL } from '../operator/src/desired/clickhouse';
import { SECRET_ENV } from '../common/src/worker-config';
import { exitSummary, procCpuSeconds, procThreadCpu, procUsage, serverPid } from './e2e-process';
import { e2eTargets, targetsBlock } from './targets';
import { WORKER_NODE_ARGS } from '../common/src/worker-runtime';

export { procCpuSeconds, procUsage, serverPid } from './e2e-process';

/** Insert formats the worker can send (worker tuning `insertFormat`). */
type Format = 'RowBinary' | 'TabSeparated';

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

/** One measured run. */
export interface RunResult {
  /** Lines in the topic (the backlog, plus any the test producer duplicated on a retry). */
  lines: number;
  producedDuplicateLines: number;
  wallSeconds: number;
  cpuSeconds: number;
  netCpuSeconds: number;
  /** Worker CPU from its first group join to the last row stored (no start-up, no drain). */
  steadyCpuSeconds: number;
  serverCpuSeconds: number;
  linesPerCpuSecond: number;
  netLinesPerCpuSecond: number;
  steadyLinesPerCpuSecond: number;
  workerCpuSecondsPerMillionLines: number;
  serverCpuSecondsPerMillionLines: number;
  totalCpuSecondsPerMillionLines: number;
  peakRssMiB: number;
  /** Share of the worker's CPU (whole life, at the last row) spent in the kernel: page faults, sockets, munmap. */
  workerSystemCpuShare: number;
  /** Minor page faults of the worker (whole life, at the last row) per million lines: fresh memory touched. */
  workerMinorFaultsPerMillionLines: number;
  /** Data INSERTs the worker made (batches stored). */
  inserts: number;
  /** Lines consumed twice (re-delivered after a rebalance); 0 on a calm run. */
  reconsumedLines: number;
  /** Worker CPU seconds per million lines by stage (whole life; stage-cpu.ts), and what no stage holds. */
  stagesPerMillionLines: Record<string, number>;
  /** Worker CPU seconds per million lines by thread (whole life, at the last row; procThreadCpu). */
  threadsPerMillionLines: Record<string, number>;
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

/**
 * Produces the backlog and returns the lines the topic really holds: under load the test
 * producer (not idempotent) may write a retried batch twice, and those lines are consumed too.
 */
async function produceBacklog(
  bed: TestBed,
  p: s.Pipeline,
  partitions: number,
  lines: Buffer[],
  perMessage: number,
): Promise<number> {
  const producer = await s.testProducer(bed);
  const sent = await s.produceLines(producer, p.topic, partitions, lines, perMessage);
  await producer.disconnect();
  const admin = s.kafkaClient(bed).admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(p.topic);
    const messages = offsets.reduce((n, o) => n + Number(o.high) - Number(o.low), 0);
    return lines.length + (messages - sent) * perMessage;
  } finally {
    await admin.disconnect();
  }
}

/** Sum of the worker's /metrics samples whose line starts with one of `names` (0 while unreachable). */
async function workerCounter(port: number, ...names: string[]): Promise<number> {
  const r = await s.workerGet(port, '/metrics');
  let n = 0;
  for (const line of r.body.split('\n'))
    if (names.some((name) => line.startsWith(name))) n += Number(line.slice(line.lastIndexOf(' ') + 1)) || 0;
  return n;
}

/**
 * A fresh pipeline; under heavy load the broker may answer the new topic's first metadata request
 * with UNKNOWN_TOPIC_OR_PARTITION (kafkajs waits only on LEADER_NOT_AVAILABLE): the same pipeline
 * is created again a little later (an existing topic is then left as it is).
 */
async function createWithRetry(bed: TestBed, partitions: number): Promise<s.Pipeline> {
  const p = s.newPipeline('bench', partitions);
  for (let attempt = 1; ; attempt++) {
    try {
      await s.createPipeline(bed, p);
      return p;
    } catch (err) {
      if (attempt >= 6) throw err;
      await new Promise((r) => setTimeout(r, 2_000 * attempt));
    }
  }
}

async function withPipeline<T>(
  bed: TestBed,
  partitions: number,
  fn: (p: s.Pipeline) => Promise<T>,
): Promise<T> {
  const p = await createWithRetry(bed, partitions);
  try {
    return await fn(p);
  } finally {
    await s.dropPipeline(bed, p);
  }
}

/** CPU of a worker that starts, joins an empty topic, and drains: subtracted from runs. */
async function idleWorkerCpu(bed: TestBed, partitions: number): Promise<number> {
  return withPipeline(bed, partitions, async (p) => {
    const w = s.spawnWorker(bed, s.workerConfig(bed, p, benchBatch()), await freePort(), 'idle');
    await s.pollUntil(
      () => s.workerGet(w.port, '/readyz'),
      (r) => r.status === 200,
      60_000,
      200,
    );
    await s.stopWorker(w);
    return exitSummary(w.logFile).cpu;
  });
}

function benchBatch(format?: Format) {
  // The operator's defaults (100k rows, 16 MiB, 1 s) and production tuning (plus A/B overrides).
  const tuning = { ...(JSON.parse(process.env.LP_BENCH_TUNING ?? '{}') as object), insertFormat: format };
  return { batch: { maxRows: 100_000, maxBytes: 16 * 1024 * 1024, maxDelayMs: 1_000 }, tuning };
}

async function workerRun(
  bed: TestBed,
  o: E2eOptions,
  lines: Buffer[],
  perMessage: number,
  idleCpu: number,
  format: Format,
  extra: { profileDir?: string; integrity?: boolean } = {},
): Promise<RunResult> {
  const { profileDir, integrity } = extra;
  return withPipeline(bed, o.partitions, async (p) => {
    if (integrity) await createIntegrityTables(bed, p);
    const total = await produceBacklog(bed, p, o.partitions, lines, perMessage);
    const admin = s.kafkaClient(bed).admin();
    await admin.connect();
    const ch = s.chClient(bed);
    const server = serverPid(bed);
    const server0 = procCpuSeconds(server);
    const t0 = Date.now();
    const cfg = s.workerConfig(bed, p, benchBatch(format));
    if (integrity) cfg.integrity = { ...cfg.integrity, enabled: true };
    const profArgs = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
    // LP_BENCH_WORKER_NODE_ARGS: extra Node flags for the worker (A/B of runtime settings).
    const nodeArgs = (process.env.LP_BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const port = await freePort();
    const w = withSigningKey(integrity, () =>
      s.spawnWorker(bed, cfg, port, 'bench', [...nodeArgs, ...profArgs]),
    );
    // Completion from the group's committed offsets (the worker commits right after a batch is
    // stored): polling ClickHouse (count + uniqExact over every raw line) cost the server ~15 ms a
    // poll, and scraping the worker's /metrics cost the worker ~10 % of a small run.
    await s.pollUntil(
      () => committedEverything(admin, p.topic, p.groupId),
      (done) => done,
      600_000,
      200,
    );
    const wallSeconds = (Date.now() - t0) / 1000;
    const usage = procUsage(w.child.pid ?? 0);
    const threads = procThreadCpu(w.child.pid ?? 0);
    const workerCpuAtLastRow = usage.user + usage.system;
    const serverCpuSeconds = procCpuSeconds(server) - server0;
    const stored = await s.storedCounts(ch, p);
    const inserts = await workerCounter(w.port, 'logpipeline_worker_batches_total{outcome="stored"}');
    await s.stopWorker(w);
    await ch.close();
    await admin.disconnect();
    if (stored.rows + stored.dlq !== total || stored.distinct !== stored.rows)
      throw new Error(`stored ${JSON.stringify(stored)} for ${total} lines`);
    const { cpu, lines: seen, peakRssMiB, cpuAtJoin, stageCpu, system } = exitSummary(w.logFile);
    const steady = Math.max(1e-3, workerCpuAtLastRow - cpuAtJoin);
    // More than sent: a rebalance under load re-delivered messages (stored once: tokens); rates use the unique lines.
    if (seen < total) throw new Error(`worker consumed ${seen} lines, expected ${total}`);
    const net = Math.max(1e-3, cpu - idleCpu);
    const perMillion = 1e6 / total;
    return {
      lines: total,
      producedDuplicateLines: total - lines.length,
      wallSeconds,
      cpuSeconds: cpu,
      netCpuSeconds: net,
      steadyCpuSeconds: steady,
      serverCpuSeconds,
      linesPerCpuSecond: total / cpu,
      netLinesPerCpuSecond: total / net,
      steadyLinesPerCpuSecond: total / steady,
      // Per-million figures use the steady-state CPU (the throughput cost, not start/stop).
      workerCpuSecondsPerMillionLines: steady * perMillion,
      serverCpuSecondsPerMillionLines: serverCpuSeconds * perMillion,
      totalCpuSecondsPerMillionLines: (steady + serverCpuSeconds) * perMillion,
      peakRssMiB,
      workerSystemCpuShare: usage.system / Math.max(1e-3, workerCpuAtLastRow),
      workerMinorFaultsPerMillionLines: usage.minorFaults * perMillion,
      inserts,
      reconsumedLines: seen - total,
      stagesPerMillionLines: stageFigures(stageCpu, cpu - cpuAtJoin, system, perMillion),
      threadsPerMillionLines: {
        main: round3(threads.main * perMillion),
        v8Workers: round3(threads.v8Workers * perMillion),
        other: round3(threads.other * perMillion),
      },
    };
  });
}

/** Stage CPU per million lines: each stage (user+system), GC pauses, kernel time, and the rest. */
function stageFigures(
  st: StageCpuSummary | undefined,
  cpuAfterJoin: number,
  system: number,
  perMillion: number,
): Record<string, number> {
  if (!st) return {};
  const out: Record<string, number> = {};
  let staged = 0;
  let stagedSystem = 0;
  for (const [name, u] of Object.entries(st.stages)) {
    out[name] = round3((u.user + u.system) * perMillion);
    staged += u.user + u.system;
    stagedSystem += u.system;
  }
  out.systemInStages = round3(stagedSystem * perMillion);
  out.systemTotal = round3(system * perMillion);
  out.gcPause = round3(st.gcPauseSeconds * perMillion);
  // Kafka client and decompression, HTTP, timers, GC (the pauses above): what no stage counts.
  out.outsideStages = round3((cpuAfterJoin - staged) * perMillion);
  return out;
}

/** Spawns with the signing key in the environment when integrity is on (only while spawning). */
function withSigningKey<T>(integrity: boolean | undefined, spawn: () => T): T {
  if (!integrity) return spawn();
  const keys = generateKeyPairSync('ed25519');
  process.env[SECRET_ENV.signingKey] = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  try {
    return spawn();
  } finally {
    delete process.env[SECRET_ENV.signingKey];
  }
}

/** The operator's link and checkpoint tables for `p` (integrity runs). */
async function createIntegrityTables(bed: TestBed, p: s.Pipeline): Promise<void> {
  const spec = s.pipelineSpec(bed, p);
  const ddl = buildTableDDL({ ...spec, integrity: { ...spec.integrity, enabled: true } });
  if (!ddl.ok) throw new Error(ddl.message);
  const ch = s.chClient(bed);
  try {
    for (const t of ddl.value.tables)
      if (t.role === 'integrity' || t.role === 'checkpoints')
        for (const query of t.create) await ch.command({ query });
  } finally {
    await ch.close();
  }
}

async function peerRun(bed: TestBed, o: E2eOptions, lines: Buffer[], perMessage: number): Promise<PeerRun> {
  return withPipeline(bed, o.partitions, async (p) => {
    const total = await produceBacklog(bed, p, o.partitions, lines, perMessage);
    const r = await measurePeer(bed, p.topic, `${p.groupId}.peer`, total);
    if (r.rows !== total || r.parsedRows !== total) {
      throw new Error(`peer stored ${r.rows} rows (${r.parsedRows} parsed), expected ${total}`);
    }
    return r;
  });
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

const round3 = (x: number) => Math.round(x * 1000) / 1000;

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
