/**
 * Parse + encode benchmark: `npm run bench:parse -- --format <fmt|auto|all> [--input <file>]`.
 * `--format all` runs every native format on its own generated traffic in one process and prints
 * one row per format (the README's per-format table).
 * Feeds a file of lines (or generated sample traffic) through the worker's hot path — the
 * BatchEncoder with the reference column plan — and prints JSON with the median lines per
 * CPU-second (process.cpuUsage) over several passes, plus a parse-only figure. It runs under the
 * worker's Node flags (bench/worker-flags.ts; `nodeArgs` in the JSON).
 */
import fs from 'node:fs';
import os from 'node:os';
import { BatchEncoder, MessageInput } from '../consumer/src/encode/batch';
import { REFERENCE_COLUMNS } from '../consumer/src/encode/reference-columns';
import { LINE_NO_SPECIALS, LINE_UTF8_VALID, LineParser } from '../consumer/src/parse/parser';
import { FORMAT_NAMES, FormatName } from '../consumer/src/parse/record';
import { generateSampleLines } from '../test/fixtures/samples';
import { rerunWithWorkerFlags } from './worker-flags';

/** Benchmark settings (all have CLI flags of the same name in kebab-case). */
export interface ParseBenchOptions {
  format: string;
  input?: string;
  /** Generated traffic when no input: a format name or `mix`. Default: the format (mix for auto). */
  sample?: string;
  lines: number;
  passes: number;
  batch: number;
  linesPerMessage: number;
  malformed: number;
  timezone: string;
  /** Extra parser settings (declarative formats). */
  parserExtra?: Record<string, unknown>;
  /** Body format the encoder writes (default RowBinary, what the worker sends). */
  insertFormat?: 'RowBinary' | 'TabSeparated';
}

/** FortiGate's key=value layout written as a declarative `kv` format (the speed comparison). */
export const FORTIGATE_AS_KV = {
  kv: {
    fields: {
      timestamp: ['eventtime'],
      device: ['devname'],
      src_ip: ['srcip'],
      dst_ip: ['dstip'],
      src_port: ['srcport'],
      dst_port: ['dstport'],
      nat_src_ip: ['transip'],
      nat_src_port: ['transport'],
      proto: ['proto'],
      action: ['action'],
      bytes: ['sentbyte', 'rcvdbyte'],
      rule: ['policyid'],
      severity: ['level'],
      message: ['msg'],
    },
  },
};

/** Benchmark result printed as JSON. */
export interface ParseBenchResult {
  format: string;
  insertFormat: string;
  input: string;
  lines: number;
  parsed: number;
  deadLettered: number;
  deadLetterReasons: Record<string, number>;
  bytesIn: number;
  bytesOut: number;
  passes: number;
  cpuSeconds: number;
  linesPerCpuSecond: number;
  minLinesPerCpuSecond: number;
  maxLinesPerCpuSecond: number;
  mbInPerCpuSecond: number;
  parseOnlyLinesPerCpuSecond: number;
  /** Node version and load average at the end of the run (the numbers are per CPU-second, but load still moves them). */
  node: string;
  /** Node flags the bench ran with (the worker's: bench/worker-flags.ts). */
  nodeArgs: string[];
  loadavg: number[];
}

function readLines(file: string): Buffer[] {
  const data = fs.readFileSync(file);
  const lines: Buffer[] = [];
  let pos = 0;
  while (pos < data.length) {
    let nl = data.indexOf(10, pos);
    if (nl < 0) nl = data.length;
    lines.push(data.subarray(pos, nl));
    pos = nl + 1;
  }
  return lines;
}

/** Groups lines into Kafka-like messages of `perMessage` newline-joined lines. */
function toMessages(lines: Buffer[], perMessage: number): MessageInput[] {
  const messages: MessageInput[] = [];
  for (let i = 0; i < lines.length; i += perMessage) {
    const group = lines.slice(i, i + perMessage);
    const value =
      perMessage === 1
        ? Buffer.from(group[0])
        : Buffer.from(Buffer.concat(group.flatMap((l) => [l, Buffer.of(10)])));
    messages.push({ value, topic: 'bench', partition: 0, offset: i });
  }
  return messages;
}

