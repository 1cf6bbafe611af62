/**
 * Process plumbing shared by every test-bed service: spawn under a supervisor with logs to a
 * file, stop by process group, wait for health with the log tail in the error, free ports.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/** A service as it can be (re)started from any process: plain data, stored in the state file. */
export interface ServiceProcess {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  logFile: string;
  /** Pid of the supervisor, which is also the process group id. */
  pid: number;
}

const SUPERVISOR = path.resolve(__dirname, '../../../test/env/supervise.js');
const SUPERVISOR_SRC = path.resolve(__dirname, 'supervise.js');

function supervisorPath(): string {
  return fs.existsSync(SUPERVISOR_SRC) ? SUPERVISOR_SRC : SUPERVISOR;
}

/** Starts `svc` detached in its own process group; it dies with `ownerPid` unless ownerPid is 0. */
export function startProcess(svc: Omit<ServiceProcess, 'pid'>, ownerPid: number): ServiceProcess {
  fs.mkdirSync(path.dirname(svc.logFile), { recursive: true });
  fs.appendFileSync(
    svc.logFile,
    `--- start ${new Date().toISOString()} ${svc.command} ${svc.args.join(' ')}\n`,
  );
  const child = spawn(
    process.execPath,
    [supervisorPath(), String(ownerPid), svc.logFile, '--', svc.command, ...svc.args],
    { detached: true, stdio: 'ignore', env: { ...process.env, ...svc.env } },
  );
  child.unref();
  if (!child.pid) throw new Error(`${svc.name}: could not spawn ${svc.command}`);
  return { ...svc, pid: child.pid };
}

/** True when a process with this pid exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Signals the whole process group of `svc` and waits until it is gone (SIGKILL after the grace). */
export async function stopProcess(svc: ServiceProcess, signal: NodeJS.Signals = 'SIGTERM', graceMs = 15_000) {
  const group = -svc.pid;
  try {
    process.kill(group, signal);
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!groupAlive(svc.pid)) return;
    await delay(100);
  }
  try {
    process.kill(group, 'SIGKILL');
  } catch {
    /* already gone */
  }
  while (groupAlive(svc.pid)) await delay(50);
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Last `lines` lines of a log file, or a note that it is missing. */
export function tailLog(file: string, lines = 40): string {
  if (!fs.existsSync(file)) return `(no log at ${file})`;
  const text = fs.readFileSync(file, 'utf8');
  return text.split('\n').slice(-lines).join('\n');
}

/** Polls `check` until it returns true; on timeout throws with `what` and the service log tail. */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  opts: { timeoutMs: number; logFile?: string; pid?: number; intervalMs?: number },
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastError = '';
  while (Date.now() < deadline) {
    if (opts.pid !== undefined && !isAlive(opts.pid)) {
      throw new Error(`${what}: process exited\n${opts.logFile ? tailLog(opts.logFile) : ''}`);
    }
    try {
      if (await check()) return;
    } catch (err) {
      lastError = (err as Error).message;
    }
    await delay(opts.intervalMs ?? 250);
  }
  const tail = opts.logFile ? `\n--- ${opts.logFile} (tail) ---\n${tailLog(opts.logFile)}` : '';
  throw new Error(
    `${what}: not ready after ${opts.timeoutMs} ms${lastError ? ` (last error: ${lastError})` : ''}${tail}`,
  );
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Resolves after `ms` milliseconds (harness only; never used by reconcilers). */
export function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Throws a clear message when a required tool is not on PATH. */
export function requireTool(tool: string, why: string): void {
  const dirs = (process.env.PATH ?? '').split(path.delimiter);
  if (!dirs.some((d) => fs.existsSync(path.join(d, tool)))) {
    throw new Error(`test bed: '${tool}' is not installed (${why}); run scripts/setup.sh`);
  }
}

/** Root of caches shared across runs (binaries, jars), outside the repo tree. */
export function cacheDir(): string {
  return process.env.LOGPIPELINE_CACHE ?? path.join(process.env.HOME ?? '/tmp', '.cache', 'logpipeline');
}
