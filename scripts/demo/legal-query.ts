/**
 * The demo's closing legal query: "every record of IP X between T1 and T2", asked through the
 * project's own legal query (operator/src/compliance/legal-query.ts, the one `logpipeline query`
 * runs: bound parameters, src/dst union), timed from request to the last record read.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import {
  buildLegalQuery,
  legalQueryParams,
  runLegalQuery as queryRecords,
} from '../../operator/src/compliance/legal-query';

/** What is asked. */
export interface LegalQueryRequest {
  database: string;
  table: string;
  /** The table's time column (spec.clickhouse.timeColumn, default ts). */
  timeColumn: string;
  ip: string;
  fromMs: number;
  toMs: number;
  /** Upper bound on returned records (a demo safety net, not part of the legal question). */
  limit: number;
}

/** What came back. */
export interface LegalQueryResult {
  ip: string;
  from: string;
  to: string;
  rows: number;
  latencyMs: number;
  /** The first few records, one line each. */
  sample: string[];
  sql: string;
}

/** One record as a short line: time, flow, protocol, action, vendor/device. */
export function describeRecord(row: Record<string, unknown>, timeColumn: string): string {
  const addr = (ip: unknown, port: unknown) => `${String(ip ?? '').replace(/^::ffff:/, '')}:${port ?? ''}`;
  return `${row[timeColumn]}  ${addr(row.src_ip, row.src_port)} -> ${addr(row.dst_ip, row.dst_port)}  ${row.proto ?? ''} ${row.action ?? ''}  ${row.vendor ?? ''}/${row.device ?? ''}`;
}

/** Counts JSONEachRow records in a stream, keeping the first `keep` parsed. */
async function readRecords(
  stream: AsyncIterable<Buffer | string>,
  keep: number,
): Promise<{ count: number; first: Array<Record<string, unknown>> }> {
  let count = 0;
  let rest = '';
  const first: Array<Record<string, unknown>> = [];
  const take = (line: string) => {
    if (line.length === 0) return;
    if (first.length < keep) first.push(JSON.parse(line) as Record<string, unknown>);
    count++;
  };
  for await (const chunk of stream) {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop() ?? '';
    lines.forEach(take);
  }
  take(rest);
  return { count, first };
}

/** Runs the legal query; the records are counted as they stream, and a few are kept to show. */
export async function runLegalQuery(
  client: ClickHouseClient,
  req: LegalQueryRequest,
): Promise<LegalQueryResult> {
  const target = { database: req.database, table: req.table, timeColumn: req.timeColumn };
  const params = legalQueryParams(req.ip, req.fromMs, req.toMs);
  const started = process.hrtime.bigint();
  const result = await queryRecords(client, target, params, 'json', 'union', req.limit);
  const { count, first } = await readRecords(result.stream, 3);
  const latencyMs = Number(process.hrtime.bigint() - started) / 1e6;
  return {
    ip: req.ip,
    from: new Date(req.fromMs).toISOString(),
    to: new Date(req.toMs).toISOString(),
    rows: count,
    latencyMs,
    sample: first.map((r) => describeRecord(r, req.timeColumn)),
    sql: buildLegalQuery(target, 'union', req.limit),
  };
}
