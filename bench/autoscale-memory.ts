/**
 * Memory of the operator process in the scale benchmark: RSS beside the V8 heap's parts (from the
 * operator's default metrics), and an optional heap snapshot taken with `--heapsnapshot-signal`
 * and summarised by constructor (self size), so a fleet-size regression says what it is made of.
 */
import fs from 'node:fs';
import path from 'node:path';
import { metric, metricSeries, rssMiB, type OperatorProcess } from './autoscale-support';

/** Where the operator's memory is (MiB). */
export interface MemoryBreakdown {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  /** Used bytes per V8 space (new_space, old_space, code_space, large_object_space, …). */
  spaces: Record<string, number>;
  /** Resident memory by kind of mapping (/proc/PID/smaps), so RSS beyond the heap is named. */
  resident: ResidentBreakdown;
}

/** Resident MiB by kind of mapping. */
export interface ResidentBreakdown {
  /** The node binary's file pages. */
  nodeBinary: number;
  /** Other file-backed pages (shared libraries, native addons). */
  otherFiles: number;
  /** The brk heap (glibc's main malloc arena). */
  brkHeap: number;
  /** Anonymous mappings: V8 heap pages, malloc's mmapped chunks and other arenas, stacks. */
  anonymous: number;
  /** Anonymous mappings starting on a 64 MiB boundary (glibc's per-thread malloc arenas). */
  mallocArenas: number;
}

/** Sums resident kB of /proc/PID/smaps by kind of mapping (MiB). */
export function residentBreakdown(pid: number): ResidentBreakdown {
  const out: ResidentBreakdown = { nodeBinary: 0, otherFiles: 0, brkHeap: 0, anonymous: 0, mallocArenas: 0 };
  let text = '';
  try {
    text = fs.readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return out;
  }
  let kind: keyof ResidentBreakdown = 'anonymous';
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) {
      const file = head[3];
      const start = parseInt(head[1], 16);
      const size = parseInt(head[2], 16) - start;
      kind =
        file === '[heap]'
          ? 'brkHeap'
          : file.endsWith('/node')
            ? 'nodeBinary'
            : file.startsWith('/')
              ? 'otherFiles'
              : start % (64 * 1048576) === 0 && size <= 64 * 1048576
                ? 'mallocArenas'
                : 'anonymous';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) out[kind] += Number(rss[1]) / 1024;
  }
  for (const k of Object.keys(out) as Array<keyof ResidentBreakdown>) out[k] = Math.round(out[k] * 10) / 10;
  return out;
}

const mib = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;

/** RSS and heap figures of the operator, read from /proc and its /metrics text. */
export function memoryBreakdown(pid: number, metricsText: string): MemoryBreakdown {
  const spaces: Record<string, number> = {};
  for (const [space, bytes] of metricSeries(
    metricsText,
    'logpipeline_operator_nodejs_heap_space_size_used_bytes',
  ))
    spaces[space] = mib(bytes);
  return {
    rss: rssMiB(pid),
    heapUsed: mib(metric(metricsText, 'logpipeline_operator_nodejs_heap_size_used_bytes').sum),
    heapTotal: mib(metric(metricsText, 'logpipeline_operator_nodejs_heap_size_total_bytes').sum),
    external: mib(metric(metricsText, 'logpipeline_operator_nodejs_external_memory_bytes').sum),
    spaces,
    resident: residentBreakdown(pid),
  };
}

/** Node flags that make the operator write a heap snapshot into `dir` on SIGUSR2. */
export function heapSnapshotArgs(dir: string): string[] {
  return ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${path.resolve(dir)}`];
}

/** Signals the operator to write a heap snapshot into `dir` and waits until the file is complete. */
export async function takeHeapSnapshot(
  op: OperatorProcess,
  dir: string,
  timeoutMs = 600_000,
): Promise<string> {
  const before = new Set(fs.readdirSync(dir));
  op.child.kill('SIGUSR2');
  let last = -1;
  for (const end = Date.now() + timeoutMs; Date.now() < end;) {
    await new Promise((r) => setTimeout(r, 2_000));
    const file = fs.readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    if (!file) continue;
    const full = path.join(dir, file);
    const size = fs.statSync(full).size;
    // The snapshot ends with the strings table's closing brackets once it is written whole.
    if (size === last && size > 0 && fs.readFileSync(full, 'utf8').trimEnd().endsWith('}')) return full;
    last = size;
  }
  throw new Error(`no heap snapshot in ${dir} after ${timeoutMs} ms`);
}

/** One row of the summary: all heap objects of a type and name (constructor, closure name, …). */
export interface HeapRow {
  what: string;
  count: number;
  selfMiB: number;
}

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

/** Self size by (type, constructor) of a .heapsnapshot file, largest first. */
export function summariseHeapSnapshot(file: string, top = 40): { totalMiB: number; rows: HeapRow[] } {
  const snap = JSON.parse(fs.readFileSync(file, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const [fType, fName, fSize] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
  const byWhat = new Map<string, { count: number; bytes: number }>();
  let total = 0;
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + fType]];
    const size = snap.nodes[i + fSize];
    total += size;
    // Strings and numbers are grouped by type only (their "name" is the value).
    const what = ['object', 'closure', 'native', 'hidden', 'array'].includes(type)
      ? `${type}:${snap.strings[snap.nodes[i + fName]].slice(0, 60)}`
      : type;
    const row = byWhat.get(what) ?? { count: 0, bytes: 0 };
    row.count++;
    row.bytes += size;
    byWhat.set(what, row);
  }
  const rows = [...byWhat.entries()]
    .sort((a, b) => b[1].bytes - a[1].bytes)
    .slice(0, top)
    .map(([what, r]) => ({ what, count: r.count, selfMiB: mib(r.bytes) }));
  return { totalMiB: mib(total), rows };
}

if (require.main === module) {
  const file = process.argv[2];
  process.stdout.write(
    `${JSON.stringify(summariseHeapSnapshot(file, Number(process.argv[3] ?? 60)), null, 1)}\n`,
  );
}
