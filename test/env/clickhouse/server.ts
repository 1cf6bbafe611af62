/**
 * The test bed's ClickHouse server: ClickHouse's HTTP interface served on top of the real
 * ClickHouse engine (chdb, in-process), so the operator and workers talk to it with
 * @clickhouse/client over HTTP exactly as in production.
 *
 *   node dist/test/env/clickhouse/server.js --port N --data DIR --config FILE --user U [--password P]
 *
 * The password may instead come from the environment variable LP_CLICKHOUSE_SERVER_PASSWORD,
 * which keeps it out of process listings and the supervisor's log. SIGTERM/SIGINT stop accepting
 * requests, let running ones finish (up to 10 s), close every engine connection and exit 0.
 */
import fs from 'node:fs';
import http from 'node:http';
import { PASSWORD_ENV, PASSWORD_FILE_ENV } from './config';
import { Engine } from './engine';
import { handleRequest, type ServerContext } from './handler';
import { SessionRegistry } from './sessions';

/** Command-line options of the server. */
export interface ServerArgs {
  port: number;
  host: string;
  data: string;
  config: string;
  user: string;
  password: string;
}

/** Parses `--name value` options; throws a usage message when a required one is missing. */
export function parseArgs(argv: string[], env: NodeJS.ProcessEnv): ServerArgs {
  const opts: Record<string, string> = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith('--') || argv[i + 1] === undefined) throw new Error(`bad argument '${argv[i]}'`);
    opts[argv[i].slice(2)] = argv[i + 1];
  }
  for (const required of ['port', 'data', 'config']) {
    if (!opts[required])
      throw new Error(
        `usage: server.js --port N --data DIR --config FILE [--user U] [--password P] (missing --${required})`,
      );
  }
  return {
    port: Number(opts.port),
    host: opts.host ?? '127.0.0.1',
    data: opts.data,
    config: opts.config,
    user: opts.user ?? 'default',
    password: opts.password ?? env[PASSWORD_ENV] ?? '',
  };
}

function log(line: string): void {
  process.stdout.write(`${new Date().toISOString()} ${line}\n`);
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2), process.env);
  fs.mkdirSync(args.data, { recursive: true });
  const started = Date.now();
  const engine = new Engine(args.data, args.config);
  const { version, timezone } = await engine.describe();
  const ctx: ServerContext = {
    engine,
    sessions: new SessionRegistry(engine),
    version,
    timezone,
    displayName: 'logpipeline-testbed',
    user: args.user,
    password: args.password,
    log,
  };
  const passwordFile = process.env[PASSWORD_FILE_ENV];
  if (passwordFile) {
    const read = () => fs.readFileSync(passwordFile, 'utf8').trim();
    ctx.password = read();
    // Polling (not inotify): works on every filesystem; 200 ms bounds how long a rotation takes.
    fs.watchFile(passwordFile, { interval: 200, persistent: false }, () => {
      ctx.password = read();
      log('password changed (password file re-read)');
    });
  }
  let inflight = 0;
  const server = http.createServer((req, res) => {
    inflight++;
    void handleRequest(ctx, req, res).finally(() => inflight--);
  });
  server.keepAliveTimeout = 10_000; // ClickHouse's default keep_alive_timeout
  server.headersTimeout = 15_000;
  server.requestTimeout = 0; // long streaming INSERTs are legitimate
  server.listen(args.port, args.host, () => {
    log(
      `ClickHouse ${version} (chdb) serving HTTP on ${args.host}:${args.port}, data ${args.data}, ready in ${Date.now() - started} ms`,
    );
  });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: shutting down (${inflight} requests in flight)`);
    server.close();
    server.closeIdleConnections();
    const deadline = Date.now() + 10_000;
    while (inflight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    ctx.sessions.closeAll();
    await engine.close();
    log('engine closed');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('unhandledRejection', (err) =>
    log(`unhandled rejection: ${(err as Error)?.stack ?? String(err)}`),
  );
}

if (require.main === module) {
  main().catch((err: unknown) => {
    log(`fatal: ${(err as Error)?.stack ?? String(err)}`);
    process.exit(1);
  });
}
