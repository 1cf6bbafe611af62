/**
 * Autoscaler benchmark: `npm run bench:autoscale [-- --runs 3 --poll-intervals 1s,15s --drain-lines
 * 1000000 --pipelines 1000 --steady-seconds 60 --parts reaction,drain,scale]`. Starts a private
 * test bed (or reuses LP_TESTBED_FILE), runs the operator as its own process and the PodRunner
 * for the workers, and prints JSON:
 *
 * - reaction: from the onset of lag (a producer starts outrunning one worker) to the operator's
 *   scale-up of the Deployment, per poll interval, median of `runs`;
 * - drain: time for 1 worker and for the maximum (one per partition) to drain a fixed backlog,
 *   with lines per worker CPU-second (the workers log their CPU time at exit);
 * - scale: the 1000-pipeline run (bench/autoscale-scale.ts): readyAt p50/p90/all, per-phase
 *   counters (create, steady, steadyLate: operator and apiserver CPU, reconciles, Kubernetes /
 *   ClickHouse / Kafka requests, per pipeline per minute), RSS, a cold start and the churn.
 *   Flags: --concurrency N (default: the operator's, 32), --create-concurrency N (creates in flight,
 *   default 64), --restart 1|0, --skip-delete 0|1, --cpu-prof-dir DIR,
 *   --heap-snapshot-dir DIR (snapshot + summary by constructor), --operator-node-args '--max-semi-space-size=2'.
 */
import { DEFAULT_CONCURRENCY } from '../operator/src/controller/concurrency';
import { registerKafkaCodecs } from '../common/src/kafka/codecs';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import { durationMs } from '../operator/src/api/duration';
import { GROUP, PLURAL, VERSION, type LogPipelineSpec } from '../operator/src/api/types';
import { workerName } from '../operator/src/desired/labels';
import { generateSampleLines } from '../test/fixtures/samples';
import { startTestBed, stopTestBed } from '../test/env/bed';
import { PodRunner } from '../test/env/pod-runner';
import { readTestBed, type TestBed } from '../test/env/testbed';
import { produceLines, testProducer } from '../test/worker-support';
import { DEFAULT_CREATE_CONCURRENCY, scaleBench } from './autoscale-scale';
import { benchSpec, groupLag, median, startOperator, until } from './autoscale-support';

/** Benchmark settings (CLI flags of the same name in kebab-case). */
export interface AutoscaleBenchOptions {
  runs: number;
  pollIntervals: string[];
  drainLines: number;
  pipelines: number;
  steadySeconds: number;
  parts: string[];
  /** Operator --concurrency in the scale part. */
  concurrency: number;
  /** Scale part: LogPipeline creates in flight (the storm; default DEFAULT_CREATE_CONCURRENCY). */
  createConcurrency: number;
  /** Scale part: write an operator CPU profile into this directory ('' = none). */
  cpuProfDir: string;
  /** Scale part: measure a cold start (1) or not (0). */
  restart: number;
  /** Scale part: skip deleting the pipelines at the end (1). */
  skipDelete: number;
  /** Scale part: write an operator heap snapshot (and its summary by constructor) here at the end of steady ('' = none). */
  heapSnapshotDir: string;
  /** Scale part: extra node/V8 flags of the operator process, space-separated (e.g. '--max-semi-space-size=2'). */
  operatorNodeArgs: string;
  /** Scale part: extra environment of the operator process, space-separated NAME=VALUE (e.g. 'MALLOC_ARENA_MAX=2'). */
  operatorEnv: string;
}

const NS = 'as-bench';
const PARTITIONS = 3;

function parseOptions(argv: string[]): AutoscaleBenchOptions {
  const o: AutoscaleBenchOptions = {
    runs: 3,
    pollIntervals: ['1s', '15s'],
    drainLines: 1_000_000,
    pipelines: 1000,
    steadySeconds: 60,
    parts: ['reaction', 'drain', 'scale'],
    concurrency: DEFAULT_CONCURRENCY,
    createConcurrency: DEFAULT_CREATE_CONCURRENCY,
    cpuProfDir: '',
    restart: 1,
    skipDelete: 0,
    heapSnapshotDir: '',
    operatorNodeArgs: '',
    operatorEnv: '',
  };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i]
      .replace(/^--/, '')
      .replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()) as keyof AutoscaleBenchOptions;
    if (!(key in o)) throw new Error(`unknown option ${argv[i]}`);
    const v = argv[i + 1];
    const current = o[key];
    (o as unknown as Record<string, unknown>)[key] = Array.isArray(current)
      ? v.split(',')
      : typeof current === 'string'
        ? v
        : Number(v);
  }
  return o;
}

interface Ctx {
  bed: TestBed;
  dir: string;
  kube: { apps: AppsV1Api; custom: CustomObjectsApi };
  admin: Admin;
  producer: Producer;
}

