/**
 * The ClickHouse engine (chdb, in-process) behind the test-bed HTTP server. Every request gets a
 * connection of its own to the same data directory: connections share the engine and its data
 * but each carries its own settings and current database, so `SET` for one request never leaks
 * into another, and queries on different connections run in parallel on libuv threads.
 *
 * Two operations go to the native addon directly because the public wrappers cannot express
 * them: an INSERT whose header is the client's own SQL (any format, quoted names, column lists)
 * with a raw byte payload, and `{name:Type}` parameters passed in ClickHouse's escaped text form
 * exactly as they arrive in `param_*` URL parameters (the wrapper would escape them again).
 */
import path from 'node:path';
import { drainPending, Session } from 'chdb';

interface RawQueryResult {
  bytes: Uint8Array;
  elapsed: number;
  rowsRead: number;
  bytesRead: number;
}

interface RawInsertResult {
  elapsed: number;
  rowsWritten: number;
  bytesWritten: number;
}

interface NativeAddon {
  QueryAsyncConnection(
    conn: unknown,
    sql: string,
    format: string,
    params?: Record<string, string>,
  ): Promise<RawQueryResult>;
  InsertRawAsyncConnection(
    conn: unknown,
    prefix: string,
    data: Buffer,
    countLines: boolean,
  ): Promise<RawInsertResult>;
}

function loadAddon(): NativeAddon {
  // The package's exports map hides its loader, so resolve it next to the package entry point.
  const loaderPath = path.join(path.dirname(require.resolve('chdb')), 'dist', 'loader.js');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const loader = require(loaderPath) as { loadNative(): NativeAddon };
  return loader.loadNative();
}

const addon = loadAddon();

// Parameter binding state in libchdb is not isolated per connection: two parameterised queries
// running at once clobber each other's values, so they take turns.
let paramQueue: Promise<unknown> = Promise.resolve();

/** Output of a query executed in one call. */
export interface QueryOutput {
  bytes: Buffer;
  rowsRead: number;
  bytesRead: number;
  elapsedNs: number;
}

/** Engine-side ledger of one INSERT. */
export interface InsertOutput {
  rowsWritten: number;
  bytesWritten: number;
  elapsedNs: number;
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** One engine connection, used by one request (or one HTTP session) at a time. */
export class EngineConnection {
  private readonly session: Session;

  /** Opens a connection to the engine already bound to `dataDir`. */
  constructor(
    dataDir: string,
    private readonly onClose: (conn: EngineConnection) => void,
  ) {
    this.session = new Session(dataDir);
  }

  /** Runs `sql` to completion; `format` applies unless the SQL has its own FORMAT clause. */
  async execute(sql: string, format: string, params?: Record<string, string>): Promise<QueryOutput> {
    const bound = params && Object.keys(params).length > 0 ? params : undefined;
    const conn = this.session.connection;
    const run = () =>
      bound
        ? addon.QueryAsyncConnection(conn, sql, format, bound)
        : addon.QueryAsyncConnection(conn, sql, format);
    let raw: RawQueryResult;
    if (bound) {
      const turn = paramQueue.then(run, run);
      paramQueue = turn.catch(() => undefined);
      raw = await turn;
    } else {
      raw = await run();
    }
    return {
      bytes: toBuffer(raw.bytes),
      rowsRead: raw.rowsRead,
      bytesRead: raw.bytesRead,
      elapsedNs: Math.round(raw.elapsed * 1e9),
    };
  }

  /** Streams a SELECT's output block by block; stopping the iteration cancels the query. */
  async *stream(sql: string, format: string): AsyncGenerator<Buffer> {
    for await (const chunk of this.session.queryStream(sql, { format })) {
      yield toBuffer(chunk.raw());
    }
  }

  /** Inserts `data` under the client's INSERT header (`INSERT INTO … FORMAT X` or `… VALUES`). */
  async insert(header: string, data: Buffer): Promise<InsertOutput> {
    const raw = await addon.InsertRawAsyncConnection(this.session.connection, header, data, false);
    return {
      rowsWritten: raw.rowsWritten,
      bytesWritten: raw.bytesWritten,
      elapsedNs: Math.round(raw.elapsed * 1e9),
    };
  }

  /** Releases the connection (only call once nothing runs on it). */
  close(): void {
    this.session.close();
    this.onClose(this);
  }
}

/** The engine bound to one data directory for the life of the process. */
export class Engine {
  private readonly base: Session;
  private readonly open = new Set<EngineConnection>();

  /** Starts the engine on `dataDir` with the XML `configFile` (disks, storage policies, …). */
  constructor(
    private readonly dataDir: string,
    configFile: string,
  ) {
    this.base = new Session(dataDir, {
      connectionArgs: [
        `--config-file=${configFile}`,
        '--async_load_databases=0',
        '--async_load_system_database=0',
      ],
    });
  }

  /** Engine version and server time zone, for the response headers. */
  async describe(): Promise<{ version: string; timezone: string }> {
    const out = await this.base.queryAsync('SELECT version(), timezone()', { format: 'TabSeparated' });
    const [version, timezone] = out.text().trim().split('\t');
    return { version, timezone };
  }

  /** A fresh connection with default settings and the `default` database. */
  connect(): EngineConnection {
    const conn = new EngineConnection(this.dataDir, (c) => this.open.delete(c));
    this.open.add(conn);
    return conn;
  }

  /** Number of connections currently open (requests and HTTP sessions). */
  get openConnections(): number {
    return this.open.size;
  }

  /** Closes every connection and waits until the engine has no native work left. */
  async close(): Promise<void> {
    await drainPending();
    for (const conn of [...this.open]) conn.close();
    this.base.close();
    await drainPending();
  }
}
