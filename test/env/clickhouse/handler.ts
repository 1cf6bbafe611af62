/**
 * One HTTP request against the engine: health endpoints, authentication, the statement/data
 * split, per-request settings and database on the request's own connection, then either a
 * query (streamed block by block when possible) or an INSERT (streamed in bounded chunks).
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Engine, EngineConnection } from './engine';
import { formatErrorText, formatStreamException, serverError, toServerError } from './errors';
import {
  buildSetStatement,
  credentialsOf,
  quoteIdentifier,
  quoteLiteral,
  splitParams,
  type Credentials,
  type RequestParams,
} from './http-params';
import { runInsert } from './insert';
import {
  chooseEncoding,
  discardBody,
  openBody,
  queryHeaders,
  sendError,
  sendText,
  writeChunk,
  type ResponseMeta,
} from './respond';
import type { SessionRegistry } from './sessions';
import { isStreamable } from './sql-scan';
import { requestBody } from './request-body';
import { readStatement, type Statement } from './statement';

/** What every request needs from the server. */
export interface ServerContext {
  engine: Engine;
  sessions: SessionRegistry;
  version: string;
  timezone: string;
  displayName: string;
  user: string;
  password: string;
  log(line: string): void;
}

/** Handles one request to completion (never throws: failures become ClickHouse error responses). */
export async function handleRequest(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname === '/ping' || url.pathname === '/replicas_status') return sendText(res, 200, 'Ok.\n');
  if (url.pathname !== '/') return sendText(res, 404, `There is no handle ${url.pathname}\n`);
  if (req.method === 'GET' && !url.searchParams.has('query')) return sendText(res, 200, 'Ok.\n');
  const params = splitParams(url.searchParams, req.headers);
  const meta: ResponseMeta = {
    queryId: params.queryId || randomUUID(),
    format: params.defaultFormat ?? 'TabSeparated',
    version: ctx.version,
    timezone: ctx.timezone,
    displayName: ctx.displayName,
  };
  try {
    if (req.method !== 'GET' && req.method !== 'POST')
      throw serverError('UNSUPPORTED_METHOD', `HTTP method ${req.method} is not supported`);
    authenticate(ctx, credentialsOf(url.searchParams, req.headers));
    const decompress = url.searchParams.get('decompress') === '1';
    const stmt = await readStatement(params.query, requestBody(req, decompress));
    checkStatement(stmt);
    const settings = { ...params.settings };
    if (stmt.scan.insert) delete settings.insert_deduplication_token; // runInsert sets it per chunk
    await withConnection(ctx, params, settings, req.method === 'GET', (conn) =>
      run(ctx, req, res, conn, params, stmt, meta),
    );
  } catch (err) {
    const error = toServerError(err);
    ctx.log(`query ${meta.queryId} failed: ${error.code} ${error.type}: ${error.message.slice(0, 500)}`);
    discardBody(req);
    sendError(res, error, meta);
  }
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function authenticate(ctx: ServerContext, creds: Credentials): void {
  if (sameText(creds.user, ctx.user) && sameText(creds.password, ctx.password)) return;
  throw serverError(
    'AUTHENTICATION_FAILED',
    `${creds.user}: Authentication failed: password is incorrect, or there is no user with such name`,
  );
}

function checkStatement(stmt: Statement): void {
  if (stmt.scan.multiStatement)
    throw serverError('SYNTAX_ERROR', 'Syntax error: Multi-statements are not allowed');
  if (stmt.scan.keyword === '' && stmt.text.trim() === '') throw serverError('SYNTAX_ERROR', 'Empty query');
}

/**
 * Runs `fn` on the request's connection with `settings` applied: a fresh connection (discarded
 * afterwards, so settings cannot leak; GET makes it readonly=2 like the server) or the HTTP
 * session's (settings and database restored afterwards).
 */
async function withConnection(
  ctx: ServerContext,
  params: RequestParams,
  settings: Record<string, string>,
  readonly: boolean,
  fn: (conn: EngineConnection) => Promise<void>,
): Promise<void> {
  const { sessionId } = params;
  if (sessionId === undefined) {
    if (readonly && settings.readonly === undefined) settings.readonly = '2';
    const conn = ctx.engine.connect();
    try {
      await prepare(conn, settings, params.database);
      await fn(conn);
    } finally {
      conn.close();
    }
    return;
  }
  const conn = await ctx.sessions.acquire(sessionId, params.sessionTimeoutSec, params.sessionCheck);
  try {
    const restore = await snapshot(conn, Object.keys(settings), params.database !== undefined);
    try {
      await prepare(conn, settings, params.database);
      await fn(conn);
    } finally {
      await restore();
    }
  } finally {
    ctx.sessions.release(sessionId, params.closeSession);
  }
}

