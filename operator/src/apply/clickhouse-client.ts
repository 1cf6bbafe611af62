/**
 * The operator's ClickHouse connection (HTTP, @clickhouse/client) and the error type appliers throw
 * for conditions worth a retry with backoff: the server unreachable, authentication refused, or a
 * statement failing on the server. The server's own message is kept; credentials never appear.
 */
import { countClickHouseRequest } from './request-counts';
import { backendLimits, InFlightLimiter } from './in-flight';
import {
  ClickHouseError,
  ClickHouseLogLevel,
  createClient,
  type ClickHouseClient,
  type ClickHouseSettings,
} from '@clickhouse/client';

/** A failure an applier cannot turn into an outcome; `reason` is a one-word CamelCase condition reason. */
export class ClickHouseApplyError extends Error {
  constructor(
    readonly reason: 'ClickHouseUnreachable' | 'ClickHouseAuthFailed' | 'ClickHouseError',
    message: string,
    /** The server's error code, when the server answered. */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ClickHouseApplyError';
  }
}

/** Connection settings for the operator's client (values from the pipeline's Secrets). */
export interface ClickHouseConnection {
  url: string;
  username?: string;
  password?: string;
  /** Per-request timeout; DDL ON CLUSTER may need more than the default 30 s. */
  requestTimeoutMs?: number;
}

/** Creates a client; it connects lazily, so creating one never fails for an unreachable server. */
export function createClickHouseClient(conn: ClickHouseConnection): ClickHouseClient {
  return countedClient(
    conn.url,
    createClient({
      url: conn.url,
      username: conn.username ?? 'default',
      password: conn.password ?? '',
      request_timeout: conn.requestTimeoutMs ?? 30_000,
      application: 'logpipeline-operator',
      // DDL answers only after it finished, so a failure reaches us as an error instead of a 200.
      clickhouse_settings: { wait_end_of_query: 1 },
      // Failures reach the caller as ClickHouseApplyError/outcomes; the client's own logger would dump
      // request internals to stderr on every expected failure.
      log: { level: ClickHouseLogLevel.OFF },
    }),
  );
}

/** DDL in flight per ClickHouse server (apply/in-flight.ts): concurrent reconciles must not pile it up. */
const ddlInFlight = new InFlightLimiter(() => backendLimits().clickhouseDdl);

/** Counts every request the client sends (observability/requests.ts); limits commands per server. */
function countedClient(server: string, client: ClickHouseClient): ClickHouseClient {
  const query = client.query.bind(client);
  const command = client.command.bind(client);
  const ping = client.ping.bind(client);
  client.query = ((p: { query: string }) => {
    countClickHouseRequest(p.query);
    return query(p as never);
  }) as typeof client.query;
  client.command = ((p: { query: string }) => {
    countClickHouseRequest(p.query);
    return ddlInFlight.run(server, () => command(p as never));
  }) as typeof client.command;
  client.ping = ((p?: unknown) => {
    countClickHouseRequest('PING');
    return ping(p as never);
  }) as typeof client.ping;
  return client;
}

// Auth failures: AUTHENTICATION_FAILED, REQUIRED_PASSWORD, UNKNOWN_USER, WRONG_PASSWORD.
const AUTH_CODES = new Set(['516', '194', '192', '193']);

/** Wraps any client failure into a ClickHouseApplyError that names what we were doing. */
export function toClickHouseApplyError(err: unknown, doing: string): ClickHouseApplyError {
  if (err instanceof ClickHouseApplyError) return err;
  if (err instanceof ClickHouseError) {
    const reason = AUTH_CODES.has(err.code) ? 'ClickHouseAuthFailed' : 'ClickHouseError';
    return new ClickHouseApplyError(
      reason,
      `${doing}: ClickHouse error ${err.code}: ${err.message}`,
      err.code,
    );
  }
  const message = err instanceof Error ? err.message : String(err);
  return new ClickHouseApplyError('ClickHouseUnreachable', `${doing}: ${message}`);
}

/** Runs a read query with bound parameters and returns its rows. */
export async function queryRows<T>(
  client: ClickHouseClient,
  query: string,
  params: Record<string, unknown> = {},
): Promise<T[]> {
  try {
    const rs = await client.query({ query, format: 'JSONEachRow', query_params: params });
    return await rs.json<T>();
  } catch (err) {
    throw toClickHouseApplyError(err, `query failed (${query.split('\n')[0].slice(0, 80)})`);
  }
}

/** Runs a statement (DDL/ALTER) with optional query-level settings; `signal` cancels it in flight. */
const statementCounts = new Map<string, number>();

/**
 * Statements sent by this process, by kind (CREATE TABLE, ALTER USER, GRANT, DROP ROLE, …): the
 * operator exports them as logpipeline_operator_clickhouse_statements_total, and tests use them to
 * prove that a steady pipeline sends none.
 */
export function clickhouseStatementCounts(): ReadonlyMap<string, number> {
  return statementCounts;
}

/**
 * The statement's kind, upper-cased (the counter's label): the leading keyword, with the object
 * kind for CREATE/ALTER/DROP (`CREATE TABLE`, `ALTER USER`, `DROP ROLE`, …).
 */
export function statementKind(sql: string): string {
  const m = /^\s*([A-Za-z]+)(?:\s+([A-Za-z]+))?/.exec(sql);
  if (!m) return 'OTHER';
  const first = m[1].toUpperCase();
  return ['CREATE', 'ALTER', 'DROP'].includes(first) && m[2] ? `${first} ${m[2].toUpperCase()}` : first;
}

/** A statement's first line for messages, with password hashes (`BY '…'`) masked. */
export function statementSummary(sql: string): string {
  return sql
    .split('\n')[0]
    .replace(/\bBY '[^']*'/gi, "BY '***'")
    .slice(0, 120);
}

/** Runs a statement (DDL/ALTER/GRANT) with optional query-level settings; counted by kind. */
export async function runStatement(
  client: ClickHouseClient,
  sql: string,
  settings?: Record<string, string>,
  signal?: AbortSignal,
): Promise<void> {
  // The client sends a request even with an already aborted signal: check it ourselves.
  if (signal?.aborted)
    throw new ClickHouseApplyError(
      'ClickHouseError',
      `statement cancelled, not sent (${sql.split('\n')[0].slice(0, 120)})`,
    );
  const kind = statementKind(sql);
  statementCounts.set(kind, (statementCounts.get(kind) ?? 0) + 1);
  try {
    await client.command({
      query: sql,
      clickhouse_settings: settings as ClickHouseSettings | undefined,
      abort_signal: signal,
    });
  } catch (err) {
    throw toClickHouseApplyError(err, `statement failed (${statementSummary(sql)})`);
  }
}
