/**
 * What the e2e benchmark reads about processes: CPU time and page faults from /proc, the bed's
 * ClickHouse server process, and the worker's exit summary line (bench/e2e.ts).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { TestBed } from '../test/env/testbed';
import type { StageCpuSummary } from '../common/src/stage-cpu';

let clockTicks = 0;

/** CPU seconds (user, system) and minor page faults a process has used so far, from /proc; zeros when it is gone. */
export function procUsage(pid: number): { user: number; system: number; minorFaults: number } {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    clockTicks ||= Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
    const ticks = clockTicks;
    return {
      user: Number(fields[11]) / ticks,
      system: Number(fields[12]) / ticks,
      minorFaults: Number(fields[7]),
    };
  } catch {
    return { user: 0, system: 0, minorFaults: 0 };
  }
}

/**
 * CPU seconds (user + system) of a process's threads so far, by kind: Node's main thread, V8's
 * worker threads (parallel/concurrent GC and JIT compilation: what `--cpu-prof` never shows), and
 * the rest (libuv's threadpool, native addons' threads). Zeros when the process is gone.
 */
export function procThreadCpu(pid: number): { main: number; v8Workers: number; other: number } {
  const out = { main: 0, v8Workers: 0, other: 0 };
  let tasks: string[];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    clockTicks ||= Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
    const cpu = (Number(fields[11]) + Number(fields[12])) / clockTicks;
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    if (tid === String(pid)) out.main += cpu;
    else if (name.startsWith('node-V8Worker')) out.v8Workers += cpu;
    else out.other += cpu;
  }
  return out;
}

/** CPU seconds (user + system) a process has used so far, from /proc; 0 when it is gone. */
export function procCpuSeconds(pid: number): number {
  const u = procUsage(pid);
  return u.user + u.system;
}

/** The ClickHouse server process of the bed (the supervisor's child). */
export function serverPid(bed: TestBed): number {
  const sup = bed.clickhouse?.process?.pid;
  if (!sup) return 0;
  try {
    return Number(fs.readFileSync(`/proc/${sup}/task/${sup}/children`, 'utf8').trim().split(' ')[0]) || 0;
  } catch {
    return 0;
  }
}

/** The worker's exit summary line (CPU seconds and counters). */
export function exitSummary(logFile: string): {
  cpu: number;
  lines: number;
  peakRssMiB: number;
  cpuAtJoin: number;
  stageCpu?: StageCpuSummary;
  system: number;
} {
  const line = fs
    .readFileSync(logFile, 'utf8')
    .split('\n')
    .find((l) => l.includes('"worker stopped"'));
  if (!line) throw new Error(`worker did not log its exit summary (${logFile})`);
  const j = JSON.parse(line) as {
    cpuUserSeconds: number;
    cpuSystemSeconds: number;
    lines: number;
    peakRssMiB: number;
    cpuAtFirstJoinSeconds?: number;
    stageCpu?: StageCpuSummary;
  };
  return {
    stageCpu: j.stageCpu,
    system: j.cpuSystemSeconds,
    cpu: j.cpuUserSeconds + j.cpuSystemSeconds,
    lines: j.lines,
    peakRssMiB: j.peakRssMiB,
    cpuAtJoin: j.cpuAtFirstJoinSeconds ?? 0,
  };
}
