/**
 * What a new pipeline's ClickHouse statements cost the server, by kind, as the number of tables
 * grows (issue 18, the creation storm): `node dist/bench/clickhouse-ddl-cost.js [--levels
 * 0,1000,2000] [--sample 40]`. On a private bed ClickHouse (chdb behind the bed's HTTP server),
 * sequentially so the server's CPU (/proc, its process group) belongs to one kind at a time:
 * `SELECT 1` (the per-request floor), the operator's exclusive CREATE TABLE of a pipeline's data
 * table and of its parser-stats table (the exact statements `buildTableDDL` renders for the
 * storm bench's spec), and a probe of named tables in `system.tables`. Between levels the server
 * gets more pipelines' tables. Prints JSON: CPU-ms and wall-ms per statement, per kind and level.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { resolveSpec } from '../operator/src/api/defaults';
import type { LogPipeline } from '../operator/src/api/types';
import { exclusiveCreate } from '../operator/src/apply/clickhouse';
import { buildTableDDL } from '../operator/src/desired/clickhouse';
import { ownerRecord } from '../operator/src/desired/ownership';
import { startClickHouse, stopClickHouse } from '../test/env/clickhouse';
import { groupCpuSeconds } from './autoscale-support';
import { benchClient, benchMachine, runBenchMain } from './clickhouse-bench';

const DATABASE = 'bench1000';

/** The data and parser-stats CREATE TABLE of pipeline `i`, as the operator sends them. */
function pipelineStatements(i: number): { data: string; parserStats: string } {
  const name = `p-${i}`;
  const lp = {
    apiVersion: 'logpipeline.io/v1alpha1',
    kind: 'LogPipeline',
    metadata: { name, namespace: 'bench', uid: `uid-${i}`, generation: 1 },
    spec: {
      kafka: { bootstrapServers: ['kafka:9092'], topic: { name: `bench.${name}`, partitions: 1 } },
      clickhouse: { url: 'http://ch:8123', database: DATABASE, table: name.replace(/-/g, '_') },
      workers: { batch: { maxDelay: '300ms' } },
      deadLetter: { enabled: false },
    },
  } as unknown as LogPipeline;
  const built = buildTableDDL(resolveSpec(lp), ownerRecord({ namespace: 'bench', name, uid: `uid-${i}` }));
  if (!built.ok) throw new Error(built.message);
  const [data, parserStats] = built.value.tables.map((t) => exclusiveCreate(t.create[0]));
  return { data, parserStats };
}

/** Runs `n` statements from `make(i)` one after another: server CPU-ms and wall-ms per statement. */
async function measure(pgid: number, n: number, send: (i: number) => Promise<unknown>) {
  const cpu0 = groupCpuSeconds(pgid);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await send(i);
  const wall = performance.now() - t0;
  const cpu = groupCpuSeconds(pgid) - cpu0;
  return { cpuMs: Math.round((cpu * 1000 * 100) / n) / 100, wallMs: Math.round((wall * 100) / n) / 100 };
}

async function level(ch: ClickHouseClient, pgid: number, next: { i: number }, sample: number) {
  const probe =
    'SELECT database, name, engine, comment FROM system.tables ' +
    'WHERE has({dbs:Array(String)}, database) AND has({names:Array(String)}, name)';
  const base = next.i;
  const res = {
    select1: await measure(pgid, sample, () =>
      ch.query({ query: 'SELECT 1', format: 'JSONEachRow' }).then((r) => r.json()),
    ),
    createData: await measure(pgid, sample, (k) => ch.command({ query: pipelineStatements(base + k).data })),
    createParserStats: await measure(pgid, sample, (k) =>
      ch.command({ query: pipelineStatements(base + k).parserStats }),
    ),
    probeTables: await measure(pgid, sample, (k) =>
      ch
        .query({
          query: probe,
          format: 'JSONEachRow',
          query_params: { dbs: [DATABASE], names: [`p_${base + k}`] },
        })
        .then((r) => r.json()),
    ),
  };
  next.i += sample;
  return res;
}

async function bench(argv: string[]) {
  const arg = (name: string, fallback: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : fallback;
  };
  const levels = arg('levels', '0,1000,2000').split(',').map(Number);
  const sample = Number(arg('sample', '40'));
  const dir = fs.mkdtempSync(path.join(process.env.LP_SCRATCH ?? '/tmp', 'ch-ddl-cost-'));
  const bed = await startClickHouse(dir, process.pid);
  const ch = benchClient(bed);
  const pgid = bed.process!.pid;
  try {
    await ch.command({ query: `CREATE DATABASE IF NOT EXISTS ${DATABASE}` });
    const next = { i: 0 };
    const out: Record<string, unknown> = {};
    for (const target of levels) {
      // Fill up to `target` tables (two per pipeline) before measuring.
      while (2 * next.i < target) {
        const s = pipelineStatements(next.i++);
        await Promise.all([ch.command({ query: s.data }), ch.command({ query: s.parserStats })]);
      }
      out[`tables${2 * next.i}`] = await level(ch, pgid, next, sample);
    }
    return { machine: benchMachine(), sample, levels: out };
  } finally {
    await ch.close();
    await stopClickHouse(bed);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) runBenchMain(bench);
