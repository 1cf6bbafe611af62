/**
 * Verification throughput and memory: `node dist/bench/integrity-verify.js [--rows 2000000]
 * [--batch 100000] [--partitions 4] [--keep]`. Writes rows the worker's way (TSV sealed by the
 * integrity library, inserted with the batch token, link after) into the operator's firewall
 * table, then runs `verifyTable` over everything and prints JSON: rows/s and MB/s of the row pass,
 * total seconds, and the verifier's peak RSS (it must stay flat as the range grows). Uses the
 * recorded test bed's ClickHouse, else starts its own.
 */
import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { ChainState } from '../consumer/src/integrity/chain-state';
import { msText } from '../common/src/integrity/chain';
import { insertLink } from '../consumer/src/integrity/link-store';
import { verifyTable } from '../operator/src/compliance/verify';
import { buildTableDDL, buildWorkerColumns, ddlStatements } from '../operator/src/desired/clickhouse';
import { FIREWALL_COLUMNS } from '../operator/src/desired/clickhouse/presets';
import { resolved } from '../test/fixtures/clickhouse-testing';
import { benchClient, connectBed, option, runBenchMain } from './clickhouse-bench';

const START = Date.UTC(2026, 10, 20);

/** One batch of TSV rows for the firewall preset columns (one line per message). */
function batchTsv(columns: string[], partition: number, first: number, count: number): Buffer {
  const parts: string[] = [];
  for (let o = first; o < first + count; o++) {
    const ts = START + o * 10 + partition;
    const v: Record<string, string> = {
      ts: msText(ts),
      ingest_ts: msText(ts + 1000),
      vendor: 'fortigate',
      device: `fw-${o % 8}`,
      src_ip: `100.${64 + (o % 64)}.${(o >> 8) & 255}.${o & 255}`,
      dst_ip:
        o % 7 === 0
          ? `2606:4700::${(o % 65535).toString(16)}`
          : `8.${(o >> 16) & 255}.${(o >> 8) & 255}.${o & 255}`,
      src_port: String(1024 + (o % 60000)),
      dst_port: '443',
      proto: 'tcp',
      action: o % 5 === 0 ? 'deny' : 'allow',
      bytes: String((o * 7919) % 100000),
      rule: `rule-${o % 50}`,
      severity: 'notice',
      raw: `date=2026-11-20 devname=fw-${o % 8} type=traffic srcip=100.64.${(o >> 8) & 255}.${o & 255} dstip=8.8.8.8 action=accept sentbyte=${o}`,
      kafka_partition: String(partition),
      kafka_offset: String(o),
      kafka_line: '0',
      // Addresses the generator does not vary (no NAT, one sender): '0' is not an IP address.
      nat_src_ip: '::',
      nat_dst_ip: '::',
      sender_ip: '10.0.0.1',
    };
    parts.push(columns.map((c) => v[c] ?? '0').join('\t'));
  }
  return Buffer.from(parts.join('\n') + '\n');
}

/** Creates the firewall tables in `db` and writes `rows` rows the worker's way (rows, then links); returns seconds. */
export async function fill(
  client: ClickHouseClient,
  db: string,
  rows: number,
  batch: number,
  partitions: number,
): Promise<number> {
  const hasLine = FIREWALL_COLUMNS.some((c) => c.name === 'kafka_line');
  const extra = hasLine ? [] : [{ name: 'kafka_line', type: 'UInt32', source: 'kafka_line' }];
  const spec = resolved(
    { database: db, table: 'fw', retention: { deleteAfter: '3650d' }, columns: extra },
    { integrity: { enabled: true } },
  );
  const ddl = buildTableDDL(spec);
  if (!ddl.ok) throw new Error(ddl.message);
  for (const sql of ddlStatements(ddl.value)) await client.command({ query: sql });
  const columns = buildWorkerColumns(ddl.value.tables[0].schema);
  const state = new ChainState({ pipeline: 'isp/fw', table: 'fw', columns });
  const target = {
    database: db,
    integrityTable: 'fw_integrity',
    checkpointTable: 'fw_checkpoints',
    pipeline: 'isp/fw',
    table: 'fw',
  };
  for (let p = 0; p < partitions; p++) state.restore(p, []);
  const t0 = Date.now();
  const perPartition = Math.ceil(rows / partitions);
  for (let first = 0; first < perPartition; first += batch) {
    for (let p = 0; p < partitions; p++) {
      const count = Math.min(batch, perPartition - first);
      const tsv = batchTsv(
        columns.map((c) => c.name),
        p,
        first,
        count,
      );
      const token = `isp.fw/${p}/${first}-${first + count - 1}/bench`;
      const sealed = state.seal({
        partition: p,
        firstOffset: first,
        lastOffset: first + count - 1,
        insertedAtMs: START + first * 10,
        batchToken: token,
        tsv,
      });
      if (typeof sealed === 'string') throw new Error(sealed);
      await client.insert({
        table: `\`${db}\`.fw`,
        columns: columns.map((c) => `\`${c.name}\``) as [string, ...string[]],
        values: Readable.from([tsv], { objectMode: false }),
        format: 'TabSeparated',
        clickhouse_settings: { insert_deduplication_token: token },
      });
      await insertLink(client, target, sealed);
    }
  }
  await client.command({ query: `OPTIMIZE TABLE \`${db}\`.fw FINAL` });
  return (Date.now() - t0) / 1000;
}

/** Runs the benchmark; returns the JSON result. */
export async function runVerifyBench(argv: string[]): Promise<Record<string, unknown>> {
  const rows = option(argv, 'rows', 2_000_000);
  const { bed, stop } = await connectBed();
  const client = benchClient(bed);
  const db = `verify_bench_${rows}`;
  try {
    const tables = await client.query({
      query: `SELECT count() AS c FROM system.tables WHERE database = '${db}' AND name = 'fw'`,
      format: 'JSONEachRow',
    });
    const exists = Number((await tables.json<{ c: string }>())[0].c) > 0;
    const fillSeconds = exists
      ? 0
      : await fill(client, db, rows, option(argv, 'batch', 100_000), option(argv, 'partitions', 4));
    const rssBefore = process.memoryUsage.rss();
    const cpu0 = process.cpuUsage();
    const report = await verifyTable(client, { database: db, table: 'fw', window: {} });
    const cpu = process.cpuUsage(cpu0);
    if (!argv.includes('--keep')) await client.command({ query: `DROP DATABASE IF EXISTS \`${db}\`` });
    return {
      rows,
      fillSeconds,
      ok: report.ok,
      findings: report.findings.length,
      ...report.stats,
      verifierCpuSeconds: Math.round(((cpu.user + cpu.system) / 1e6) * 100) / 100,
      rssBeforeMB: Math.round(rssBefore / 1048576),
    };
  } finally {
    await client.close();
    await stop?.();
  }
}

if (require.main === module) runBenchMain(runVerifyBench);
