/**
 * The request side of ClickHouse's HTTP interface, as pure functions: which URL parameters are
 * protocol parameters and which are per-query settings, where credentials come from, and how
 * settings become one `SET` statement for the request's own engine connection.
 */
import { serverError } from './errors';

/** Everything a request says besides its SQL text and data. */
export interface RequestParams {
  query?: string;
  database?: string;
  defaultFormat?: string;
  queryId?: string;
  sessionId?: string;
  sessionTimeoutSec?: number;
  sessionCheck: boolean;
  closeSession: boolean;
  waitEndOfQuery: boolean;
  /** Per-query settings (values as sent; the engine parses them like the server does). */
  settings: Record<string, string>;
  /** `param_<name>` values for `{name:Type}` placeholders, in ClickHouse's escaped text form. */
  queryParams: Record<string, string>;
}

/** URL parameters the server consumes itself; every other parameter is a setting. */
export const PROTOCOL_PARAMS: ReadonlySet<string> = new Set([
  'query',
  'database',
  'default_format',
  'query_id',
  'session_id',
  'session_timeout',
  'session_check',
  'close_session',
  'user',
  'password',
  'quota_key',
  'compress',
  'decompress',
  'stacktrace',
  'role',
  'buffer_size',
  'wait_end_of_query',
  'client_protocol_version',
  '_',
]);

const SETTING_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Splits URL parameters into protocol parameters, query parameters and settings. */
export function splitParams(
  search: URLSearchParams,
  headers: Record<string, string | string[] | undefined> = {},
): RequestParams {
  const settings: Record<string, string> = {};
  const queryParams: Record<string, string> = {};
  for (const [key, value] of search) {
    if (key.startsWith('param_')) queryParams[key.slice('param_'.length)] = value;
    else if (!PROTOCOL_PARAMS.has(key)) settings[key] = value;
  }
  const timeout = search.get('session_timeout');
  return {
    query: search.get('query') ?? undefined,
    database: search.get('database') ?? header(headers, 'x-clickhouse-database'),
    defaultFormat: search.get('default_format') ?? header(headers, 'x-clickhouse-format'),
    queryId: search.get('query_id') ?? undefined,
    sessionId: search.get('session_id') ?? undefined,
    sessionTimeoutSec: timeout === null ? undefined : Number(timeout),
    sessionCheck: isTrue(search.get('session_check')),
    closeSession: isTrue(search.get('close_session')),
    waitEndOfQuery:
      isTrue(search.get('wait_end_of_query')) || isTrue(settings.http_wait_end_of_query ?? null),
    settings,
    queryParams,
  };
}

function isTrue(value: string | null): boolean {
  return value !== null && value !== '0' && value.toLowerCase() !== 'false' && value !== '';
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Who the request claims to be. */
export interface Credentials {
  user: string;
  password: string;
}

/**
 * Credentials from, in ClickHouse's order of precedence, the Authorization Basic header, the
 * X-ClickHouse-User/-Key headers or the user/password URL parameters; `default` with an empty
 * password when none is given.
 */
export function credentialsOf(
  search: URLSearchParams,
  headers: Record<string, string | string[] | undefined>,
): Credentials {
  const auth = header(headers, 'authorization');
  if (auth && /^basic /i.test(auth)) {
    const decoded = Buffer.from(auth.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon < 0
      ? { user: decoded, password: '' }
      : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  const headerUser = header(headers, 'x-clickhouse-user');
  if (headerUser !== undefined)
    return { user: headerUser, password: header(headers, 'x-clickhouse-key') ?? '' };
  return { user: search.get('user') ?? 'default', password: search.get('password') ?? '' };
}

/** Quotes a value as a ClickHouse string literal (settings accept strings for every type). */
export function quoteLiteral(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * One `SET a = '1', b = 'x'` statement for `settings` (undefined when there are none); names are
 * validated so nothing from the URL reaches the SQL text unquoted. `readonly` goes last because
 * once it is set the remaining assignments would be checked against it.
 */
export function buildSetStatement(settings: Record<string, string>): string | undefined {
  const names = Object.keys(settings).sort((a, b) => Number(a === 'readonly') - Number(b === 'readonly'));
  if (names.length === 0) return undefined;
  const parts = names.map((name) => {
    if (!SETTING_NAME.test(name))
      throw serverError('UNKNOWN_SETTING', `Unknown setting '${name.slice(0, 64)}'`);
    return `${name} = ${quoteLiteral(settings[name])}`;
  });
  return `SET ${parts.join(', ')}`;
}

/** A database name as a quoted identifier for `USE`. */
export function quoteIdentifier(name: string): string {
  return `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}
