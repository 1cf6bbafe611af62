/**
 * The 1000-pipeline benchmark: N autoscaled LogPipelines (1-partition topics, idle, minReplicas 0)
 * created in the real apiserver against the bed's Kafka and ClickHouse, reconciled by the operator
 * running as its own process. Measures the time until all N are Ready, the operator's RSS and heap
 * once they are, its steady-state CPU per pipeline poll, and its RSS after all are deleted (state
 * swept, no growth with churn: KEDA #7453).
 *
 * The bed has no Deployment controller. The pipelines are created with minReplicas 0, and for a
 * Deployment with zero replicas this benchmark writes what the controller would, from a watch
 * (autoscale-watch.ts): observed generation and zero pods (it never claims a pod that does not
 * exist). Ready is clocked from a watch too, so measuring does not load the apiserver.
 *
 * The pipelines are created "at once" (issue 18): `createConcurrency` creates in flight, by default
 * DEFAULT_CREATE_CONCURRENCY, as a GitOps tool or a script fanning out its applies would send them.
 * A create the apiserver turns away as too many requests in flight (429) is sent again after its
 * Retry-After. The clock starts before the first create in every case.
 */
import fs from 'node:fs';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { GROUP, PLURAL, VERSION, type LogPipeline } from '../operator/src/api/types';
import type { TestBed } from '../test/env/testbed';
import {
  benchSpec,
  cpuSeconds,
  median,
  groupCpuSeconds,
  metric,
  rssMiB,
  scrape,
  startOperator,
  until,
} from './autoscale-support';
import { OPERATOR_ENV, OPERATOR_NODE_ARGS } from '../scripts/operator-runtime';
import { createKubeClient, isStatus } from '../operator/src/apply/kube-rest';
import { readyClock, zeroReplicaController } from './autoscale-watch';
import { DEFAULT_CONCURRENCY } from '../operator/src/controller/concurrency';
import { coldStart, phase, type Mark, type PhaseCounters } from './autoscale-phases';
import {
  heapSnapshotArgs,
  memoryBreakdown,
  summariseHeapSnapshot,
  takeHeapSnapshot,
  type MemoryBreakdown,
} from './autoscale-memory';

/** Creates in flight by default: the storm of the issue (measured: bench/README in the issue-18 rows). */
export const DEFAULT_CREATE_CONCURRENCY = 64;

/** Result of the N-pipeline run. */
export interface ScaleResult {
  pipelines: number;
  /** Creates in flight during the create phase. */
  createConcurrency: number;
  /** From the first create sent to the last create answered (the create phase's own duration). */
  createSeconds: number;
  /** Creates the apiserver answered 429 (too many requests in flight) and the bench sent again. */
  createRetries: number;
  allReadySeconds: number;
  operatorRssMiB: number;
  operatorHeapUsedMiB: number;
  autoscalerSeries: number;
  steady: {
    seconds: number;
    cpuSeconds: number;
    reconciles: number;
    pollsPerCpuSecond: number;
    /** Medians and maxima of samples every 5 s. */
    rssMiB: { median: number; max: number };
    heapUsedMiB: { median: number; max: number };
  };
  afterDeleteRssMiB: number;
  afterDeleteAutoscalerSeries: number;
  /** Seconds after the first create when 50% / 90% / 100% were Ready (watched). */
  readyAt?: Record<string, number>;
  /** Per pipeline, seconds from its own creation to its first Ready=True (watched). */
  readyLatency?: { p50: number; p90: number; max: number };
  /** Create phase (t0 -> all Ready): CPU of operator and kube-apiserver, reconciles, requests. */
  create?: PhaseCounters;
  steadyCounters?: PhaseCounters;
  steadyLate?: PhaseCounters;
  /** A fresh operator over the Ready pipelines (cold start): its whole counters. */
  restart?: Record<string, unknown>;
  /** RSS beside the V8 heap's parts at the end of the steady phase (MiB). */
  memory?: MemoryBreakdown;
  /** The heap snapshot taken after steady (--heap-snapshot-dir): file and self size by constructor. */
  heapSnapshot?: {
    file: string;
    totalMiB: number;
    rows: Array<{ what: string; count: number; selfMiB: number }>;
  };
}

