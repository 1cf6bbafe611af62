/**
 * Worker and receiver processes of the integration tests: spawned from the compiled entry points
 * (as the image runs them), probed over HTTP, stopped as Kubernetes stops a pod.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { WorkerConfig } from '../common/src/worker-config';
import { SECRET_ENV } from '../common/src/worker-config';
import { WORKER_NODE_ARGS } from '../common/src/worker-runtime';
import type { TestBed } from './env/testbed';

/** A worker process started from the compiled entry point. */
export interface WorkerProcess {
  child: ChildProcess;
  logFile: string;
  port: number;
  exited: Promise<number | null>;
}

/** Spawns `node dist/consumer/src/main.js --config <file>` with the bed's credentials in SECRET_ENV. */
export function spawnWorker(
  bed: TestBed,
  cfg: WorkerConfig,
  port: number,
  tag: string,
  nodeArgs: readonly string[] = [],
): WorkerProcess {
  // Inside the bed's directory, which its teardown removes (in /tmp they piled up by the hundred).
  const dir = fs.mkdtempSync(path.join(bed.dir, 'worker-'));
  const configFile = path.join(dir, 'config.json');
  fs.writeFileSync(configFile, JSON.stringify({ ...cfg, httpPort: port }));
  // The image's flags first (common/src/worker-runtime.ts), the caller's after them (they win).
  return spawnCompiled('dist/consumer/src/main.js', configFile, path.join(dir, `${tag}.log`), port, {
    nodeArgs: [...WORKER_NODE_ARGS, ...nodeArgs],
    env: {
      [SECRET_ENV.clickhouseUser]: bed.clickhouse!.username,
      [SECRET_ENV.clickhousePassword]: bed.clickhouse!.password,
      LP_CONFIG: configFile,
    },
  });
}

/**
 * Spawns the compiled entry point `entry` (relative to the repository) with `--config
 * configFile`, its output appended to `logFile`; it exits with this process (LP_EXIT_WITH_PARENT).
 */
export function spawnCompiled(
  entry: string,
  configFile: string,
  logFile: string,
  port: number,
  extra: { nodeArgs?: readonly string[]; env?: NodeJS.ProcessEnv } = {},
): WorkerProcess {
  // From test/ (swc under jest) or dist/test/ (compiled scripts): both resolve to the compiled entry point.
  const root =
    path.basename(path.resolve(__dirname, '..')) === 'dist'
      ? path.resolve(__dirname, '../..')
      : path.resolve(__dirname, '..');
  const main = path.join(root, entry);
  if (!fs.existsSync(main)) throw new Error(`${main} is missing: run 'npm run build' first`);
  const out = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, [...(extra.nodeArgs ?? []), main, '--config', configFile], {
    stdio: ['ignore', out, out],
    env: { ...process.env, ...extra.env, LP_EXIT_WITH_PARENT: String(process.pid) },
  });
  fs.closeSync(out);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, logFile, port, exited };
}

/** Fetches a worker endpoint; resolves with status and body (status 0 when unreachable). */
export async function workerGet(port: number, urlPath: string): Promise<{ status: number; body: string }> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${urlPath}`, { signal: AbortSignal.timeout(3000) });
    return { status: res.status, body: await res.text() };
  } catch {
    return { status: 0, body: '' };
  }
}

/** Sum of a metric's samples in Prometheus text (all label sets). */
export function metricSum(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`))
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** Resident set size of a process in MiB (Linux /proc), or 0 when it is gone. */
export function rssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Sends SIGTERM and waits for exit (SIGKILL after `graceMs`); resolves with the exit code. */
export async function stopWorker(w: WorkerProcess, graceMs = 40_000): Promise<number | null> {
  if (w.child.exitCode !== null || w.child.signalCode !== null) return w.child.exitCode;
  w.child.kill('SIGTERM');
  const timer = setTimeout(() => w.child.kill('SIGKILL'), graceMs);
  const code = await w.exited;
  clearTimeout(timer);
  return code;
}
