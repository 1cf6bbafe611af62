/**
 * How the operator image runs Node (Dockerfile `operator` stage), single-sourced: the Dockerfile
 * test checks the image against it and the fleet benchmark starts the operator the same way, so
 * the README's memory numbers are the image's. Measured at 300 idle pipelines (bench/autoscale.ts
 * --parts scale, docs/operations.md "Operator memory"): V8's default young generation (up to
 * 3 x 16 MiB semi-spaces) and its heap growth after a creation storm kept heapTotal at 207 MiB for
 * 64 MiB of live objects (RSS 364 MiB); with 2 MiB semi-spaces and two malloc arenas heapTotal
 * stays near 70 MiB (RSS 214-245 MiB) for about a fifth more CPU while creating and the same
 * steady CPU.
 */

/**
 * Node/V8 flags of the operator process, before the entry script. `--heap-growing-percent=50`
 * (issue 18, fourth round): after a full GC the old generation may grow by half its live size
 * before the next one, instead of V8's dynamic factor (up to 4x for a small, fast-collected heap),
 * which let a creation storm leave the heap, and RSS, far above the live objects. Measured at 300
 * idle pipelines, alternating with the same build without it (docs/operations.md "Operator memory").
 */
export const OPERATOR_NODE_ARGS: readonly string[] = ['--max-semi-space-size=2', '--heap-growing-percent=50'];

/** Environment of the operator image: glibc malloc arenas (one per thread by default) fragment. */
export const OPERATOR_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };
