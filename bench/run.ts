/**
 * `npm run bench`: every benchmark in one run, on one test bed, printed as one JSON document.
 * Each benchmark runs as its own process (so its CPU time is its own) and prints JSON; this
 * runner collects the last JSON value each prints. `--only parse,e2e` picks benchmarks; extra
 * flags for one go through `--<name>-args "<flags>"`. Numbers are CPU-normalised medians (see each
 * benchmark's header); the machine's load makes wall-clock figures noisy. The document starts
 * with the machine (Node version, load average) and issue 15's `targets` (bench/targets.ts).
 * stdout carries that document and nothing else (progress goes to stderr; `npm run --silent bench`
 * keeps npm's own lines away too); `--out <file>` writes it to a file instead.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestBed, stopTestBed } from '../test/env/bed';
import { issue15Targets } from './targets';

const BENCHMARKS: Record<string, { script: string; args: string[]; needsBed: boolean }> = {
  parse: { script: 'parse.js', args: ['--format', 'fortigate'], needsBed: false },
  'parse-auto': { script: 'parse.js', args: ['--format', 'auto'], needsBed: false },
  'parse-paloalto': { script: 'parse.js', args: ['--format', 'paloalto'], needsBed: false },
  'parse-json': { script: 'parse.js', args: ['--format', 'json'], needsBed: false },
  'integrity-digest': { script: 'integrity-digest.js', args: [], needsBed: false },
  // Integrity on as in examples/firewall.yaml: the RSS target counts those runs too.
  e2e: { script: 'e2e.js', args: ['--integrity', 'true'], needsBed: true },
  backfill: { script: 'backfill.js', args: [], needsBed: true },
  'legal-query': { script: 'legal-query.js', args: ['--rows', '10000000'], needsBed: true },
  'integrity-verify': { script: 'integrity-verify.js', args: [], needsBed: true },
  seal: { script: 'seal.js', args: [], needsBed: true },
  autoscale: { script: 'autoscale.js', args: [], needsBed: true },
  // The syslog receiver (issue 16): TCP into Kafka packed, and UDP loss at 50k/100k/200k lines/s.
  'ingest-kafka': { script: 'ingest-kafka.js', args: ['--lines', '500000', '--runs', '3'], needsBed: true },
  'ingest-udp': { script: 'ingest-udp.js', args: [], needsBed: true },
  'ingest-e2e': { script: 'ingest-e2e.js', args: [], needsBed: true },
};

function flag(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
}

function lastJson(text: string): unknown {
  const trimmed = text.trim();
  try {
    return JSON.parse(trimmed);
  } catch {
    const lines = trimmed.split('\n').reverse();
    for (const l of lines) {
      try {
        return JSON.parse(l);
      } catch {
        /* not JSON */
      }
    }
    return { error: 'no JSON output', tail: trimmed.slice(-2000) };
  }
}

function runOne(name: string, extra: string[], env: NodeJS.ProcessEnv): Promise<unknown> {
  const b = BENCHMARKS[name];
  return new Promise((resolve) => {
    let out = '';
    const child = spawn(process.execPath, [path.join(__dirname, b.script), ...b.args, ...extra], {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (c: string) => (out += c));
    child.on('exit', (code) =>
      resolve(code === 0 ? lastJson(out) : { error: `exit ${code}`, output: lastJson(out) }),
    );
  });
}

async function main(argv: string[]): Promise<void> {
  const only = (flag(argv, 'only') ?? Object.keys(BENCHMARKS).join(',')).split(',');
  const unknown = only.filter((n) => !BENCHMARKS[n]);
  if (unknown.length)
    throw new Error(
      `unknown benchmark(s) ${unknown.join(', ')}; known: ${Object.keys(BENCHMARKS).join(', ')}`,
    );
  const env: NodeJS.ProcessEnv = { ...process.env };
  let bed: Awaited<ReturnType<typeof startTestBed>> | undefined;
  if (only.some((n) => BENCHMARKS[n].needsBed) && !process.env.LP_TESTBED_FILE) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'logpipeline-bench-'));
    env.LP_TESTBED_FILE = path.join(dir, 'state.json');
    process.env.LP_TESTBED_FILE = env.LP_TESTBED_FILE;
    // This document's stdout is the JSON alone: the bed's progress lines go to stderr.
    bed = await startTestBed({
      ownerPid: process.pid,
      dir,
      log: (line) => process.stderr.write(`${line}\n`),
    });
  }
  const results: Record<string, unknown> = {};
  try {
    for (const name of only) {
      const extra = (flag(argv, `${name}-args`) ?? '').split(' ').filter(Boolean);
      process.stderr.write(`bench: ${name}...\n`);
      results[name] = await runOne(name, extra, env);
    }
  } finally {
    if (bed) {
      await stopTestBed(bed);
      // The bed's data (Kafka log, ClickHouse parts) is this run's alone: nothing left in /tmp.
      try {
        fs.rmSync(bed.dir, { recursive: true, force: true, maxRetries: 5 });
      } catch (err) {
        process.stderr.write(`bench: ${bed.dir} not removed: ${(err as Error).message}\n`);
      }
    }
  }
  // Load average at the end (each benchmark's own JSON has its own, taken while it ran).
  const machine = { cpus: os.cpus().length, node: process.version, loadavg: os.loadavg() };
  // Issue 15's targets first: each with its value, its JSON source and met / not met / not measured.
  const targets = issue15Targets(results);
  const document = `${JSON.stringify({ machine, targets, results }, null, 2)}\n`;
  const out = flag(argv, 'out');
  if (out) {
    fs.writeFileSync(out, document);
    process.stderr.write(`bench: wrote ${out}\n`);
  } else process.stdout.write(document);
}

main(process.argv.slice(2)).catch((err: Error) => {
  process.stderr.write(`bench: ${err.message}\n`);
  process.exit(1);
});
