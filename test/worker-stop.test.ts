/**
 * A clean stop, always. A worker stuck on a batch it cannot deliver (ClickHouse stopped), then
 * cut off from Kafka too, keeps its memory bounded and still exits within its drain timeout on
 * SIGTERM. And a worker whose supervisor (the local pod runner, here a stand-in parent process)
 * is SIGKILLed does not live on as an orphan: it drains and exits by itself.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SECRET_ENV } from '../common/src/worker-config';
import { restartClickHouse, stopClickHouse } from './env/clickhouse';
import { restartKafka, stopKafka } from './env/kafka';
import { freePort } from './env/process';
import { readTestBed, writeTestBed } from './env/testbed';
import {
  createPipeline,
  dropPipeline,
  makeTraffic,
  metricSum,
  newPipeline,
  pollUntil,
  produceLines,
  rssMiB,
  spawnWorker,
  stopWorker,
  testProducer,
  workerConfig,
  workerGet,
  type WorkerProcess,
} from './worker-support';

jest.setTimeout(240_000);

const p = newPipeline('stop', 2);
const DRAIN_MS = 8_000;
const RSS_LIMIT_MIB = 512;
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  await createPipeline(readTestBed(), p);
});

afterAll(async () => {
  if (worker) await stopWorker(worker, 5_000);
  await dropPipeline(readTestBed(), p);
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('a worker stuck on a failing batch, with Kafka and ClickHouse gone, exits within its drain timeout', async () => {
  const bed = readTestBed();
  const producer = await testProducer(bed);
  await produceLines(producer, p.topic, p.partitions, makeTraffic(20_000, 0).lines, 50);
  await producer.disconnect();
  await stopClickHouse(bed.clickhouse!);
  try {
    const port = await freePort();
    const cfg = workerConfig(bed, p, {
      tuning: {
        drainTimeoutMs: DRAIN_MS,
        sessionTimeoutMs: 6_000,
        heartbeatIntervalMs: 500,
        rebalanceTimeoutMs: 15_000,
      },
    });
    worker = spawnWorker(bed, cfg, port, 'stop');
    // Stuck: its batches fail (sink unavailable) and are retried.
    await pollUntil(
      () => workerGet(port, '/metrics'),
      (m) => metricSum(m.body, 'logpipeline_worker_insert_failures_total') >= 3,
      90_000,
    );
    await stopKafka(bed.kafka!);
    let maxRss = 0;
    const until = Date.now() + 10_000;
    while (Date.now() < until) {
      maxRss = Math.max(maxRss, rssMiB(worker.child.pid!));
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(worker.child.exitCode).toBeNull();
    const started = Date.now();
    worker.child.kill('SIGTERM');
    const code = await Promise.race([
      worker.exited,
      new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), DRAIN_MS + 5_000)),
    ]);
    const tookMs = Date.now() - started;
    expect(code).toBe(0);
    expect(tookMs).toBeLessThanOrEqual(DRAIN_MS + 1_000);
    expect(maxRss).toBeGreaterThan(0);
    expect(maxRss).toBeLessThan(RSS_LIMIT_MIB);
    worker = undefined;
  } finally {
    const now = readTestBed();
    writeTestBed({
      ...now,
      kafka: await restartKafka(now.kafka!),
      clickhouse: await restartClickHouse(now.clickhouse!),
    });
  }
});

test('a worker whose supervisor is SIGKILLed drains and exits by itself (no orphan)', async () => {
  const bed = readTestBed();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lp-orphan-'));
  const configFile = path.join(dir, 'config.json');
  const port = await freePort();
  const cfg = workerConfig(bed, p, {
    tuning: {
      drainTimeoutMs: DRAIN_MS,
      sessionTimeoutMs: 6_000,
      heartbeatIntervalMs: 500,
      rebalanceTimeoutMs: 15_000,
    },
  });
  fs.writeFileSync(configFile, JSON.stringify({ ...cfg, httpPort: port }));
  const main = path.resolve(__dirname, '..', 'dist/consumer/src/main.js');
  // A stand-in supervisor: starts the worker the way the pod runner does, prints its pid, lingers.
  const script = `
    const { spawn } = require('node:child_process');
    const fs = require('node:fs');
    const out = fs.openSync(${JSON.stringify(path.join(dir, 'worker.log'))}, 'a');
    const c = spawn(process.execPath, [${JSON.stringify(main)}, '--config', ${JSON.stringify(configFile)}], {
      stdio: ['ignore', out, out],
      env: { ...process.env, LP_EXIT_WITH_PARENT: String(process.pid) },
    });
    process.stdout.write(String(c.pid) + '\\n');
    setInterval(() => undefined, 1000);`;
  const parent = spawn(process.execPath, ['-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      [SECRET_ENV.clickhouseUser]: bed.clickhouse!.username,
      [SECRET_ENV.clickhousePassword]: bed.clickhouse!.password,
    },
  });
  const childPid = await new Promise<number>((resolve) =>
    parent.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))),
  );
  await pollUntil(
    () => workerGet(port, '/healthz'),
    (r) => r.status === 200,
    60_000,
  );
  parent.kill('SIGKILL');
  const gone = await pollUntil(
    async () => !alive(childPid),
    (g) => g,
    DRAIN_MS + 5_000,
    200,
  );
  if (!gone) process.kill(childPid, 'SIGKILL');
  expect(gone).toBe(true);
  fs.rmSync(dir, { recursive: true, force: true });
});