function cpuSeconds(since: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1e6;
}

function median(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

/** Runs the benchmark and returns its result. */
export function runParseBench(o: ParseBenchOptions): ParseBenchResult {
  const sample = o.sample ?? (o.format === 'auto' ? 'mix' : o.format);
  const lines = o.input
    ? readLines(o.input)
    : generateSampleLines(sample as FormatName | 'mix', o.lines, { seed: 42, malformedRatio: o.malformed });
  const messages = toMessages(lines, o.linesPerMessage);
  const encoder = new BatchEncoder({
    parser: { format: o.format, timezone: o.timezone, ...o.parserExtra },
    columns: REFERENCE_COLUMNS,
    format: o.insertFormat ?? 'RowBinary',
  });
  const ingestMs = Date.UTC(2024, 0, 15, 12, 0, 0);
  const rates: number[] = [];
  const seconds: number[] = [];
  let parsed = 0;
  let bytesOut = 0;
  let reasons: Record<string, number> = {};
  for (let pass = 0; pass < o.passes; pass++) {
    parsed = 0;
    bytesOut = 0;
    reasons = {};
    const t0 = process.cpuUsage();
    for (let from = 0; from < messages.length; from += o.batch) {
      const res = encoder.encode(messages, ingestMs, from, Math.min(messages.length, from + o.batch));
      parsed += res.rows;
      bytesOut += res.data.length;
      for (const d of res.deadLetters) reasons[d.reason] = (reasons[d.reason] ?? 0) + 1;
    }
    const sec = cpuSeconds(t0);
    seconds.push(sec);
    rates.push(lines.length / sec);
  }
  const bytesIn = lines.reduce((n, l) => n + l.length, 0);
  return {
    format: o.format,
    insertFormat: o.insertFormat ?? 'RowBinary',
    input: o.input ?? `generated:${sample}`,
    lines: lines.length,
    parsed,
    deadLettered: lines.length - parsed,
    deadLetterReasons: reasons,
    bytesIn,
    bytesOut,
    passes: o.passes,
    cpuSeconds: round(median(seconds), 4),
    linesPerCpuSecond: Math.round(median(rates)),
    minLinesPerCpuSecond: Math.round(Math.min(...rates)),
    maxLinesPerCpuSecond: Math.round(Math.max(...rates)),
    mbInPerCpuSecond: round(bytesIn / median(seconds) / 1e6, 1),
    parseOnlyLinesPerCpuSecond: Math.round(parseOnlyRate(o, lines)),
    node: process.version,
    nodeArgs: process.execArgv,
    loadavg: os.loadavg().map((l) => round(l, 2)),
  };
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** Median lines/CPU-second of the parser alone (lines pre-validated, as the batch framer does). */
function parseOnlyRate(o: ParseBenchOptions, lines: Buffer[]): number {
  const parser = new LineParser({ format: o.format, timezone: o.timezone, ...o.parserExtra });
  parser.setReferenceTime(Date.UTC(2024, 0, 15, 12, 0, 0));
  const rates: number[] = [];
  for (let pass = 0; pass < o.passes; pass++) {
    const t0 = process.cpuUsage();
    for (const l of lines) parser.parse(l, 0, l.length, LINE_UTF8_VALID | noSpecialsFlag(l));
    rates.push(lines.length / cpuSeconds(t0));
  }
  return median(rates);
}

/** Parse-only runs give lines the same NO_SPECIALS hint the batch framer would. */
function noSpecialsFlag(l: Buffer): number {
  return l.indexOf(9) < 0 && l.indexOf(92) < 0 && l.indexOf(13) < 0 ? LINE_NO_SPECIALS : 0;
}

/** Parses `--flag value` arguments into options (throws on unknown flags). */
export function parseBenchArgs(argv: string[]): ParseBenchOptions {
  const o: ParseBenchOptions = {
    format: 'auto',
    lines: 200_000,
    passes: 7,
    batch: 10_000,
    linesPerMessage: 1,
    malformed: 0,
    timezone: 'Europe/Istanbul',
  };
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`missing value for ${flag}`);
    switch (flag) {
      case '--format':
        if (
          value !== 'auto' &&
          value !== 'all' &&
          value !== 'kv' &&
          !(FORMAT_NAMES as readonly string[]).includes(value)
        )
          throw new Error(`unknown format ${value}`);
        o.format = value;
        // `--format kv` alone benchmarks FortiGate lines through the declarative kv equivalent.
        if (value === 'kv')
          Object.assign(o, { sample: o.sample ?? 'fortigate', parserExtra: FORTIGATE_AS_KV });
        break;
      case '--input':
        o.input = value;
        break;
      case '--sample':
        o.sample = value;
        break;
      case '--insert-format':
        if (value !== 'RowBinary' && value !== 'TabSeparated')
          throw new Error(`unknown insert format ${value}`);
        o.insertFormat = value;
        break;
      case '--timezone':
        o.timezone = value;
        break;
      case '--lines':
      case '--passes':
      case '--batch':
      case '--lines-per-message':
      case '--malformed': {
        const key = flag.slice(2).replace(/-(\w)/g, (_, c: string) => c.toUpperCase()) as 'lines';
        o[key] = Number(value);
        if (!(o[key] >= 0)) throw new Error(`bad number for ${flag}`);
        break;
      }
      default:
        throw new Error(`unknown flag ${flag}`);
    }
  }
  return o;
}

