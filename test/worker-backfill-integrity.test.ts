/**
 * A shuffled history import under tamper evidence: 300 distinct days interleaved in every batch,
 * so the worker regroups each batch by partition key (sorted keys, at most 100 per INSERT) while
 * the integrity link seals the batch in (offset, line) order. `logpipeline verify` re-reads what
 * ClickHouse holds in canonical order and must find every batch intact.
 */
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { resolveSpec } from '../operator/src/api/defaults';
import type { LogPipeline } from '../operator/src/api/types';
import { runVerify } from '../operator/cli/verify';
import { buildTableDDL, buildWorkerColumns, ddlStatements } from '../operator/src/desired/clickhouse';
import { buildWorkerConfig } from '../operator/src/desired/configmap';
import { SECRET_ENV } from '../common/src/worker-config';
import { generateSampleLines } from './fixtures/samples';
import { readTestBed } from './env/testbed';
import { freePort } from './env/process';
import {
  chClient,
  kafkaClient,
  metricSum,
  pollUntil,
  produceLines,
  spawnWorker,
  stopWorker,
  testProducer,
  workerGet,
} from './worker-support';

jest.setTimeout(300_000);

const bed = readTestBed();
const ch = chClient(bed);
const id = `bfinteg_${Date.now().toString(36)}`;
const DAYS = 300;
const LINES = 3_000;
const lp: LogPipeline = {
  apiVersion: 'logpipeline.io/v1alpha1',
  kind: 'LogPipeline',
  metadata: { name: 'fw', namespace: 'compliance', uid: `uid-${id}` },
  spec: {
    kafka: { bootstrapServers: [bed.kafka!.bootstrap], topic: { name: `lp.${id}`, partitions: 1 } },
    clickhouse: { url: bed.clickhouse!.url, database: id, table: 'fw' },
    workers: { batch: { maxRows: 5000, maxDelay: '500ms' } },
    integrity: {
      enabled: true,
      signingKeySecretRef: { name: 'key', key: 'ed25519.pem' },
      checkpointInterval: '1s',
    },
    deadLetter: { enabled: false },
  },
};
const spec = resolveSpec(lp);
const keys = generateKeyPairSync('ed25519');
let publicKeyFile: string;

beforeAll(async () => {
  const ddl = buildTableDDL(spec);
  if (!ddl.ok) throw new Error(ddl.message);
  for (const query of ddlStatements(ddl.value)) await ch.command({ query });
  const admin = kafkaClient(bed).admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: spec.kafka.topic.name, numPartitions: 1 }] });
  await admin.disconnect();
  publicKeyFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bfinteg-')), 'key.pub');
  fs.writeFileSync(publicKeyFile, keys.publicKey.export({ type: 'spki', format: 'pem' }));
});

afterAll(async () => {
  await ch.command({ query: `DROP DATABASE IF EXISTS \`${id}\`` });
  await ch.close();
});

async function verify(): Promise<{ code: number; findings: unknown[] }> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const { clickhouse } = bed;
  const code = await runVerify(
    [
      '--clickhouse-url',
      clickhouse!.url,
      '--user',
      clickhouse!.username,
      '--password',
      clickhouse!.password,
    ].concat(['--database', id, '--table', 'fw', '--all', '--public-key', publicKeyFile, '--output', 'json']),
    out,
  );
  return {
    code,
    findings: (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { findings: unknown[] }).findings,
  };
}

it('regroups a shuffled 300-day import by partition key; verify finds every batch intact', async () => {
  const ddl = buildTableDDL(spec);
  if (!ddl.ok) throw new Error(ddl.message);
  const cfg = buildWorkerConfig(spec, buildWorkerColumns(ddl.value.tables[0].schema));
  // One line per day slot, days interleaved (a multiplicative stride), all within retention.
  const now = Date.now();
  const lines = Array.from(
    { length: LINES },
    (_, i) =>
      generateSampleLines('fortigate', 1, {
        seed: i + 1,
        malformedRatio: 0,
        startMs: now - (1 + ((i * 7919) % DAYS)) * 86_400_000,
      })[0],
  );
  const producer = await testProducer(bed);
  await produceLines(producer, spec.kafka.topic.name, 1, lines, 50);
  await producer.disconnect();
  process.env[SECRET_ENV.signingKey] = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const port = await freePort();
  const worker = spawnWorker(bed, cfg as never, port, 'backfill-integrity');
  delete process.env[SECRET_ENV.signingKey];
  const count = async () =>
    Number(
      (
        (await (
          await ch.query({ query: `SELECT count() AS n FROM \`${id}\`.fw`, format: 'JSONEachRow' })
        ).json()) as Array<{ n: string }>
      )[0].n,
    );
  await pollUntil(count, (n) => n >= LINES, 180_000);
  expect(await count()).toBe(LINES);
  const m = await workerGet(port, '/metrics');
  // Regrouped before sending: ClickHouse never refused a block for spanning too many partitions.
  expect(metricSum(m.body, 'logpipeline_worker_insert_failures_total')).toBe(0);
  expect(await stopWorker(worker)).toBe(0);
  const [days] = (await (
    await ch.query({ query: `SELECT uniqExact(toDate(ts)) AS d FROM \`${id}\`.fw`, format: 'JSONEachRow' })
  ).json()) as Array<{ d: string }>;
  expect(Number(days.d)).toBeGreaterThan(200);
  const clean = await verify();
  expect(clean.findings).toEqual([]);
  expect(clean.code).toBe(0);
});
