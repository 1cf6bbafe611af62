/**
 * Starts and stops the whole test bed (Kubernetes, Kafka, ClickHouse) in parallel; used by jest's
 * globalSetup, `npm run env:up` and the demo. A component that cannot start fails the whole bed
 * with its log tail: integration tests never run against a partial bed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startClickHouse, stopClickHouse } from './clickhouse';
import { startKafka, stopKafka } from './kafka';
import { applyCrds } from './kube-crds';
import { startBedControllerManager, startKubernetes, stopKubernetes } from './kubernetes';
import { writeTestBed, type TestBed } from './testbed';

/** Which parts to start; all by default. */
export interface BedOptions {
  kubernetes?: boolean;
  kafka?: boolean;
  clickhouse?: boolean;
  /** Process whose exit stops the bed (0: the bed outlives its starter, as with env:up). */
  ownerPid: number;
  dir?: string;
  /**
   * Where the bed's progress lines go (one line per call, no newline); default `console.log`. A
   * caller whose stdout is a document (`npm run bench`'s JSON) passes a writer to stderr.
   */
  log?: (line: string) => void;
}

/** Starts the requested parts concurrently, applies the CRDs, records the state file. */
export async function startTestBed(opts: BedOptions): Promise<TestBed> {
  const dir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'logpipeline-bed-'));
  const started = Date.now();
  const bed: TestBed = { dir };
  const tasks: Array<Promise<void>> = [];
  if (opts.kubernetes !== false) {
    tasks.push(
      startKubernetes(path.join(dir, 'kubernetes'), opts.ownerPid).then(async (k) => {
        bed.kubernetes = k;
        await applyCrds(k);
        await startBedControllerManager(k, opts.ownerPid);
      }),
    );
  }
  if (opts.kafka !== false)
    tasks.push(startKafka(path.join(dir, 'kafka'), opts.ownerPid).then((k) => void (bed.kafka = k)));
  if (opts.clickhouse !== false) {
    tasks.push(
      startClickHouse(path.join(dir, 'clickhouse'), opts.ownerPid).then((c) => void (bed.clickhouse = c)),
    );
  }
  const results = await Promise.allSettled(tasks);
  const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failures.length > 0) {
    await stopTestBed(bed);
    throw new Error(
      `test bed failed to start:\n${failures.map((f) => String(f.reason?.stack ?? f.reason)).join('\n\n')}`,
    );
  }
  writeTestBed(bed);
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  (opts.log ?? console.log)(`test bed up in ${secs}s (${dir})`);
  return bed;
}

/** Stops every part that is running; safe to call on a partial bed. */
export async function stopTestBed(bed: TestBed): Promise<void> {
  await Promise.allSettled([
    bed.kubernetes ? stopKubernetes(bed.kubernetes) : undefined,
    bed.kafka ? stopKafka(bed.kafka) : undefined,
    bed.clickhouse ? stopClickHouse(bed.clickhouse) : undefined,
  ]);
}
