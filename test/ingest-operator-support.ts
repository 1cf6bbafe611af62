/**
 * Helpers of the operator-level syslog ingest tests: kubectl against the bed, and the rows of a
 * firewall table counted per test case (`case=<tag> seq=<n>` in the raw line) with how many carry
 * the loopback sender_ip every local sender has.
 */
import { execFileSync } from 'node:child_process';
import type { TestBed } from './env/testbed';
import type { PodRunner } from './env/pod-runner';
import type { Manager } from '../operator/src/controller/manager';
import type { ExternalClients } from '../operator/src/controller/parts';
import { apis, deleteNamespace, deletePipeline, waitFor } from './operator-harness';
import { chClient } from './worker-support';

/** Runs kubectl with the bed's kubeconfig (as a user would); stdout. */
export function kubectlAs(bed: TestBed, args: string[], input?: string): string {
  return execFileSync('kubectl', ['--kubeconfig', bed.kubernetes!.kubeconfig, ...args], {
    input,
    encoding: 'utf8',
  });
}

/** Rows per case: all rows, distinct seqs, rows whose sender_ip is 127.0.0.1. */
export type StoredByCase = Record<string, { rows: number; distinct: number; local: number }>;

/** Counts the rows of `table` (database.table) per case; empty while the table does not exist. */
export async function storedRowsByCase(bed: TestBed, table: string): Promise<StoredByCase> {
  const ch = chClient(bed);
  try {
    const rs = await ch.query({
      query: `SELECT extract(raw, 'case=([a-z0-9-]+)') AS c, count() AS rows,
                uniqExact(extract(raw, 'seq=([0-9]+)')) AS distinct_seqs,
                countIf(sender_ip = toIPv6('127.0.0.1')) AS local
              FROM ${table} GROUP BY c`,
      format: 'JSONEachRow',
    });
    const out: StoredByCase = {};
    for (const r of await rs.json<{ c: string; rows: string; distinct_seqs: string; local: string }>())
      out[r.c] = { rows: Number(r.rows), distinct: Number(r.distinct_seqs), local: Number(r.local) };
    return out;
  } catch {
    return {};
  } finally {
    await ch.close();
  }
}

/** Waits until every case of `want` has all its seqs in `table`; returns what is stored. */
export async function waitRowsStored(
  bed: TestBed,
  table: string,
  want: Record<string, number>,
  timeoutMs = 180_000,
): Promise<StoredByCase> {
  return waitFor(
    `all of ${JSON.stringify(want)} stored`,
    async () => {
      const s = await storedRowsByCase(bed, table);
      return Object.entries(want).every(([c, n]) => (s[c]?.distinct ?? 0) >= n) && s;
    },
    timeoutMs,
  ).catch(async (err) => {
    throw new Error(
      `${(err as Error).message}; stored: ${JSON.stringify(await storedRowsByCase(bed, table))}`,
    );
  });
}

/** What an operator-level ingest test started; each may be missing when its start failed. */
export interface IngestTestRig {
  bed: TestBed;
  ns?: string;
  database: string;
  runner?: PodRunner;
  manager?: Manager;
  external?: ExternalClients;
}

/**
 * Tears an ingest test down in dependency order: the pipeline, the pod runner, the operator and
 * its clients, the test database, then the namespace's Services (the bed has no garbage
 * collector to remove owned objects) and the namespace itself.
 */
export async function tearDownIngestTest(rig: IngestTestRig): Promise<void> {
  const { ns } = rig;
  if (ns) await deletePipeline(ns, 'fw');
  await rig.runner?.stop();
  await rig.manager?.stop();
  await rig.external?.close();
  const ch = chClient(rig.bed);
  await ch.command({ query: `DROP DATABASE IF EXISTS ${rig.database}` });
  await ch.close();
  if (ns) {
    const { core } = apis();
    for (const s of (await core.listNamespacedService({ namespace: ns })).items)
      await core.deleteNamespacedService({ namespace: ns, name: s.metadata!.name! }).catch(() => undefined);
    await deleteNamespace(ns);
  }
}
