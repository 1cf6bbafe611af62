/**
 * How the worker process runs Node, single-sourced: the operator puts it into every worker
 * Deployment's env, the worker image carries it (Dockerfile `worker` stage, checked by
 * scripts/dockerfile.test.ts), and the integration tests and the e2e benchmark start the worker
 * with it (test/worker-support.ts), so the README's throughput numbers are the product's.
 *
 * Why (issue 15, docs/operations.md "Worker runtime settings"): a worker's JavaScript heap holds
 * only ~13 MiB of live objects, so V8 starts with a small old-generation limit, and every few MiB of
 * promoted objects started a full mark-compact: 16 full GCs in a 300k-line packed run, each marking
 * the whole heap (main thread plus concurrent marking threads). With a 128 MiB initial old
 * generation the limit-driven ones are gone (6–7 left, started by the ArrayBuffers of fetches and
 * decompression, V8's external-memory trigger), for no change in peak RSS: the live heap stays
 * ~13–25 MiB, and the external-memory trigger keeps collecting long before the limit.
 */

/** Name of the environment variable Node reads its options from. */
export const NODE_OPTIONS_ENV = 'NODE_OPTIONS';

/** Node/V8 options of every worker process (NODE_OPTIONS; space-separated, no quoting needed). */
export const WORKER_NODE_OPTIONS = '--initial-old-space-size=128';

/**
 * The worker's NODE_OPTIONS given a user's own literal value (spec.workers.env): ours first, the
 * user's after them, so a flag the user repeats wins (Node applies the last of a repeated option).
 */
export function workerNodeOptions(user?: string): string {
  const own = user?.trim();
  return own ? `${WORKER_NODE_OPTIONS} ${own}` : WORKER_NODE_OPTIONS;
}
