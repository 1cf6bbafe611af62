/**
 * Same-process A/B of parse+encode against another build:
 * `node dist/bench/parse-compare.js --base /tmp/old-tree --format fortigate [--lines-per-message 100]`.
 * `--base` is a checkout of the other revision with its `dist/` built. Both encoders get the same
 * messages; each batch is encoded by one and then the other (the order flips every batch), and the
 * CPU time (process.cpuUsage) is summed per build over a round. On a shared, loaded machine this
 * cancels load changes that separate processes (or whole alternating passes) see: the load moves
 * both builds' numbers alike. Prints per-round ratios (base CPU / this build's CPU) and medians.
 */
import os from 'node:os';
import path from 'node:path';
import { BatchEncoder, MessageInput } from '../consumer/src/encode/batch';
import { REFERENCE_COLUMNS } from '../consumer/src/encode/reference-columns';
import type { FormatName } from '../consumer/src/parse/record';
import { generateSampleLines } from '../test/fixtures/samples';

/** Comparison settings (CLI flags of the same name in kebab-case). */
export interface CompareOptions {
  base: string;
  format: string;
  lines: number;
  linesPerMessage: number;
  rounds: number;
  /** Lines per encode() call (one batch). */
  batchLines: number;
}

interface Encoder {
  encode(messages: readonly MessageInput[], ingestMs: number, from: number, to: number): unknown;
}

/** The other build's BatchEncoder (loaded from its own dist/: separate modules, separate JIT state). */
function baseEncoder(o: CompareOptions): Encoder {
  const dist = path.resolve(o.base, 'dist');
  /* eslint-disable @typescript-eslint/no-require-imports */
  const batch = require(path.join(dist, 'consumer/src/encode/batch')) as {
    BatchEncoder: typeof BatchEncoder;
  };
  const ref = require(path.join(dist, 'consumer/src/encode/reference-columns')) as {
    REFERENCE_COLUMNS: typeof REFERENCE_COLUMNS;
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
  return new batch.BatchEncoder({
    parser: { format: o.format, timezone: 'Europe/Istanbul' },
    columns: ref.REFERENCE_COLUMNS,
    format: 'RowBinary',
  });
}

function messagesOf(lines: Buffer[], per: number): MessageInput[] {
  const out: MessageInput[] = [];
  for (let i = 0; i < lines.length; i += per) {
    const group = lines.slice(i, i + per);
    const value = per === 1 ? Buffer.from(group[0]) : Buffer.concat(group.flatMap((l) => [l, Buffer.of(10)]));
    out.push({ value, topic: 'bench', partition: 0, offset: i });
  }
  return out;
}

function median(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  return v.length % 2 ? v[v.length >> 1] : (v[(v.length >> 1) - 1] + v[v.length >> 1]) / 2;
}

/** Runs the comparison; rates are lines per CPU-second, ratio > 1 means this build is faster. */
export function runCompare(o: CompareOptions) {
  const lines = generateSampleLines(o.format as FormatName, o.lines, { seed: 42, malformedRatio: 0 });
  const messages = messagesOf(lines, o.linesPerMessage);
  const encoders: Record<'base' | 'new', Encoder> = {
    base: baseEncoder(o),
    new: new BatchEncoder({
      parser: { format: o.format, timezone: 'Europe/Istanbul' },
      columns: REFERENCE_COLUMNS,
      format: 'RowBinary',
    }),
  };
  const step = Math.max(1, Math.round(o.batchLines / o.linesPerMessage));
  const ingestMs = Date.UTC(2024, 0, 15, 12, 0, 0);
  const cpu = (k: 'base' | 'new', from: number): number => {
    const t0 = process.cpuUsage();
    encoders[k].encode(messages, ingestMs, from, Math.min(messages.length, from + step));
    const u = process.cpuUsage(t0);
    return u.user + u.system;
  };
  const round = () => {
    const t = { base: 0, new: 0 };
    let flip = false;
    for (let from = 0; from < messages.length; from += step) {
      for (const k of flip ? (['new', 'base'] as const) : (['base', 'new'] as const)) t[k] += cpu(k, from);
      flip = !flip;
    }
    return t;
  };
  round(); // warm-up: both builds compiled before anything is counted
  const rounds = Array.from({ length: o.rounds }, round);
  const rate = (us: number) => Math.round((lines.length / us) * 1e6);
  return {
    format: o.format,
    linesPerMessage: o.linesPerMessage,
    baseLinesPerCpuSecond: rate(median(rounds.map((t) => t.base))),
    newLinesPerCpuSecond: rate(median(rounds.map((t) => t.new))),
    ratio: Math.round(median(rounds.map((t) => t.base / t.new)) * 1000) / 1000,
    roundRatios: rounds.map((t) => Math.round((t.base / t.new) * 100) / 100),
    node: process.version,
    loadavg: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

/** Parses `--flag value` pairs (throws on unknown flags or a missing --base). */
export function parseCompareArgs(argv: string[]): CompareOptions {
  const o: CompareOptions = {
    base: '',
    format: 'fortigate',
    lines: 100_000,
    linesPerMessage: 1,
    rounds: 9,
    batchLines: 5000,
  };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '').replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
    const value = argv[i + 1];
    if (!(key in o) || value === undefined) throw new Error(`bad flag ${argv[i]}`);
    if (key === 'base' || key === 'format') o[key] = value;
    else {
      const n = Number(value);
      if (!(n >= 1)) throw new Error(`bad number for ${argv[i]}`);
      o[key as 'lines'] = n;
    }
  }
  if (o.base === '') throw new Error('--base <checkout with a built dist/> is required');
  return o;
}

if (require.main === module) {
  try {
    console.log(JSON.stringify(runCompare(parseCompareArgs(process.argv.slice(2))), null, 2));
  } catch (err) {
    console.error(`parse-compare: ${(err as Error).message}`);
    process.exitCode = 2;
  }
}
