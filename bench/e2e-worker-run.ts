/**
 * One worker run and one peer run of the end-to-end benchmark (bench/e2e.ts): a fresh pipeline, a
 * produced backlog, a real worker process draining it into the bed's ClickHouse, and the figures
 * read from the worker's exit summary, /proc and the group's committed offsets.
 */
import { generateKeyPairSync } from 'node:crypto';
import { freePort } from '../test/env/process';
import type { TestBed } from '../test/env/testbed';
import * as s from '../test/worker-support';
import { buildTableDDL } from '../operator/src/desired/clickhouse';
import { SECRET_ENV } from '../common/src/worker-config';
import type { StageCpuSummary } from '../common/src/stage-cpu';
import { committedEverything, measurePeer, type PeerRun } from './e2e-peer-run';
import { exitSummary, procCpuSeconds, procThreadCpu, procUsage, serverPid } from './e2e-process';

/** Rounds to three decimals (the JSON's ratios and per-million figures). */
export const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** What a run needs of the bench's options: the topic's partition count. */
export interface RunShape {
  partitions: number;
}

/** Insert formats the worker can send (worker tuning `insertFormat`). */
export type Format = 'RowBinary' | 'TabSeparated';

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

/**
 * Produces the backlog and returns the lines the topic really holds, read from its offsets: the
 * test producer is idempotent, but a batch written twice by any retry would be consumed too.
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
export async function idleWorkerCpu(bed: TestBed, partitions: number): Promise<number> {
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

export function benchBatch(format?: Format) {
  // The operator's defaults (100k rows, 16 MiB, 1 s) and production tuning (plus A/B overrides).
  const tuning = { ...(JSON.parse(process.env.LP_BENCH_TUNING ?? '{}') as object), insertFormat: format };
  return { batch: { maxRows: 100_000, maxBytes: 16 * 1024 * 1024, maxDelayMs: 1_000 }, tuning };
}

export async function workerRun(
  bed: TestBed,
  o: RunShape,
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

export async function peerRun(
  bed: TestBed,
  o: RunShape,
  lines: Buffer[],
  perMessage: number,
): Promise<PeerRun> {
  return withPipeline(bed, o.partitions, async (p) => {
    const total = await produceBacklog(bed, p, o.partitions, lines, perMessage);
    const r = await measurePeer(bed, p.topic, `${p.groupId}.peer`, total);
    if (r.rows !== total || r.parsedRows !== total) {
      throw new Error(`peer stored ${r.rows} rows (${r.parsedRows} parsed), expected ${total}`);
    }
    return r;
  });
}
