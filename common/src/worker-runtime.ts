/**
 * How the worker process runs Node, single-sourced: the worker image's entrypoint carries these
 * flags (Dockerfile `worker` stage, checked by scripts/dockerfile.test.ts), and the integration
 * tests' worker processes and the e2e benchmark start the worker with them (test/worker-support.ts,
 * test/env/pod-process.ts), so the README's throughput numbers are the product's.
 *
 * Why (issue 15, docs/operations.md "Worker runtime settings"): a worker's JavaScript heap holds
 * only ~13 MiB of live objects, so V8 starts with a small old-generation limit, and every few MiB of
 * promoted objects started a full mark-compact: 16 full GCs in a 300k-line packed run, each marking
 * the whole heap (main thread plus concurrent marking threads). With a 128 MiB initial old
 * generation the limit-driven ones are gone (6–7 left, started by the ArrayBuffers of fetches and
 * decompression, V8's external-memory trigger).
 *
 * `--max-inlined-bytecode-size-cumulative=3000` (issue 15, tenth round, docs/architecture.md
 * "Parse+encode and V8's inlining budget"): TurboFan inlines callees into a hot function only up to
 * 920 bytecodes in all by default, and FortiGate's pair loop spends that on the key layout and the
 * quote scan, so the address, port and span stores stayed calls; with a larger budget the warm
 * parse+encode runs 5–10 % faster (FortiGate, Palo Alto, JSON), for a little more JIT work once per
 * process.
 *
 * On the command line, not in NODE_OPTIONS: Node refuses both flags there ("is not allowed in
 * NODE_OPTIONS"). A pipeline's own NODE_OPTIONS (spec.workers.env) still applies on top.
 */

/** Node/V8 flags of every worker process, before the entry script. */
export const WORKER_NODE_ARGS: readonly string[] = [
  '--initial-old-space-size=128',
  '--max-inlined-bytecode-size-cumulative=3000',
];
