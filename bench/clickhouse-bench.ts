/**
 * What the ClickHouse benchmarks (integrity-verify, seal, legal-query) share: a
 * numeric `--name value` option, the recorded test bed's ClickHouse (else one of their own), a
 * client with a long request timeout, and the entry point that prints the result as JSON.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import { startClickHouse, stopClickHouse } from '../test/env/clickhouse';
import { readTestBed, stateFile, type ClickHouseBed } from '../test/env/testbed';

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
