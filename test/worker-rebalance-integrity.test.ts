/**
 * The rebalance race of issue 13, end to end: two real worker processes share a topic whose lines
 * keep flowing while the second one joins; checkpoints are timestamped by a TSA that answers only
 * after 3 s, so the first worker's revocation work (a final checkpoint) is still running when its
 * kept partition's new state restores its chain head. No batch may be left without a link: the
 * workers log none, every stored row is covered by a link, and `verify` finds nothing — for the
 * data table and for the dead-letter table, whose rows (every 40th line is garbage) have a chain
 * of their own.
 */
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { resolveSpec } from '../operator/src/api/defaults';
import type { LogPipeline } from '../operator/src/api/types';
import { runVerify } from '../operator/cli/verify';
import type { VerifyReport } from '../operator/src/compliance/verify-report';
import { buildTableDDL, buildWorkerColumns, ddlStatements } from '../operator/src/desired/clickhouse';
import { buildWorkerConfig } from '../operator/src/desired/configmap';
import { SECRET_ENV } from '../common/src/worker-config';
import { generateSampleLines } from './fixtures/samples';
import { readTestBed } from './env/testbed';
import { freePort } from './env/process';
import { startTsa, type TsaServer } from './env/tsa';
import {
  chClient,
  kafkaClient,
  pollUntil,
  produceLines,
  spawnWorker,
  stopWorker,
  testProducer,
  workerGet,
  type WorkerProcess,
} from './worker-support';

const bed = readTestBed();
const ch = chClient(bed);
const id = `rebal_${Date.now().toString(36)}`;
const keys = generateKeyPairSync('ed25519');
let tsa: TsaServer;
let dir: string;

function pipeline(tsaUrl: string): LogPipeline {
  return {
    apiVersion: 'logpipeline.io/v1alpha1',
    kind: 'LogPipeline',
    metadata: { name: 'fw', namespace: 'compliance', uid: `uid-${id}` },
    spec: {
      kafka: { bootstrapServers: [bed.kafka!.bootstrap], topic: { name: `lp.${id}`, partitions: 2 } },
      clickhouse: { url: bed.clickhouse!.url, database: id, table: 'fw' },
      workers: { batch: { maxRows: 500, maxDelay: '100ms' } },
      integrity: {
        enabled: true,
        signingKeySecretRef: { name: 'key', key: 'ed25519.pem' },
        checkpointInterval: '1s',
        tsaUrl,
      },
    },
  };
}

async function scalar(query: string): Promise<number> {
  const rows = await (await ch.query({ query, format: 'JSONEachRow' })).json<{ n: string }>();
  return Number(rows[0].n);
}

beforeAll(async () => {
  tsa = await startTsa({ delayMs: 3_000 });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rebal-'));
  fs.writeFileSync(path.join(dir, 'key.pub'), keys.publicKey.export({ type: 'spki', format: 'pem' }));
}, 60_000);

afterAll(async () => {
  if (!process.env.KEEP_DB) await ch.command({ query: `DROP DATABASE IF EXISTS \`${id}\`` });
  await ch.close();
  await tsa?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('a rebalance while the TSA takes 3 s leaves no batch without its link', async () => {
  const spec = resolveSpec(pipeline(tsa.url));
  const ddl = buildTableDDL(spec);
  if (!ddl.ok) throw new Error(ddl.message);
  for (const query of ddlStatements(ddl.value)) await ch.command({ query });
  const admin = kafkaClient(bed).admin();
  await admin.connect();
  await admin.createTopics({
    topics: [
      { topic: spec.kafka.topic.name, numPartitions: 2 },
      { topic: spec.deadLetter.topic, numPartitions: 1 },
    ],
  });
  await admin.disconnect();
  const cfg = {
    ...buildWorkerConfig(spec, buildWorkerColumns(ddl.value.tables[0].schema)),
    tuning: { sessionTimeoutMs: 6_000, heartbeatIntervalMs: 500 },
  } as never;
  process.env[SECRET_ENV.signingKey] = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const workers: WorkerProcess[] = [];
  try {
    workers.push(spawnWorker(bed, cfg, await freePort(), 'a'));
    const ready = (w: WorkerProcess) =>
      pollUntil(
        () => workerGet(w.port, '/readyz'),
        (r) => r.status === 200,
        60_000,
      );
    expect((await ready(workers[0])).status).toBe(200);
    const producer = await testProducer(bed);
    const lines = generateSampleLines('fortigate', 12_000, {
      seed: 5,
      malformedRatio: 0,
      startMs: Date.now() - 3_600_000,
    });
    const GARBAGE_EVERY = 40;
    for (let i = GARBAGE_EVERY - 1; i < lines.length; i += GARBAGE_EVERY)
      lines[i] = Buffer.concat([Buffer.from(`garbage #${i} `), Buffer.from([0xff, 0xfe, 0x7f])]);
    // Lines keep flowing for ~12 s; the second worker joins after ~3 s.
    let produced = 0;
    const flow = (async () => {
      for (let i = 0; i < lines.length; i += 200) {
        await produceLines(producer, spec.kafka.topic.name, 2, lines.slice(i, i + 200), 5);
        produced += Math.min(200, lines.length - i);
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    await pollUntil(
      async () => produced,
      (n) => n >= 3_000,
      60_000,
      100,
    );
    workers.push(spawnWorker(bed, cfg, await freePort(), 'b'));
    await flow;
    await producer.disconnect();
    const rows = `SELECT (SELECT count() FROM \`${id}\`.fw) + (SELECT count() FROM \`${id}\`.fw_dlq) AS n`;
    expect(
      await pollUntil(
        () => scalar(rows),
        (n) => n >= lines.length,
        180_000,
      ),
    ).toBe(lines.length);
    // Both workers took part (the rebalance happened while data flowed).
    expect((await ready(workers[1])).status).toBe(200);
  } finally {
    delete process.env[SECRET_ENV.signingKey];
    for (const w of workers) expect(await stopWorker(w)).toBe(0);
  }
  const dead = await scalar(`SELECT count() AS n FROM \`${id}\`.fw_dlq`);
  expect(dead).toBe(300);
  const linked = (t: string) =>
    scalar(`SELECT sum(row_count) AS n FROM \`${id}\`.fw_integrity WHERE table_name = '${t}'`);
  // Dead letters are chained (the base code linked none of them).
  expect(await linked('fw_dlq')).toBe(dead);
  for (const w of workers)
    expect(fs.readFileSync(w.logFile, 'utf8')).not.toMatch(/without an integrity link/);
  expect(await linked('fw')).toBe(12_000 - dead);
  for (const table of ['fw', 'fw_dlq']) {
    const { code, report } = await verify(table);
    expect(report.findings).toEqual([]);
    expect(report.stats.rowsRead).toBe(table === 'fw' ? 12_000 - dead : dead);
    expect(code).toBe(0);
  }
}, 300_000);

async function verify(table: string): Promise<{ code: number; report: VerifyReport }> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const code = await runVerify(
    [
      '--database',
      id,
      '--table',
      table,
      '--all',
      '--public-key',
      path.join(dir, 'key.pub'),
      '--output',
      'json',
    ],
    out,
    {
      CLICKHOUSE_URL: bed.clickhouse!.url,
      CLICKHOUSE_USER: bed.clickhouse!.username,
      CLICKHOUSE_PASSWORD: bed.clickhouse!.password,
    },
  );
  return { code, report: JSON.parse(Buffer.concat(chunks).toString()) as VerifyReport };
}