async function createPipeline(ctx: Ctx, name: string, workers: LogPipelineSpec['workers']): Promise<void> {
  await ctx.kube.custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    plural: PLURAL,
    namespace: NS,
    body: {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'LogPipeline',
      metadata: { name, namespace: NS },
      spec: benchSpec(ctx.bed, NS, name, 'as_bench', workers, PARTITIONS),
    },
  });
}

async function replicas(ctx: Ctx, name: string): Promise<{ spec: number; ready: number }> {
  const d = await ctx.kube.apps.readNamespacedDeployment({ namespace: NS, name: workerName(name) });
  return { spec: d.spec?.replicas ?? 0, ready: d.status?.readyReplicas ?? 0 };
}

const group = (name: string) => `logpipeline.${NS}.${name}`;
const topic = (name: string) => `${NS}.${name}`;

/** Produces lines as fast as the producer goes until `stop()` says so; returns the count. */
async function produceUntil(ctx: Ctx, name: string, stop: () => boolean): Promise<number> {
  let sent = 0;
  for (let i = 0; !stop() && sent < 2_000_000; i++) {
    const lines = generateSampleLines('mix', 5_000, { seed: i, startMs: Date.now() - 5_000 });
    await produceLines(ctx.producer, topic(name), PARTITIONS, lines, 1);
    sent += lines.length;
  }
  return sent;
}

/** Onset of lag -> scale-up, for one poll interval; median of `runs`. */
async function reaction(ctx: Ctx, poll: string, runs: number) {
  const name = `react-${poll}`;
  await createPipeline(ctx, name, {
    autoscaling: {
      enabled: true,
      minReplicas: 1,
      maxReplicas: PARTITIONS,
      lagPerReplica: 2_000,
      pollInterval: poll,
      scaleDownStabilization: '5s',
    },
  });
  const samples: Array<{ reactionMs: number; lines: number }> = [];
  for (let run = 0; run < runs; run++) {
    await until(
      `${name} idle at one ready worker`,
      async () => {
        const r = await replicas(ctx, name);
        return r.spec === 1 && r.ready === 1 && (await groupLag(ctx.admin, topic(name), group(name))) === 0;
      },
      600_000,
      500,
    );
    // Spread the onsets over the poll phase (run i at (i + 0.5) / runs of an interval after idle
    // was seen, itself right after a poll): the median is the reaction a random onset sees.
    await new Promise((r) => setTimeout(r, ((run + 0.5) / runs) * durationMs(poll)));
    const onset = Date.now();
    let scaledAt = 0;
    const watch = until(
      `${name} scaled up`,
      async () => (await replicas(ctx, name)).spec > 1 && (scaledAt = Date.now()),
      300_000,
      50,
    );
    const lines = await produceUntil(ctx, name, () => scaledAt > 0);
    await watch;
    samples.push({ reactionMs: scaledAt - onset, lines });
  }
  const ms = samples.map((s) => s.reactionMs);
  return { pollInterval: poll, medianReactionMs: median(ms), maxReactionMs: Math.max(...ms), runs: samples };
}

/** Worker CPU seconds logged at exit by the pods of `deployment` (PodRunner dirs). */
function workerCpu(dir: string, deployment: string): number {
  let cpu = 0;
  for (const pod of fs.readdirSync(dir).filter((d) => d.startsWith(`${NS}-${deployment}-`))) {
    for (const line of fs.readFileSync(path.join(dir, pod, 'worker.log'), 'utf8').split('\n')) {
      if (!line.includes('"worker stopped"')) continue;
      const j = JSON.parse(line) as { cpuUserSeconds: number; cpuSystemSeconds: number };
      cpu += j.cpuUserSeconds + j.cpuSystemSeconds;
    }
  }
  return cpu;
}

