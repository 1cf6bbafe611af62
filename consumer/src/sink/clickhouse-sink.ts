/**
 * The worker's ClickHouse connection: INSERTs of pre-encoded RowBinary or TabSeparated bodies over
 * keep-alive HTTP with @clickhouse/client. The body goes out as the encoder's bytes (a raw,
 * non-object-mode stream the client passes through untouched), with the batch's
 * `insert_deduplication_token`. The client's insert() accepts only text raw formats, so RowBinary
 * goes through exec() with the statement (`INSERT ... FORMAT RowBinary`) in the query parameter.
 * Identifiers come from the config and are validated and quoted here, never concatenated raw.
 */
import { quoteIdentifier } from '../../../common/src/sql/identifiers';
import { Readable } from 'node:stream';
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import type { InsertFormat } from '../encode/batch-io';

/** Connection and target of the sink. */
export interface ClickHouseSinkOptions {
  url: string;
  username: string;
  password: string;
  database: string;
  /** Data table and its INSERT column list (the encoder's plan.names). */
  table: string;
  columns: readonly string[];
  /** Dead-letter table (`<table>_dlq` contract) or undefined. */
  deadLetterTable?: string;
  deadLetterColumns?: readonly string[];
  /** Concurrent INSERTs (sockets kept alive). */
  maxOpenConnections: number;
  requestTimeoutMs: number;
}

/** Where an INSERT goes. */
export type InsertTarget = 'data' | 'deadLetter';

/** What the server reported for an INSERT. */
export interface InsertReport {
  /** Rows the server wrote; 0 for a deduplicated retry. Undefined when not reported. */
  writtenRows?: number;
}

/** A readable stream that yields `body` once, in raw (non-object) mode. */
function bodyStream(body: Buffer): Readable {
  let sent = false;
  return new Readable({
    read() {
      if (!sent) {
        sent = true;
        this.push(body);
      }
      this.push(null);
    },
  });
}

/** Inserts encoded batches and probes reachability. */
export class ClickHouseSink {
  private readonly client: ClickHouseClient;
  private readonly targets: Record<InsertTarget, { table: string; columns: string[] } | undefined>;

  /** Validates identifiers and creates the pooled client (no I/O yet). */
  constructor(opts: ClickHouseSinkOptions) {
    const db = quoteIdentifier(opts.database);
    this.targets = {
      data: {
        table: `${db}.${quoteIdentifier(opts.table)}`,
        columns: opts.columns.map((c) => quoteIdentifier(c, 'column')),
      },
      deadLetter: opts.deadLetterTable
        ? {
            table: `${db}.${quoteIdentifier(opts.deadLetterTable)}`,
            columns: (opts.deadLetterColumns ?? []).map((c) => quoteIdentifier(c, 'column')),
          }
        : undefined,
    };
    this.client = createClient({
      url: opts.url,
      username: opts.username,
      password: opts.password,
      max_open_connections: opts.maxOpenConnections,
      request_timeout: opts.requestTimeoutMs,
      keep_alive: { enabled: true },
      // Errors are classified and logged by the worker; the client's own logging would be per request.
      log: { level: ClickHouseLogLevel.OFF },
    });
  }

  /** True when a dead-letter table is configured. */
  hasDeadLetterTable(): boolean {
    return this.targets.deadLetter !== undefined;
  }

  /** INSERTs `body` (rows in `format`) into `target` with the deduplication `token`. */
  async insert(
    target: InsertTarget,
    body: Buffer,
    token: string,
    signal?: AbortSignal,
    format: InsertFormat = 'TabSeparated',
  ): Promise<InsertReport> {
    const t = this.targets[target];
    if (!t) throw new Error(`no ${target} table configured`);
    // Synchronous inserts whatever the user profile says: the token's semantics (and "acknowledged
    // means durable") hold for synchronous inserts; views fed by the table deduplicate too.
    const settings = {
      insert_deduplication_token: token,
      insert_deduplicate: 1,
      async_insert: 0,
      deduplicate_blocks_in_dependent_materialized_views: 1,
    } as const;
    if (format === 'RowBinary') return this.insertBinary(t, body, signal, settings);
    const result = await this.client.insert({
      table: t.table,
      columns: t.columns.length > 0 ? (t.columns as [string, ...string[]]) : undefined,
      values: bodyStream(body),
      format: 'TabSeparated',
      abort_signal: signal,
      clickhouse_settings: settings,
    });
    const written = result.summary?.written_rows;
    return { writtenRows: written === undefined ? undefined : Number(written) };
  }

  /** `INSERT INTO t (cols) FORMAT RowBinary` with the body as the request data. */
  private async insertBinary(
    t: { table: string; columns: string[] },
    body: Buffer,
    signal: AbortSignal | undefined,
    settings: Record<string, string | number>,
  ): Promise<InsertReport> {
    const columns = t.columns.length > 0 ? ` (${t.columns.join(', ')})` : '';
    const result = await this.client.exec({
      query: `INSERT INTO ${t.table}${columns} FORMAT RowBinary`,
      values: bodyStream(body),
      abort_signal: signal,
      clickhouse_settings: settings,
    });
    // The response body is empty for an INSERT; drain it so the keep-alive socket is reused.
    result.stream.resume();
    await new Promise<void>((resolve) => {
      result.stream.once('end', resolve);
      result.stream.once('close', resolve);
      result.stream.once('error', () => resolve());
    });
    const written = result.summary?.written_rows;
    return { writtenRows: written === undefined ? undefined : Number(written) };
  }

  /** True when the server answers a trivial query with these credentials. */
  async reachable(): Promise<boolean> {
    try {
      const r = await this.client.ping({ select: true });
      return r.success;
    } catch {
      return false;
    }
  }

  /** Closes pooled sockets. */
  async close(): Promise<void> {
    await this.client.close();
  }
}