/** One row of the per-format table. */
export interface FormatRow {
  format: string;
  linesPerCpuSecond: number;
  parseOnlyLinesPerCpuSecond: number;
  avgLineBytes: number;
  deadLettered: number;
}

/** Every native format (and auto on the mix) in one run, with the same options. */
export function runAllFormats(o: ParseBenchOptions): {
  node: string;
  nodeArgs: string[];
  loadavg: number[];
  rows: FormatRow[];
  declarativeKvVsFortigate: number;
} {
  const rows: FormatRow[] = [];
  const runs: Array<[string, ParseBenchOptions]> = [
    ...[...FORMAT_NAMES, 'auto'].map((format): [string, ParseBenchOptions] => [
      format,
      { ...o, format, sample: undefined },
    ]),
    [
      'kv (declarative, FortiGate lines)',
      { ...o, format: 'kv', sample: 'fortigate', parserExtra: FORTIGATE_AS_KV },
    ],
  ];
  for (const [format, options] of runs) {
    const r = runParseBench(options);
    rows.push({
      format,
      linesPerCpuSecond: r.linesPerCpuSecond,
      parseOnlyLinesPerCpuSecond: r.parseOnlyLinesPerCpuSecond,
      avgLineBytes: Math.round(r.bytesIn / r.lines),
      deadLettered: r.deadLettered,
    });
  }
  const rate = (f: string) => rows.find((r) => r.format === f)?.linesPerCpuSecond ?? NaN;
  return {
    node: process.version,
    nodeArgs: process.execArgv,
    loadavg: os.loadavg().map((l) => round(l, 2)),
    rows,
    declarativeKvVsFortigate: round(rate('kv (declarative, FortiGate lines)') / rate('fortigate'), 3),
  };
}

if (require.main === module && !rerunWithWorkerFlags(__filename)) {
  try {
    const o = parseBenchArgs(process.argv.slice(2));
    const result = o.format === 'all' ? runAllFormats(o) : runParseBench(o);
    console.log(JSON.stringify(result, null, 2));
  } catch (err) {
    console.error(`bench:parse: ${(err as Error).message}`);
    process.exitCode = 2;
  }
}
