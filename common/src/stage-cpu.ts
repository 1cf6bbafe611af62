/**
 * Where the worker's CPU goes, counted in-process (process.cpuUsage around synchronous stages, at
 * batch granularity: a few calls per Kafka fetch or per cut batch, never per line). The CPU
 * profiler shows JavaScript frames but not the kernel time (page faults, socket copies) a stage
 * causes, nor work off the main thread; user and system time are kept apart here so the exit
 * summary (and the e2e bench) can say how much of a stage is kernel time. Stages do not nest: a
 * caller that runs a nested stage subtracts it (see `nested`). GC pause time comes from the
 * runtime's own GC entries.
 */
import { PerformanceObserver } from 'node:perf_hooks';

/** The measured stages. */
export type Stage = 'intake' | 'encode' | 'insertCall' | 'integrity';

const STAGES: readonly Stage[] = ['intake', 'encode', 'insertCall', 'integrity'];

/** Seconds of user and system CPU per stage, plus GC pauses. */
export interface StageCpuSummary {
  stages: Record<Stage, { user: number; system: number }>;
  gcPauseSeconds: number;
  gcCount: number;
}

/** Accumulates CPU per stage for one process. */
export class StageCpu {
  private readonly user = new Float64Array(STAGES.length);
  private readonly system = new Float64Array(STAGES.length);
  private gcMs = 0;
  private gcCount = 0;
  private observer: PerformanceObserver | undefined;

  /** Starts counting GC pauses (idempotent; the observer is unref'd by the runtime). */
  observeGc(): void {
    if (this.observer) return;
    this.observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        this.gcMs += e.duration;
        this.gcCount++;
      }
    });
    this.observer.observe({ entryTypes: ['gc'] });
  }

  /** Adds the CPU used since `started` (a process.cpuUsage() value) to `stage`; returns the now-usage. */
  add(stage: Stage, started: NodeJS.CpuUsage): NodeJS.CpuUsage {
    const now = process.cpuUsage();
    const i = STAGES.indexOf(stage);
    this.user[i] += now.user - started.user;
    this.system[i] += now.system - started.system;
    return now;
  }

  /** Removes `userMicros` / `systemMicros` from `stage` (a nested stage's share counted twice). */
  subtract(stage: Stage, userMicros: number, systemMicros: number): void {
    const i = STAGES.indexOf(stage);
    this.user[i] -= userMicros;
    this.system[i] -= systemMicros;
  }

  /** User/system microseconds of `stage` so far (for nesting: read before and after the nested call). */
  usage(stage: Stage): { user: number; system: number } {
    const i = STAGES.indexOf(stage);
    return { user: this.user[i], system: this.system[i] };
  }

  /** The totals in seconds. */
  summary(): StageCpuSummary {
    const stages = {} as StageCpuSummary['stages'];
    STAGES.forEach((s, i) => {
      stages[s] = { user: round6(this.user[i] / 1e6), system: round6(this.system[i] / 1e6) };
    });
    return { stages, gcPauseSeconds: round6(this.gcMs / 1e3), gcCount: this.gcCount };
  }
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

/** The process's counters (one per worker process). */
export const stageCpu = new StageCpu();

/**
 * Counts the synchronous segments of one eachBatch call as `intake`, without the encodes launched
 * inside them (counted as `encode`); resume() after every await, pause() before it and at the end.
 */
export class IntakeClock {
  private from = process.cpuUsage();
  private encodeFrom = stageCpu.usage('encode');

  /** Ends a segment: its CPU minus the encode CPU counted meanwhile goes to `intake`. */
  pause(): void {
    stageCpu.add('intake', this.from);
    const enc = stageCpu.usage('encode');
    stageCpu.subtract('intake', enc.user - this.encodeFrom.user, enc.system - this.encodeFrom.system);
  }

  /** Starts the next segment. */
  resume(): void {
    this.from = process.cpuUsage();
    this.encodeFrom = stageCpu.usage('encode');
  }
}