/** Time for `workers` workers (started when the backlog is already there) to drain `lines`. */
async function drain(ctx: Ctx, workers: number, lines: number, run: number) {
  const name = `drain-${workers}-${run}`;
  await createPipeline(ctx, name, { replicas: 0 });
  await until(
    `${name} topic`,
    async () => (await ctx.admin.listTopics()).includes(topic(name)),
    120_000,
    500,
  );
  for (let done = 0; done < lines; done += 50_000) {
    const chunk = generateSampleLines('mix', Math.min(50_000, lines - done), {
      seed: done,
      startMs: Date.now() - 50_000,
    });
    await produceLines(ctx.producer, topic(name), PARTITIONS, chunk, 1);
  }
  const patch = (n: number) =>
    ctx.kube.custom.patchNamespacedCustomObject(
      {
        group: GROUP,
        version: VERSION,
        plural: PLURAL,
        namespace: NS,
        name,
        body: { spec: { workers: { replicas: n } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  const t0 = Date.now();
  await patch(workers);
  let firstProgress = 0;
  await until(
    `${name} drained`,
    async () => {
      const lag = await groupLag(ctx.admin, topic(name), group(name));
      if (!firstProgress && lag < lines) firstProgress = Date.now();
      return lag === 0;
    },
    1_800_000,
    200,
  );
  const wall = (Date.now() - t0) / 1000;
  await patch(0);
  const dep = workerName(name);
  const cpu = await until(
    `${name} workers stopped`,
    async () => {
      const c = workerCpu(ctx.dir, dep);
      return (
        (await replicas(ctx, name)).ready === 0 &&
        fs.readdirSync(ctx.dir).filter((d) => d.startsWith(`${NS}-${dep}-`)).length >= workers &&
        c > 0 &&
        c
      );
    },
    120_000,
    500,
  );
  return {
    workers,
    lines,
    wallSeconds: wall,
    firstProgressSeconds: (firstProgress - t0) / 1000,
    linesPerSecond: Math.round(lines / wall),
    workerCpuSeconds: cpu,
    linesPerWorkerCpuSecond: Math.round(lines / cpu),
  };
}

async function withBed<T>(fn: (bed: TestBed, dir: string) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lp-bench-autoscale-'));
  let own: TestBed | undefined;
  if (!process.env.LP_TESTBED_FILE || !fs.existsSync(process.env.LP_TESTBED_FILE)) {
    process.env.LP_TESTBED_FILE = path.join(dir, 'state.json');
    // Progress to stderr: stdout is the JSON document alone.
    own = await startTestBed({
      ownerPid: process.pid,
      dir: path.join(dir, 'bed'),
      log: (l) => console.error(l),
    });
  }
  let ok = false;
  try {
    const result = await fn(readTestBed(), dir);
    ok = true;
    return result;
  } finally {
    if (own) await stopTestBed(own);
    // The run's pods, operator logs and (own) bed go with a finished run; a failed one keeps them.
    if (ok) fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
    else console.error(`bench: logs kept in ${dir}`);
  }
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  const out = await withBed(async (bed, dir) => {
    const kc = new KubeConfig();
    kc.loadFromFile(bed.kubernetes!.kubeconfig);
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: NS } } }).catch(() => undefined);
    await core
      .createNamespacedSecret({
        namespace: NS,
        body: {
          metadata: { name: 'ch' },
          stringData: { username: bed.clickhouse!.username, password: bed.clickhouse!.password },
        },
      })
      .catch(() => undefined);
    const podDir = path.join(dir, 'pods');
    fs.mkdirSync(podDir, { recursive: true });
    const result: Record<string, unknown> = { cpus: os.cpus().length };
    if (o.parts.includes('reaction') || o.parts.includes('drain')) {
      registerKafkaCodecs();
      const admin = new Kafka({ brokers: [bed.kafka!.bootstrap], logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      const producer = await testProducer(bed);
      const op = await startOperator(bed, [NS], dir);
      const runner = new PodRunner({ kubeconfig: bed.kubernetes!.kubeconfig, dir: podDir, intervalMs: 500 });
      runner.start();
      const ctx: Ctx = {
        bed,
        dir: podDir,
        kube: { apps: kc.makeApiClient(AppsV1Api), custom: kc.makeApiClient(CustomObjectsApi) },
        admin,
        producer,
      };
      try {
        if (o.parts.includes('reaction')) {
          const r = [];
          for (const poll of o.pollIntervals) r.push(await reaction(ctx, poll, o.runs));
          result.reaction = r;
        }
        if (o.parts.includes('drain')) {
          const d: Record<string, unknown> = {};
          for (const workers of [1, PARTITIONS]) {
            const runs = [];
            for (let run = 0; run < Math.max(1, Math.min(o.runs, 2)); run++)
              runs.push(await drain(ctx, workers, o.drainLines, run));
            d[`workers${workers}`] = {
              medianWallSeconds: median(runs.map((x) => x.wallSeconds)),
              medianLinesPerWorkerCpuSecond: median(runs.map((x) => x.linesPerWorkerCpuSecond)),
              runs,
            };
          }
          result.drain = d;
        }
      } finally {
        await runner.stop();
        await op.stop();
        await producer.disconnect();
        await admin.disconnect();
      }
    }
    if (o.parts.includes('scale'))
      result.scale = await scaleBench(bed, dir, o.pipelines, o.steadySeconds, {
        concurrency: o.concurrency,
        createConcurrency: o.createConcurrency,
        nodeArgs: [
          ...(o.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`] : []),
          ...o.operatorNodeArgs.split(' ').filter((a) => a !== ''),
        ],
        heapSnapshotDir: o.heapSnapshotDir || undefined,
        env: Object.fromEntries(
          o.operatorEnv
            .split(' ')
            .filter((a) => a.includes('='))
            .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]),
        ),
        restart: o.restart !== 0,
        skipDelete: o.skipDelete !== 0,
      });
    return result;
  });
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}

if (require.main === module) {
  main().catch((err: Error) => {
    process.stderr.write(`${err.stack ?? err.message}\n`);
    process.exit(1);
  });
}