async function prepare(
  conn: EngineConnection,
  settings: Record<string, string>,
  database: string | undefined,
): Promise<void> {
  const set = buildSetStatement(settings);
  if (set) await conn.execute(set, 'TabSeparated');
  if (database) await conn.execute(`USE ${quoteIdentifier(database)}`, 'TabSeparated');
}

/** Captures session state a request may change, returning the function that puts it back. */
async function snapshot(
  conn: EngineConnection,
  names: string[],
  database: boolean,
): Promise<() => Promise<void>> {
  const saved: { name: string; value: string; changed: number }[] = [];
  if (names.length > 0) {
    const list = names.map((n) => `'${n.replace(/[^A-Za-z0-9_]/g, '')}'`).join(', ');
    const out = await conn.execute(
      `SELECT name, value, changed FROM system.settings WHERE name IN (${list})`,
      'JSONEachRow',
    );
    for (const line of out.bytes.toString('utf8').split('\n')) if (line) saved.push(JSON.parse(line));
  }
  const previousDb = database
    ? (await conn.execute('SELECT currentDatabase()', 'TabSeparatedRaw')).bytes.toString('utf8').trim()
    : undefined;
  return async () => {
    const parts = saved.map((s) => `${s.name} = ${s.changed ? quoteLiteral(s.value) : 'DEFAULT'}`);
    if (parts.length > 0) await conn.execute(`SET ${parts.join(', ')}`, 'TabSeparated');
    if (previousDb) await conn.execute(`USE ${quoteIdentifier(previousDb)}`, 'TabSeparated');
  };
}

async function run(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  conn: EngineConnection,
  params: RequestParams,
  stmt: Statement,
  meta: ResponseMeta,
): Promise<void> {
  if (stmt.scan.insert && stmt.data) {
    const summary = await runInsert(
      conn,
      stmt.text,
      stmt.scan.insert.format,
      stmt.data,
      params.settings.insert_deduplication_token,
    );
    res.writeHead(200, queryHeaders(meta, summary));
    res.end();
    return;
  }
  meta.format = stmt.scan.outputFormat ?? meta.format;
  const encoding = chooseEncoding(params.settings, req.headers['accept-encoding']);
  const level = Number(params.settings.http_zlib_compression_level ?? NaN);
  const hasParams = Object.keys(params.queryParams).length > 0;
  if (isStreamable(stmt.scan.keyword) && !params.waitEndOfQuery && !hasParams) {
    await streamQuery(ctx, res, conn, stmt.text, meta, encoding, level);
    return;
  }
  const out = await conn.execute(stmt.text, meta.format, params.queryParams);
  const summary = {
    readRows: out.rowsRead,
    readBytes: out.bytesRead,
    resultBytes: out.bytes.length,
    elapsedNs: out.elapsedNs,
  };
  const body = openBody(res, queryHeaders(meta, summary), encoding, level);
  body.end(out.bytes);
}

/**
 * Streams a SELECT: the first block is fetched before the headers go out, so planning errors get
 * a proper error status; a later failure is reported in-stream with the exception tag.
 */
async function streamQuery(
  ctx: ServerContext,
  res: ServerResponse,
  conn: EngineConnection,
  sql: string,
  meta: ResponseMeta,
  encoding: string | undefined,
  level: number,
): Promise<void> {
  const blocks = conn.stream(sql, meta.format);
  const first = await blocks.next();
  const tag = randomBytes(8).toString('hex');
  const out = openBody(
    res,
    { ...queryHeaders(meta, {}), 'X-ClickHouse-Exception-Tag': tag },
    encoding,
    level,
  );
  try {
    if (!first.done) await writeChunk(out, first.value);
    for (let next = await blocks.next(); !next.done; next = await blocks.next())
      await writeChunk(out, next.value);
  } catch (err) {
    await blocks.return(undefined);
    if (out.destroyed || res.destroyed) return;
    const error = toServerError(err);
    ctx.log(`query ${meta.queryId} failed mid-stream: ${error.code} ${error.type}`);
    out.write(formatStreamException(formatErrorText(error, meta.version), tag));
  }
  out.end();
}
