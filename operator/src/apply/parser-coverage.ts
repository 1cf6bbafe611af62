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

/** Runs one read query with parameters and returns its rows (a fake in unit tests). */
export type CoverageExecutor = <T>(query: string, params: Record<string, unknown>) => Promise<T[]>;

type CoverageRow = { i: number | string; rows: string; missing: string; shapes: Record<string, string> };

/** Most coverage tables one batched query reads. */
const BATCH = 100;

/**
 * Parser coverage of every pipeline on one server, read in one `UNION ALL` query per round (chunks
 * of 100 tables) instead of one query per pipeline and reconcile, and reused for `maxAgeMs`
 * (the window it sums is minutes long). A failing batch (a table not created yet) falls back to
 * one query per table, so one pipeline's problem never hides another's coverage.
 */
export class CoverageReader {
  private readonly cache = new Map<string, { at: number; value: ParserCoverage }>();
  private waiting: Array<{ spec: ResolvedSpec; resolve: (c: ParserCoverage | undefined) => void }> = [];
  private timer?: ReturnType<typeof setTimeout>;
  private queries = 0;
  private readonly maxAgeMs: number;
  private readonly gatherMs: number;
  private readonly now: () => number;

  constructor(
    private readonly run: CoverageExecutor,
    opts: { maxAgeMs?: number; gatherMs?: number; now?: () => number } = {},
  ) {
    this.maxAgeMs = opts.maxAgeMs ?? 30_000;
    this.gatherMs = opts.gatherMs ?? 5;
    this.now = opts.now ?? Date.now;
  }

  /** Queries sent so far. */
  queryCount(): number {
    return this.queries;
  }

  /** The coverage of `spec`'s last window; undefined when it cannot be read (never throws). */
  read(spec: ResolvedSpec): Promise<ParserCoverage | undefined> {
    const hit = this.cache.get(coverageKey(spec));
    if (hit && this.now() - hit.at < this.maxAgeMs) return Promise.resolve(hit.value);
    return new Promise((resolve) => {
      this.waiting.push({ spec, resolve });
      this.timer ??= setTimeout(() => void this.flush(), this.gatherMs);
    });
  }

  private async flush(): Promise<void> {
    this.timer = undefined;
    const batch = this.waiting;
    this.waiting = [];
    const specs = [...new Map(batch.map((w) => [coverageKey(w.spec), w.spec])).values()];
    const at = this.now();
    const results = new Map<string, ParserCoverage | undefined>();
    for (let i = 0; i < specs.length; i += BATCH) {
      const chunk = specs.slice(i, i + BATCH);
      for (const [k, v] of await this.readChunk(chunk)) results.set(k, v);
    }
    for (const [k, v] of results) if (v) this.cache.set(k, { at, value: v });
    for (const w of batch) w.resolve(results.get(coverageKey(w.spec)));
  }

  private async readChunk(specs: ResolvedSpec[]): Promise<Map<string, ParserCoverage | undefined>> {
    const out = new Map<string, ParserCoverage | undefined>();
    try {
      const rows = await this.query(buildBatchedCoverageQuery(specs), batchParams(specs));
      for (const r of rows) {
        const spec = specs[Number(r.i)];
        if (spec) out.set(coverageKey(spec), toCoverage(spec, r));
      }
      return out;
    } catch {
      for (const spec of specs) {
        const rows = await this.query(buildBatchedCoverageQuery([spec]), batchParams([spec])).catch(() => []);
        out.set(coverageKey(spec), rows[0] ? toCoverage(spec, rows[0]) : undefined);
      }
      return out;
    }
  }

  private query(sql: string, params: Record<string, unknown>): Promise<CoverageRow[]> {
    this.queries++;
    return this.run<CoverageRow>(sql, params);
  }
}

function coverageKey(spec: ResolvedSpec): string {
  return `${spec.clickhouse.database}.${spec.coverage.table}|${spec.coverage.windowMs}`;
}

function toCoverage(spec: ResolvedSpec, r: CoverageRow): ParserCoverage {
  return coverageOf(spec.coverage.windowMs, Number(r.rows ?? 0), Number(r.missing ?? 0), r.shapes ?? {});
}

function batchParams(specs: ResolvedSpec[]): Record<string, unknown> {
  return Object.fromEntries(specs.map((s, i) => [`w${i}`, s.coverage.windowMs]));
}

/** One query over several coverage tables, branch `i` tagged with its index (pure). */
export function buildBatchedCoverageQuery(specs: ResolvedSpec[]): string {
  return specs
    .map((spec, i) => {
      const table = qualifiedName(spec.clickhouse.database, spec.coverage.table);
      return (
        `SELECT ${i} AS i, sum(rows) AS rows, sum(missing_src_ip) AS missing, sumMap(shapes) AS shapes FROM ${table} ` +
        `WHERE window_end >= now64(3) - toIntervalMillisecond({w${i}:UInt64})`
      );
    })
    .join(' UNION ALL ');
}
