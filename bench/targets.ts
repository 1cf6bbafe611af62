/**
 * Issue 15's targets read from the benchmarks' JSON: each target with its goal, the measured value,
 * where in the JSON it comes from, and met / not met (null when the run did not measure it, e.g.
 * `--peer false` or `--only e2e`). Pure: `npm run bench` (bench/run.ts) puts the whole block at the
 * top of its document, `bench/e2e.ts` the e2e part in its own.
 */

/** One target of the issue. */
export interface Target {
  name: string;
  /** The goal in words, e.g. `>= 250000`. */
  goal: string;
  value: number | null;
  unit: string;
  /** null: not measured in this run. */
  met: boolean | null;
  /** JSON path of the value (relative to the benchmark's own document). */
  source: string;
}

/** The targets block: every target and how many were met. */
export interface TargetsBlock {
  met: number;
  notMet: number;
  notMeasured: number;
  targets: Target[];
}

type Json = Record<string, unknown> | undefined;

function at(doc: unknown, path: string): unknown {
  let v: unknown = doc;
  for (const k of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

function num(doc: unknown, path: string): number | null {
  const v = at(doc, path);
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function atLeast(name: string, goal: number, unit: string, value: number | null, source: string): Target {
  return { name, goal: `>= ${goal}`, value, unit, met: value === null ? null : value >= goal, source };
}

function atMost(name: string, goal: number, unit: string, value: number | null, source: string): Target {
  return { name, goal: `<= ${goal}`, value, unit, met: value === null ? null : value <= goal, source };
}

/**
 * Throughput and peer ratio of one traffic mode (steady state: CPU from the group's first
 * assignment to the last row stored, the same window for the peer; the ratio is the median of the
 * rounds' own ratios, bench/e2e.ts versusPeer).
 */
function throughput(e2e: Json, mode: 'packed100' | 'single', lines: number, ratio: number): Target[] {
  const base = `${mode}.worker.RowBinary`;
  const label = mode === 'packed100' ? 'packed (100 lines/message)' : 'single-line';
  return [
    atLeast(
      `${label}: lines per worker CPU-second`,
      lines,
      'lines/CPU-s',
      num(e2e, `${base}.median.steadyLinesPerCpuSecond`),
      `${base}.median.steadyLinesPerCpuSecond`,
    ),
    atLeast(
      `${label}: ratio to the Kafka-engine peer`,
      ratio,
      'x',
      num(e2e, `${base}.vsPeer.steadyLinesPerCpuSecond`),
      `${base}.vsPeer.steadyLinesPerCpuSecond`,
    ),
  ];
}

/** Worker + ClickHouse CPU per million lines, RowBinary against TSV in the same run (-0.30 = 30 % below). */
function cpuSaving(e2e: Json, mode: 'packed100' | 'single'): Target {
  const source = `${mode}.formatComparison.totalCpuPerMillionLines_RowBinary_vs_TabSeparated`;
  return atMost(
    `${mode === 'packed100' ? 'packed' : 'single-line'}: worker + ClickHouse CPU per million lines, RowBinary vs TSV`,
    -0.3,
    'relative change',
    num(e2e, source),
    source,
  );
}

/** Largest worker peak RSS over every run of the e2e document (packed, single-line, integrity on/off). */
function peakRss(e2e: Json): Target {
  const sources: string[] = [];
  let max: number | null = null;
  const visit = (v: unknown, path: string): void => {
    if (v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) return v.forEach((x, i) => visit(x, `${path}[${i}]`));
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (k === 'peakRssMiB' && typeof x === 'number' && path.includes('.runs')) {
        if (max === null || x > max) max = x;
        sources.push(path);
      } else if (k !== 'peerKafkaEngine') visit(x, path ? `${path}.${k}` : k);
    }
  };
  for (const mode of ['packed100', 'single', 'packed100Integrity']) visit(e2e?.[mode], mode);
  return atMost(
    'worker peak RSS, 16 MiB batches (what binds at the example settings too), integrity on and off (largest of every run)',
    512,
    'MiB',
    max,
    sources.length > 0 ? '*.runs[*].peakRssMiB' : 'none',
  );
}

/** The targets measured by the e2e benchmark. */
export function e2eTargets(e2e: Json): Target[] {
  return [
    ...throughput(e2e, 'packed100', 250_000, 2.5),
    ...throughput(e2e, 'single', 120_000, 1.5),
    cpuSaving(e2e, 'packed100'),
    cpuSaving(e2e, 'single'),
    peakRss(e2e),
  ];
}

/** Parse+encode targets (FortiGate and Palo Alto 600k, JSON 300k lines per CPU-second). */
export function parseTargets(results: Record<string, unknown>): Target[] {
  const one = (bench: string, format: string, goal: number): Target =>
    atLeast(
      `parse+encode ${format}`,
      goal,
      'lines/CPU-s',
      num(results[bench], 'linesPerCpuSecond'),
      `${bench}.linesPerCpuSecond`,
    );
  return [
    one('parse', 'fortigate', 600_000),
    one('parse-paloalto', 'paloalto', 600_000),
    one('parse-json', 'json', 300_000),
  ];
}

/** Counts a target list into a block. */
export function targetsBlock(targets: Target[]): TargetsBlock {
  return {
    met: targets.filter((t) => t.met === true).length,
    notMet: targets.filter((t) => t.met === false).length,
    notMeasured: targets.filter((t) => t.met === null).length,
    targets,
  };
}

/** Every issue-15 target from `npm run bench`'s results (keyed by benchmark name); e2e sources are under `e2e.`. */
export function issue15Targets(results: Record<string, unknown>): TargetsBlock {
  const e2e = e2eTargets(results.e2e as Json).map((t) => ({
    ...t,
    source: t.source === 'none' ? t.source : `e2e.${t.source}`,
  }));
  return targetsBlock([...e2e, ...parseTargets(results)]);
}
