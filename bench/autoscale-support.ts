/**
 * Pieces of the autoscaler benchmarks: the operator as its own process (`node
 * dist/operator/src/main.js`, so its RSS and CPU are its own), its metrics endpoint, /proc
 * readings, the group's lag read straight from Kafka (independent of the operator), and
 * autoscaled pipelines on the bed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Admin } from 'kafkajs';
import type { LogPipelineSpec } from '../operator/src/api/types';
import { freePort } from '../test/env/process';
import type { TestBed } from '../test/env/testbed';

/** Median of numbers (upper median for even counts). */
export function median(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  return v.length === 0 ? NaN : v[Math.floor(v.length / 2)];
}

/** The operator running as a child process. */
export interface OperatorProcess {
  child: ChildProcess;
  metricsPort: number;
  logFile: string;
  stop(): Promise<void>;
}

/** Starts `dist/operator/src/main.js` on `namespaces` (leader election off). */
export async function startOperator(
  bed: TestBed,
  namespaces: string[],
  dir: string,
  concurrency = 16,
  nodeArgs: string[] = [],
  env: Record<string, string> = {},
): Promise<OperatorProcess> {
  const main = path.resolve(__dirname, '../operator/src/main.js');
  if (!fs.existsSync(main)) throw new Error(`${main} is missing: run 'npm run build' first`);
  const metricsPort = await freePort();
  const logFile = path.join(dir, `operator-${Date.now()}.log`);
  const out = fs.openSync(logFile, 'a');
  const args = [
    '--kubeconfig',
    bed.kubernetes!.kubeconfig,
    '--namespaces',
    namespaces.join(','),
    '--leader-elect',
    'false',
  ];
  args.push(
    '--metrics-port',
    String(metricsPort),
    '--concurrency',
    String(concurrency),
    '--log-level',
    'warn',
  );
  // e.g. ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] (the profile is written at the SIGTERM exit).
  const child = spawn(process.execPath, [...nodeArgs, main, ...args], {
    stdio: ['ignore', out, out],
    env: { ...process.env, ...env },
  });
  fs.closeSync(out);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    child,
    metricsPort,
    logFile,
    stop: async () => {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The operator's /metrics text ('' while it does not answer). */
export async function scrape(op: OperatorProcess): Promise<string> {
  try {
    const res = await fetch(`http://127.0.0.1:${op.metricsPort}/metrics`, {
      signal: AbortSignal.timeout(5000),
    });
    return await res.text();
  } catch {
    return '';
  }
}

/** Sum of a metric's samples in Prometheus text, and how many series it has. */
export function metric(text: string, name: string): { sum: number; series: number } {
  let sum = 0;
  let series = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name} `) && !line.startsWith(`${name}{`)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    series++;
  }
  return { sum, series };
}

/** Resident memory of a process in MiB, from /proc. */
export function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 102.4) / 10 : 0;
}

/** CPU seconds (user + system) a process has used, from /proc (clock ticks of 1/100 s). */
export function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Total lag of `group` on `topic`, read from Kafka (uncommitted partitions count from the log start). */
export async function groupLag(admin: Admin, topic: string, group: string): Promise<number> {
  const [ends, committed] = await Promise.all([
    admin.fetchTopicOffsets(topic),
    admin.fetchOffsets({ groupId: group, topics: [topic] }),
  ]);
  const byPartition = new Map(committed[0]?.partitions.map((p) => [p.partition, Number(p.offset)]) ?? []);
  let lag = 0;
  for (const e of ends) {
    const c = byPartition.get(e.partition) ?? -1;
    lag += Number(e.high) - (c >= 0 ? c : Number(e.low));
  }
  return lag;
}

/** A pipeline spec on the bed: `partitions` partitions, no dead-letter topic/table, optional autoscaling. */
export function benchSpec(
  bed: TestBed,
  namespace: string,
  name: string,
  database: string,
  workers: LogPipelineSpec['workers'],
  partitions = 3,
): LogPipelineSpec {
  return {
    kafka: { bootstrapServers: [bed.kafka!.bootstrap], topic: { name: `${namespace}.${name}`, partitions } },
    clickhouse: {
      url: bed.clickhouse!.url,
      credentialsSecretRef: { name: 'ch' },
      database,
      table: name.replace(/-/g, '_'),
    },
    workers: { batch: { maxDelay: '300ms' }, ...workers },
    deadLetter: { enabled: false },
  };
}

/** Polls `probe` every `everyMs` until truthy; throws after `timeoutMs`. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs: number,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** CPU seconds of every live process in process group `pgid` (a bed service and its supervisor). */
export function groupCpuSeconds(pgid: number): number {
  let total = 0;
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(f[2]) === pgid) total += (Number(f[11]) + Number(f[12])) / 100;
    } catch {
      // gone
    }
  }
  return total;
}

/** Samples of a labelled counter family in Prometheus text: "label values" -> value. */
export function metricSeries(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const labels = line.slice(name.length + 1, line.lastIndexOf('}'));
    const key = [...labels.matchAll(/="([^"]*)"/g)].map((m) => m[1]).join(' ');
    out.set(key, Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

/** after - before of two metricSeries maps, zero entries dropped, sorted by count. */
export function seriesDelta(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Array<[string, number]> = [];
  for (const [k, v] of after) {
    const d = v - (before.get(k) ?? 0);
    if (d) out.push([k, d]);
  }
  return Object.fromEntries(out.sort((a, b) => b[1] - a[1]));
}