/** Switches of the scale part (bench CLI flags). */
export interface ScaleBenchOptions {
  /** Operator --concurrency. Default: the operator's default (DEFAULT_CONCURRENCY). */
  concurrency?: number;
  /** LogPipeline creates in flight. Default DEFAULT_CREATE_CONCURRENCY. */
  createConcurrency?: number;
  /** Extra node arguments of the operator process, e.g. ['--cpu-prof', '--cpu-prof-dir=/tmp/p']. */
  nodeArgs?: string[];
  /** Measure a cold start (a fresh operator over the Ready pipelines). Default true. */
  restart?: boolean;
  /** How often the watched Ready count is looked at (readyAt resolution; no request). Default 100 ms. */
  readyPollMs?: number;
  /** Skip the churn phase (delete all, sweep check). Default false. */
  skipDelete?: boolean;
  /** Extra environment of the operator process (e.g. MALLOC_ARENA_MAX). */
  env?: Record<string, string>;
  /** Write a heap snapshot of the operator here after the steady phase and summarise it. */
  heapSnapshotDir?: string;
}

const NS = 'bench-1000';

function clients(bed: TestBed) {
  const kc = new KubeConfig();
  kc.loadFromFile(bed.kubernetes!.kubeconfig);
  return {
    kc,
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
  };
}

/** Runs `fn` over `items` with at most `limit` in flight. */
async function pool<T>(items: T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

/** Runs `send`, sending it again while the apiserver answers 429 (its max-requests-inflight). */
async function retryTooMany(send: () => Promise<unknown>, onRetry: () => void): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await send();
      return;
    } catch (err) {
      if (!isStatus(err, 429) || attempt >= 20) throw err;
      onRetry();
      await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
    }
  }
}

async function countReady(custom: CustomObjectsApi): Promise<{ total: number; ready: number }> {
  const list = (await custom.listNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    plural: PLURAL,
    namespace: NS,
  })) as { items: LogPipeline[] };
  const ready = list.items.filter((lp) =>
    lp.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  ).length;
  return { total: list.items.length, ready };
}

