/**
 * The ClickHouse part of the test bed: the real ClickHouse engine (chdb) behind ClickHouse's HTTP
 * interface (test/env/clickhouse/server.ts), run as its own supervised process so tests can
 * SIGKILL and restart it. Data lives in `<dir>/data` (with the `cold` disk at `<dir>/data/cold/`
 * and the `hot_cold` storage policy unless disabled), the engine config in `<dir>/config.xml`,
 * the log in `<dir>/clickhouse.log`. The server runs from the compiled `dist/` (`npm run build`);
 * a build older than the sources is refused rather than silently tested.
 *
 * External server: with CLICKHOUSE_URL set (plus CLICKHOUSE_USER / CLICKHOUSE_PASSWORD, default
 * `default` / empty), startClickHouse starts nothing and returns a bed pointing at that server
 * (no `process`, `dataDir` empty, version from `SELECT version()`). stopClickHouse and
 * restartClickHouse then throw: fault-injection tests need the local engine.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { buildEngineConfig, coldDiskPath, PASSWORD_ENV, PASSWORD_FILE_ENV } from './clickhouse/config';
import { freePort, isAlive, startProcess, stopProcess, waitUntil, type ServiceProcess } from './process';
import type { ClickHouseBed } from './testbed';

/** Options of the local engine. */
export interface ClickHouseOptions {
  /** User the server accepts (default `logpipeline`). */
  user?: string;
  /** Its password (default: random per bed). */
  password?: string;
  /** Configure the `cold` disk and `hot_cold` policy (default true). */
  coldDisk?: boolean;
  /** Extra engine config XML inside <clickhouse> (test-only). */
  extraConfigXml?: string;
  /** How long to wait for the server to answer (default 60 s). */
  timeoutMs?: number;
}

const OWNER_ENV = 'LP_TESTBED_OWNER_PID';
const START_TIMEOUT_MS = 60_000;

/** Starts the engine under `dir` (or adopts CLICKHOUSE_URL); resolves once it answers queries. */
export async function startClickHouse(
  dir: string,
  ownerPid: number,
  opts: ClickHouseOptions = {},
): Promise<ClickHouseBed> {
  const external = process.env.CLICKHOUSE_URL;
  if (external) return externalBed(external.replace(/\/+$/, ''));
  const dataDir = path.join(dir, 'data');
  const configFile = path.join(dir, 'config.xml');
  fs.mkdirSync(coldDiskPath(dataDir), { recursive: true });
  fs.writeFileSync(
    configFile,
    buildEngineConfig({ dataDir, coldDisk: opts.coldDisk, extraXml: opts.extraConfigXml }),
  );
  const port = await freePort();
  const username = opts.user ?? 'logpipeline';
  const password = opts.password ?? randomBytes(12).toString('hex');
  const passwordFile = path.join(dir, 'password');
  fs.writeFileSync(passwordFile, password, { mode: 0o600 });
  const proc = startProcess(
    {
      name: 'clickhouse',
      command: process.execPath,
      args: [
        serverScript(),
        '--port',
        String(port),
        '--data',
        dataDir,
        '--config',
        configFile,
        '--user',
        username,
      ],
      // The password travels in the environment so the supervisor's log line never shows it.
      env: {
        [PASSWORD_ENV]: password,
        [PASSWORD_FILE_ENV]: passwordFile,
        UV_THREADPOOL_SIZE: '16',
        [OWNER_ENV]: String(ownerPid),
      },
      logFile: path.join(dir, 'clickhouse.log'),
    },
    ownerPid,
  );
  const bed: ClickHouseBed = {
    url: `http://127.0.0.1:${port}`,
    username,
    password,
    version: '',
    dataDir,
    process: proc,
  };
  return waitReady(bed, opts.timeoutMs ?? START_TIMEOUT_MS);
}

/** Stops the local engine (SIGTERM: clean shutdown; SIGKILL: crash). */
export async function stopClickHouse(bed: ClickHouseBed, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  await stopProcess(localProcess(bed, 'stopClickHouse'), signal);
}

/**
 * Kills the engine with `signal` (default SIGKILL, i.e. a crash) and starts it again on the same
 * port, data directory and credentials; resolves with the bed holding the new pid (persist it
 * with writeTestBed so later tests and the teardown find the new process).
 */
