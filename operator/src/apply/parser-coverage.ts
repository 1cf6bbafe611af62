/**
 * The operator half of the ParserCoverage channel: sums the workers' `<table>_parser_stats` rows of
 * the last window (rows, rows without src_ip, the most frequent hashed line shapes lacking it).
 * One small aggregate query per reconcile; identifiers are validated, the window is a parameter.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { ResolvedSpec } from '../api/defaults';
import { qualifiedName } from '../../../common/src/sql/identifiers';

/** What the last window says about identity coverage. */
export interface ParserCoverage {
  windowMs: number;
  rows: number;
  missingSrcIp: number;
  /** Share of rows without src_ip, percent with one decimal. */
  missingSrcIpPercent: number;
  /** Most frequent shapes (`<vendor>#<hash>`) of rows without src_ip, largest first. */
  topShapes: Array<{ shape: string; rows: number }>;
}

/** Builds the aggregate query (pure). */
export function buildCoverageQuery(spec: ResolvedSpec): string {
  const table = qualifiedName(spec.clickhouse.database, spec.coverage.table);
  return (
    `SELECT sum(rows) AS rows, sum(missing_src_ip) AS missing, sumMap(shapes) AS shapes FROM ${table} ` +
    `WHERE window_end >= now64(3) - toIntervalMillisecond({window:UInt64})`
  );
}

/** Reads the coverage of the last window. */
export async function readParserCoverage(
  client: ClickHouseClient,
  spec: ResolvedSpec,
): Promise<ParserCoverage> {
  const rs = await client.query({
    query: buildCoverageQuery(spec),
    query_params: { window: spec.coverage.windowMs },
    format: 'JSONEachRow',
  });
  const [row] = await rs.json<{ rows: string; missing: string; shapes: Record<string, string> }>();
  return coverageOf(
    spec.coverage.windowMs,
    Number(row?.rows ?? 0),
    Number(row?.missing ?? 0),
    row?.shapes ?? {},
  );
}

/** Shapes the raw sums into a ParserCoverage (pure). */
export function coverageOf(
  windowMs: number,
  rows: number,
  missing: number,
  shapes: Record<string, string | number>,
): ParserCoverage {
  const topShapes = Object.entries(shapes)
    .map(([shape, n]) => ({ shape, rows: Number(n) }))
    .filter((s) => s.rows > 0)
    .sort((a, b) => b.rows - a.rows || a.shape.localeCompare(b.shape))
    .slice(0, 5);
  const percent = rows > 0 ? Math.round((missing / rows) * 1000) / 10 : 0;
  return { windowMs, rows, missingSrcIp: missing, missingSrcIpPercent: percent, topShapes };
}
