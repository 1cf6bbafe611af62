/**
 * What the ClickHouse benchmarks (integrity-verify, seal, legal-query, e2e, e2e-insert, e2e-kafka,
 * backfill) share: a numeric `--name value` option, the recorded test bed's ClickHouse (else one of
 * their own), the recorded Kafka + ClickHouse bed (else a private one), a client with a long
 * request timeout, the machine block of the printed JSON, and the entry point that prints the
 * result as JSON.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import { startClickHouse, stopClickHouse } from '../test/env/clickhouse';
import { startTestBed, stopTestBed } from '../test/env/bed';
import { readTestBed, stateFile, type ClickHouseBed, type TestBed } from '../test/env/testbed';

/** The number after `--<name>`, else `fallback`. */
export function option(argv: string[], name: string, fallback: number): number {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
}

/** The recorded test bed's ClickHouse, else a fresh one in a temp dir `<prefix>…` (with its stopper). */
export async function connectBed(
  prefix = 'verify-bench-',
): Promise<{ bed: ClickHouseBed; stop?: () => Promise<void> }> {
  if (fs.existsSync(stateFile())) {
    const bed = readTestBed().clickhouse;
    if (bed) return { bed };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const bed = await startClickHouse(dir, process.pid);
  return {
    bed,
    stop: async () => (await stopClickHouse(bed), fs.rmSync(dir, { recursive: true, force: true })),
  };
}

/**
 * Runs `fn` on the bed recorded in LP_TESTBED_FILE, else on a private Kafka + ClickHouse bed (no
 * Kubernetes) in a temp dir `<prefix>…`, which is stopped (and, after a run that succeeded, removed) afterwards.
 */
export async function withKafkaBed<T>(prefix: string, fn: (bed: TestBed) => Promise<T>): Promise<T> {
  let own: TestBed | undefined;
  if (!process.env.LP_TESTBED_FILE || !fs.existsSync(process.env.LP_TESTBED_FILE)) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    process.env.LP_TESTBED_FILE = path.join(dir, 'state.json');
    own = await startTestBed({ kubernetes: false, ownerPid: process.pid, dir, log: (l) => console.error(l) });
  }
  let ok = false;
  try {
    const result = await fn(readTestBed());
    ok = true;
    return result;
  } finally {
    if (own) {
      await stopTestBed(own);
      // A bed of our own goes with a finished run; a failed run keeps its logs for a look.
      if (ok) fs.rmSync(own.dir, { recursive: true, force: true });
      else console.error(`bench: the bed's logs are kept in ${own.dir}`);
      delete process.env.LP_TESTBED_FILE;
    }
  }
}

/** The machine a result was measured on: CPU count, load average (2 decimals) and Node version. */
export function benchMachine(): { cpus: number; loadavg: number[]; node: string } {
  return {
    cpus: os.cpus().length,
    loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100),
    node: process.version,
  };
}

/** A client for long benchmark statements (one hour per request, client logging off). */
export function benchClient(bed: ClickHouseBed): ClickHouseClient {
  return createClient({
    url: bed.url,
    username: bed.username,
    password: bed.password,
    request_timeout: 3_600_000,
    log: { level: ClickHouseLogLevel.OFF },
  });
}

/** Runs a benchmark with the process arguments and prints its result as JSON (exit code 1 on failure). */
export function runBenchMain(bench: (argv: string[]) => Promise<unknown>): void {
  bench(process.argv.slice(2)).then(
    (r) => process.stdout.write(JSON.stringify(r, null, 2) + '\n'),
    (err) => {
      process.stderr.write(`${(err as Error).stack}\n`);
      process.exitCode = 1;
    },
  );
}