/** Creates `n` pipelines, waits for all Ready, measures the operator, deletes them. */
export async function scaleBench(
  bed: TestBed,
  dir: string,
  n: number,
  steadySeconds: number,
  opts: ScaleBenchOptions = {},
): Promise<ScaleResult> {
  const snapDir = opts.heapSnapshotDir;
  if (snapDir) fs.mkdirSync(snapDir, { recursive: true });
  // The operator runs as its image runs it (scripts/operator-runtime.ts), plus the bench's extras.
  const nodeArgs = [
    ...OPERATOR_NODE_ARGS,
    ...(opts.nodeArgs ?? []),
    ...(snapDir ? heapSnapshotArgs(snapDir) : []),
  ];
  const env = { ...OPERATOR_ENV, ...opts.env };
  const start = () => startOperator(bed, [NS], dir, opts.concurrency ?? DEFAULT_CONCURRENCY, nodeArgs, env);
  const { core, custom, kc } = clients(bed);
  await core.createNamespace({ body: { metadata: { name: NS } } });
  await core.createNamespacedSecret({
    namespace: NS,
    body: {
      metadata: { name: 'ch' },
      stringData: { username: bed.clickhouse!.username, password: bed.clickhouse!.password },
    },
  });
  let op = await start();
  const writer = zeroReplicaController(kc, NS);
  const clock = readyClock(kc, NS);
  try {
    const names = Array.from({ length: n }, (_, i) => `p${String(i).padStart(4, '0')}`);
    const autoscaling = {
      enabled: true,
      minReplicas: 0,
      maxReplicas: 1,
      lagPerReplica: 10_000,
      scaleDownStabilization: '0s',
    };
    const apiPgid = bed.kubernetes!.apiserver.pid;
    const mark = async (): Promise<Mark> => ({
      at: Date.now(),
      op: cpuSeconds(op.child.pid!),
      api: groupCpuSeconds(apiPgid),
      others: Object.fromEntries(
        (
          [
            ['etcd', bed.kubernetes?.etcd.pid],
            ['kafka', bed.kafka?.process.pid],
            ['clickhouse', bed.clickhouse?.process?.pid],
          ] as Array<[string, number | undefined]>
        )
          .filter((e): e is [string, number] => e[1] !== undefined)
          .map(([k, pid]) => [k, groupCpuSeconds(pid)]),
      ),
      text: await scrape(op),
    });
    const m0 = await mark();
    const readyAt: Record<string, number> = {};
    const createConcurrency = Math.max(1, opts.createConcurrency ?? DEFAULT_CREATE_CONCURRENCY);
    let createRetries = 0;
    // The bodies are built before the clock starts: the storm is the requests, not their assembly.
    const bodies = names.map((name) => ({
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'LogPipeline',
      metadata: { name, namespace: NS },
      spec: benchSpec(bed, NS, name, 'bench1000', { autoscaling }, 1),
    }));
    const t0 = Date.now();
    // Over kept-alive connections, as kubectl and client-go send them (client-node's fetch path
    // opens a new TLS connection per request, which the apiserver would pay for in the storm).
    const creator = createKubeClient(kc);
    const collection = `/apis/${GROUP}/${VERSION}/namespaces/${NS}/${PLURAL}`;
    await pool(bodies, createConcurrency, (body) =>
      retryTooMany(
        () => creator.request('POST', collection, { body }),
        () => createRetries++,
      ),
    );
    const created = Date.now();
    process.stderr.write(
      `created ${n} in ${(created - t0) / 1000} s, ${createConcurrency} in flight, ${createRetries} retried (429)\n`,
    );
    let last = '';
    await until(
      `all ${n} pipelines Ready`,
      async () => {
        const c = clock.counts();
        const line = `${Math.round((Date.now() - t0) / 1000)}s: ${c.ready}/${c.total} Ready`;
        if (line.split(':')[1] !== last.split(':')[1]) process.stderr.write(`${line}\n`);
        last = line;
        return c.ready === n;
      },
      3_600_000,
      opts.readyPollMs ?? 100,
    );
    const allReady = Date.now();
    // When the k-th pipeline turned Ready, from the watch: also while the bench was still creating
    // (the earlier bench only looked once its creates were done, so p50 could not precede them).
    const times = clock.readyTimes().sort((a, b) => a - b);
    for (const [label, frac] of [
      ['p50', 0.5],
      ['p90', 0.9],
      ['all', 1],
    ] as const)
      readyAt[label] = (times[Math.max(0, Math.ceil(frac * n) - 1)] - t0) / 1000;
    // The watch's count, checked once against the apiserver's own list.
    const listed = await countReady(custom);
    if (listed.ready !== n) throw new Error(`watch said ${n} Ready, the list says ${listed.ready}`);
    const lat = clock.latenciesMs().sort((a, b) => a - b);
    const at = (q: number) => Math.round(lat[Math.min(lat.length - 1, Math.floor(q * lat.length))]) / 1000;
    const readyLatency = { p50: at(0.5), p90: at(0.9), max: at(1) };
    process.stderr.write(`ready latency per pipeline: ${JSON.stringify(readyLatency)}\n`);
    const m1 = await mark();
    const pid = op.child.pid!;
    const text = await scrape(op);
    const ready = {
      operatorRssMiB: rssMiB(pid),
      operatorHeapUsedMiB: Math.round(
        metric(text, 'logpipeline_operator_nodejs_heap_size_used_bytes').sum / 1048576,
      ),
      autoscalerSeries: metric(text, 'logpipeline_autoscaler_lag_messages').series,
    };
    // Steady state: every pipeline polled every 15 s (the default interval).
    const cpu0 = cpuSeconds(pid);
    const rec0 = metric(text, 'logpipeline_operator_reconcile_total').sum;
    const rss: number[] = [];
    const heap: number[] = [];
    let mMid: Mark | undefined;
    const half = Date.now() + (steadySeconds * 1000) / 2;
    for (const end = Date.now() + steadySeconds * 1000; Date.now() < end;) {
      await new Promise((r) => setTimeout(r, 5_000));
      if (!mMid && Date.now() >= half) mMid = await mark();
      rss.push(rssMiB(pid));
      heap.push(
        Math.round(
          metric(await scrape(op), 'logpipeline_operator_nodejs_heap_size_used_bytes').sum / 1048576,
        ),
      );
    }
    const cpu = cpuSeconds(pid) - cpu0;
    const m2 = await mark();
    const endText = await scrape(op);
    const reconciles = metric(endText, 'logpipeline_operator_reconcile_total').sum - rec0;
    const memory = memoryBreakdown(pid, endText);
    process.stderr.write(`memory: ${JSON.stringify(memory)}\n`);
    let heapSnapshot: ScaleResult['heapSnapshot'];
    if (snapDir) {
      const file = await takeHeapSnapshot(op, snapDir);
      heapSnapshot = { file, ...summariseHeapSnapshot(file) };
      process.stderr.write(`heap: ${JSON.stringify(heapSnapshot)}\n`);
    }
    let restart: Record<string, unknown> | undefined;
    if (opts.restart ?? true) {
      await op.stop();
      op = await start();
      restart = await coldStart(op, n);
      process.stderr.write(`restart: ${JSON.stringify(restart)}\n`);
    }
    if (opts.skipDelete) {
      // Profiling runs: skip the churn phase (the bed is torn down with the namespace anyway).
      return {
        pipelines: n,
        createConcurrency,
        createSeconds: (created - t0) / 1000,
        createRetries,
        allReadySeconds: (allReady - t0) / 1000,
        ...ready,
        steady: {
          seconds: steadySeconds,
          cpuSeconds: Math.round(cpu * 100) / 100,
          reconciles,
          pollsPerCpuSecond: Math.round(reconciles / cpu),
          rssMiB: { median: median(rss), max: Math.max(...rss) },
          heapUsedMiB: { median: median(heap), max: Math.max(...heap) },
        },
        afterDeleteRssMiB: NaN,
        afterDeleteAutoscalerSeries: NaN,
        readyAt,
        readyLatency,
        create: phase(m0, m1),
        steadyCounters: phase(m1, m2, n),
        steadyLate: mMid ? phase(mMid, m2, n) : undefined,
        restart,
        memory,
        heapSnapshot,
      };
    }
    // Churn: delete every pipeline; the autoscaler's state and series must go with them (sweep: 30 s).
    await pool(names, 8, (name) =>
      custom.deleteNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        plural: PLURAL,
        namespace: NS,
        name,
      }),
    );
    await until(
      'all pipelines deleted',
      async () => (await countReady(custom)).total === 0,
      1_800_000,
      5_000,
    );
    await new Promise((r) => setTimeout(r, 40_000));
    const afterText = await scrape(op);
    return {
      pipelines: n,
      createConcurrency,
      createSeconds: (created - t0) / 1000,
      createRetries,
      allReadySeconds: (allReady - t0) / 1000,
      ...ready,
      steady: {
        seconds: steadySeconds,
        cpuSeconds: Math.round(cpu * 100) / 100,
        reconciles,
        pollsPerCpuSecond: Math.round(reconciles / cpu),
        rssMiB: { median: median(rss), max: Math.max(...rss) },
        heapUsedMiB: { median: median(heap), max: Math.max(...heap) },
      },
      afterDeleteRssMiB: rssMiB(op.child.pid!),
      afterDeleteAutoscalerSeries: metric(afterText, 'logpipeline_autoscaler_lag_messages').series,
      readyAt,
      readyLatency,
      create: phase(m0, m1),
      steadyCounters: phase(m1, m2, n),
      /** The second half of the steady window only (late first polls and scale-downs are over). */
      steadyLate: mMid ? phase(mMid, m2, n) : undefined,
      memory,
      heapSnapshot,
    };
  } finally {
    clock.stop();
    await writer.stop();
    await op.stop();
  }
}
