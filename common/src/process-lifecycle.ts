/**
 * What every entry point of the worker image does around its work (the worker and the syslog
 * receiver): take `--config`, follow a local supervisor's lifetime, report peak memory at exit.
 */
import fs from 'node:fs';

/** Applies `--config <path>` to the environment loadWorkerConfig reads. */
export function applyArgs(argv: readonly string[], env: NodeJS.ProcessEnv): void {
  const i = argv.indexOf('--config');
  if (i >= 0 && argv[i + 1]) env.LP_CONFIG = argv[i + 1];
}

/** Peak resident set size from /proc (VmHWM), in MiB; undefined off Linux. */
export function peakRssMiB(): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * LP_EXIT_WITH_PARENT=<pid>: drain and exit once that process is gone (this one is re-parented).
 * A local supervisor (the test pod runner, the demo) sets it so no worker outlives it, even when it
 * is killed without a chance to stop its children. In a pod, PID 1 never goes away: unset there.
 */
export function watchParent(env: NodeJS.ProcessEnv, onGone: () => void, intervalMs = 1_000): void {
  const parent = Number(env.LP_EXIT_WITH_PARENT);
  if (!Number.isInteger(parent) || parent <= 0) return;
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer);
      onGone();
    }
  }, intervalMs);
  timer.unref();
}
