/**
 * Tamper evidence end to end: the operator's own DDL and worker config (integrity on), the real
 * worker process consuming real Kafka into the ClickHouse engine with an Ed25519 signing key,
 * then `logpipeline verify` on what ClickHouse holds: clean, and after one row is altered, a
 * `modified` finding naming that row's batch.
 */
import { generateKeyPairSync } from 'node:crypto';
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
  pollUntil,
  produceLines,
  spawnWorker,
  stopWorker,
  testProducer,
} from './worker-support';

const bed = readTestBed();
const ch = chClient(bed);
const id = `integ_${Date.now().toString(36)}`;
const lp: LogPipeline = {
  apiVersion: 'logpipeline.io/v1alpha1',
  kind: 'LogPipeline',
  metadata: { name: 'fw', namespace: 'compliance', uid: `uid-${id}` },
  spec: {
    kafka: { bootstrapServers: [bed.kafka!.bootstrap], topic: { name: `lp.${id}`, partitions: 2 } },
    clickhouse: { url: bed.clickhouse!.url, database: id, table: 'fw' },
    workers: { batch: { maxRows: 2000, maxDelay: '200ms' } },
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

async function verify(): Promise<{
  code: number;
  report: {
    ok: boolean;
    findings: Array<{ kind: string; partition?: number; firstOffset?: number; lastOffset?: number }>;
    stats: unknown;
  };
}> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const code = await runVerify(
    [
      '--clickhouse-url',
      bed.clickhouse!.url,
      '--user',
      bed.clickhouse!.username,
      '--password',
      bed.clickhouse!.password,
      '--database',
      id,
      '--table',
      'fw',
      '--all',
      '--public-key',
      publicKeyFile,
      '--output',
      'json',
    ],
    out,
  );
  return { code, report: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
}

let publicKeyFile: string;

beforeAll(async () => {
  const ddl = buildTableDDL(spec);
  if (!ddl.ok) throw new Error(ddl.message);
  for (const query of ddlStatements(ddl.value)) await ch.command({ query });
  const admin = kafkaClient(bed).admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: spec.kafka.topic.name, numPartitions: 2 }] });
  await admin.disconnect();
  const fs = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  publicKeyFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'integ-')), 'key.pub');
  fs.writeFileSync(publicKeyFile, keys.publicKey.export({ type: 'spki', format: 'pem' }));
});

afterAll(async () => {
  await ch.command({ query: `DROP DATABASE IF EXISTS \`${id}\`` });
  await ch.close();
});

it('chains every batch the worker inserts; verify is clean, then names the batch of an altered row', async () => {
  const ddl = buildTableDDL(spec);
  if (!ddl.ok) throw new Error(ddl.message);
  const cfg = buildWorkerConfig(spec, buildWorkerColumns(ddl.value.tables[0].schema));
  process.env[SECRET_ENV.signingKey] = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const worker = spawnWorker(
    bed,
    { ...cfg, tuning: { sessionTimeoutMs: 6_000, heartbeatIntervalMs: 500 } } as never,
    await freePort(),
    'integrity',
  );
  delete process.env[SECRET_ENV.signingKey];
  const lines = generateSampleLines('fortigate', 6000, {
    seed: 11,
    malformedRatio: 0,
    startMs: Date.now() - 3_600_000,
  });
  const producer = await testProducer(bed);
  await produceLines(producer, spec.kafka.topic.name, 2, lines, 25);
  await producer.disconnect();
  const count = async () =>
    Number(
      (
        (await (
          await ch.query({ query: `SELECT count() AS n FROM \`${id}\`.fw`, format: 'JSONEachRow' })
        ).json()) as Array<{ n: string }>
      )[0].n,
    );
  await pollUntil(count, (n) => n >= 6000, 120_000);
  expect(await count()).toBe(6000);
  expect(await stopWorker(worker)).toBe(0); // SIGTERM: drain, final checkpoint
  const links = (
    (await (
      await ch.query({
        query: `SELECT count() AS n, sum(row_count) AS rows FROM \`${id}\`.fw_integrity`,
        format: 'JSONEachRow',
      })
    ).json()) as Array<{ n: string; rows: string }>
  )[0];
  expect(Number(links.n)).toBeGreaterThan(1);
  expect(Number(links.rows)).toBe(6000);

  const clean = await verify();
  expect(clean.report.findings).toEqual([]);
  expect(clean.code).toBe(0);

  const victim = (
    (await (
      await ch.query({
        query: `SELECT kafka_partition AS p, kafka_offset AS o FROM \`${id}\`.fw ORDER BY kafka_partition, kafka_offset LIMIT 1 OFFSET 1234`,
        format: 'JSONEachRow',
      })
    ).json()) as Array<{ p: number; o: string }>
  )[0];
  await ch.command({
    query: `ALTER TABLE \`${id}\`.fw UPDATE dst_port = dst_port + 1 WHERE kafka_partition = {p:UInt16} AND kafka_offset = {o:UInt64} AND kafka_line = 0`,
    query_params: { p: victim.p, o: victim.o },
    clickhouse_settings: { mutations_sync: '2' },
  });
  const tampered = await verify();
  expect(tampered.code).not.toBe(0);
  const modified = tampered.report.findings.filter((f) => f.kind === 'modified');
  expect(modified).toHaveLength(1);
  expect(modified[0].partition).toBe(victim.p);
  expect(modified[0].firstOffset).toBeLessThanOrEqual(Number(victim.o));
  expect(modified[0].lastOffset).toBeGreaterThanOrEqual(Number(victim.o));
}, 240_000);
