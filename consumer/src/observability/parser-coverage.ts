/**
 * The worker half of the ParserCoverage channel. Every `tickMs` it drains the encoder's identity
 * counters into Prometheus (rows by vendor, rows missing each identity field); every `windowMs` it
 * INSERTs one small row per worker into the pipeline's `<table>_parser_stats` table, which the
 * operator reads to set the ParserCoverage condition. Why ClickHouse: the worker already holds a
 * connection there and the operator already reads it, the rows survive worker restarts and
 * rescheduling (a scrape of pod endpoints would lose a restarted pod's window and needs pod
 * addressing the operator otherwise does not have), and workers need no Kubernetes write access.
 * A failed INSERT keeps the window and retries on the next one; it never touches the data path.
 */
import { columnNames, PARSER_STATS_COLUMNS } from '../../../common/src/tables';
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import type { Logger } from '../../../common/src/log';
import { IDENTITY_FIELDS, type IdentitySnapshot, type IdentityStats } from '../encode/identity-stats';
import { quoteIdentifier } from '../../../common/src/sql/identifiers';
import type { WorkerMetrics } from './metrics';

/** Where and how often the stats rows go. */
export interface CoverageReporterOptions {
  url: string;
  username: string;
  password: string;
  database: string;
  /** The stats table; absent: Prometheus counters only. */
  table?: string;
  /** The worker's name in the stats rows (pod name). */
  worker: string;
  windowMs: number;
  tickMs?: number;
}

function emptyWindow(): IdentitySnapshot {
  return { rows: 0, byVendor: {}, missing: { src_ip: 0, dst_ip: 0, src_port: 0, dst_port: 0 }, shapes: {} };
}

function add(into: Record<string, number>, from: Record<string, number>, limit = Infinity): void {
  for (const [k, v] of Object.entries(from))
    if (k in into || Object.keys(into).length < limit) into[k] = (into[k] ?? 0) + v;
}

/** Periodic drain of IdentityStats into Prometheus and the stats table. */
export class CoverageReporter {
  private readonly client: ClickHouseClient;
  private timer: NodeJS.Timeout | undefined;
  private window = emptyWindow();
  private windowStart = Date.now();
  private sending: Promise<void> = Promise.resolve();

  /** Creates the client (no I/O yet). */
  constructor(
    private readonly stats: IdentityStats,
    private readonly metrics: WorkerMetrics,
    private readonly opts: CoverageReporterOptions,
    private readonly log: Logger,
  ) {
    this.client = createClient({
      url: opts.url,
      username: opts.username,
      password: opts.password,
      log: { level: ClickHouseLogLevel.OFF },
      request_timeout: 30_000,
    });
  }

  /** Starts the periodic drain. */
  start(): void {
    const tick = this.opts.tickMs ?? Math.min(15_000, this.opts.windowMs);
    this.timer = setInterval(() => this.tick(Date.now()), tick);
    this.timer.unref();
  }

  /** Drains the counters; sends the window when it is complete (also callable from tests). */
  tick(now: number): void {
    const s = this.stats.drain();
    for (const [vendor, n] of Object.entries(s.byVendor)) this.metrics.rowsByVendor.inc({ vendor }, n);
    for (const field of IDENTITY_FIELDS)
      if (s.missing[field] > 0) this.metrics.rowsMissingIdentity.inc({ field }, s.missing[field]);
    const w = this.window;
    w.rows += s.rows;
    add(w.byVendor, s.byVendor);
    for (const field of IDENTITY_FIELDS) w.missing[field] += s.missing[field];
    add(w.shapes, s.shapes, 256);
    if (now - this.windowStart >= this.opts.windowMs) this.sending = this.sending.then(() => this.send(now));
  }

  private async send(now: number): Promise<void> {
    const w = this.window;
    if (w.rows === 0 || this.opts.table === undefined) {
      this.window = emptyWindow();
      this.windowStart = now;
      return;
    }
    const top = Object.entries(w.shapes)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 20);
    try {
      await this.client.insert({
        table: `${quoteIdentifier(this.opts.database)}.${quoteIdentifier(this.opts.table)}`,
        columns: columnNames(PARSER_STATS_COLUMNS) as [string, ...string[]],
        values: [
          {
            window_start: new Date(this.windowStart).toISOString(),
            window_end: new Date(now).toISOString(),
            worker: this.opts.worker,
            rows: w.rows,
            missing_src_ip: w.missing.src_ip,
            missing_dst_ip: w.missing.dst_ip,
            by_vendor: w.byVendor,
            shapes: Object.fromEntries(top),
          },
        ],
        format: 'JSONEachRow',
        clickhouse_settings: { date_time_input_format: 'best_effort' },
      });
      this.window = emptyWindow();
      this.windowStart = now;
    } catch (err) {
      // Kept and merged into the next window; the data path is unaffected.
      this.log.warn('parser coverage stats not stored; retrying with the next window', {
        err: (err as Error).message,
      });
    }
  }

  /** Sends what is left and closes the client. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.tick(Date.now() + this.opts.windowMs);
    await this.sending;
    await this.client.close().catch(() => undefined);
  }
}