export async function restartClickHouse(
  bed: ClickHouseBed,
  signal: NodeJS.Signals = 'SIGKILL',
): Promise<ClickHouseBed> {
  const old = localProcess(bed, 'restartClickHouse');
  await stopProcess(old, signal);
  const owner = Number(old.env[OWNER_ENV] ?? 0);
  const { name, command, args, env, logFile } = old;
  const proc = startProcess({ name, command, args, env, logFile }, owner > 0 && isAlive(owner) ? owner : 0);
  return waitReady({ ...bed, process: proc }, START_TIMEOUT_MS);
}

/**
 * Changes the engine's password in place (no restart), as `ALTER USER … IDENTIFIED` would on a
 * real server; resolves once the new password is accepted, with the bed holding it (persist it
 * with writeTestBed when later tests need it).
 */
export async function setClickHousePassword(bed: ClickHouseBed, password: string): Promise<ClickHouseBed> {
  const proc = localProcess(bed, 'setClickHousePassword');
  const file = proc.env[PASSWORD_FILE_ENV];
  if (!file) throw new Error('setClickHousePassword: the engine was started without a password file');
  fs.writeFileSync(file, password, { mode: 0o600 });
  const next = { ...bed, password };
  await waitUntil(
    'clickhouse: new password accepted',
    async () => {
      await selectVersion(bed.url, bed.username, password);
      return true;
    },
    { timeoutMs: 10_000, logFile: proc.logFile, pid: proc.pid, intervalMs: 100 },
  );
  return next;
}

function localProcess(bed: ClickHouseBed, what: string): ServiceProcess {
  if (!bed.process) {
    throw new Error(
      `${what}: the test bed uses the external ClickHouse at ${bed.url} (CLICKHOUSE_URL); ` +
        'fault-injection tests need the local engine: unset CLICKHOUSE_URL',
    );
  }
  return bed.process;
}

async function waitReady(bed: ClickHouseBed, timeoutMs: number): Promise<ClickHouseBed> {
  const proc = bed.process as ServiceProcess;
  const wait = { timeoutMs, logFile: proc.logFile, pid: proc.pid, intervalMs: 100 };
  await waitUntil('clickhouse: /ping', async () => (await request(`${bed.url}/ping`)).body === 'Ok.\n', wait);
  let version = '';
  await waitUntil(
    'clickhouse: SELECT version()',
    async () => {
      version = await selectVersion(bed.url, bed.username, bed.password);
      return true;
    },
    wait,
  );
  return { ...bed, version };
}

async function externalBed(url: string): Promise<ClickHouseBed> {
  const username = process.env.CLICKHOUSE_USER ?? 'default';
  const password = process.env.CLICKHOUSE_PASSWORD ?? '';
  try {
    return { url, username, password, version: await selectVersion(url, username, password), dataDir: '' };
  } catch (err) {
    throw new Error(
      `clickhouse: CLICKHOUSE_URL=${url} does not answer SELECT version(): ${(err as Error).message}`,
    );
  }
}

async function selectVersion(url: string, username: string, password: string): Promise<string> {
  const auth = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  const res = await request(url, 'SELECT version()', { Authorization: auth });
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${res.body.trim()}`);
  return res.body.trim();
}

/** One HTTP exchange without keep-alive (so nothing lingers in the caller's process). */
function request(
  url: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: body === undefined ? 'GET' : 'POST', headers, agent: false, timeout: 5000 },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

/** The compiled server script; refuses a build older than the server's sources. */
function serverScript(): string {
  const compiledHere = path.join(__dirname, 'clickhouse', 'server.js');
  if (fs.existsSync(compiledHere)) return compiledHere; // running from dist/
  const distDir = path.resolve(__dirname, '../../dist/test/env/clickhouse');
  const script = path.join(distDir, 'server.js');
  if (!fs.existsSync(script)) throw new Error(`clickhouse: ${script} is missing: run 'npm run build' first`);
  const srcDir = path.join(__dirname, 'clickhouse');
  for (const src of fs.readdirSync(srcDir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))) {
    const built = path.join(distDir, src.replace(/\.ts$/, '.js'));
    if (!fs.existsSync(built) || fs.statSync(built).mtimeMs < fs.statSync(path.join(srcDir, src)).mtimeMs) {
      throw new Error(
        `clickhouse: ${built} is older than test/env/clickhouse/${src}: run 'npm run build' first`,
      );
    }
  }
  return script;
}
