/**
 * Benches that time the worker's own code (parse+encode) run it under the worker's Node flags
 * (common/src/worker-runtime.ts), as the e2e bench starts the worker with them: a bench started
 * without them starts itself again with them, so `node dist/bench/parse.js` and `npm run bench`
 * measure what the worker image runs. `LP_BENCH_PLAIN_NODE=1` keeps the plain flags (A/B of a
 * runtime setting).
 */
import { spawnSync } from 'node:child_process';
import { WORKER_NODE_ARGS } from '../common/src/worker-runtime';

/** The worker's Node flags missing from `execArgv` (none when plain Node is asked for). */
export function missingWorkerFlags(
  execArgv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  if (env.LP_BENCH_PLAIN_NODE === '1') return [];
  return WORKER_NODE_ARGS.filter((a) => !execArgv.includes(a));
}

/**
 * Runs `script` again in a child process with the worker's Node flags when this process lacks
 * any of them; returns true when it did (the child's exit status is this process's).
 */
export function rerunWithWorkerFlags(script: string): boolean {
  const missing = missingWorkerFlags(process.execArgv);
  if (missing.length === 0) return false;
  const child = spawnSync(
    process.execPath,
    [...process.execArgv, ...missing, script, ...process.argv.slice(2)],
    { stdio: 'inherit' },
  );
  process.exitCode = child.status ?? 1;
  return true;
}
