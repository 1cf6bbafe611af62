/**
 * Tamper evidence end to end: the operator's own DDL and worker config (integrity on), the real
 * worker process consuming real Kafka into the ClickHouse engine with an Ed25519 signing key,
 * then `logpipeline verify` on what ClickHouse holds: clean, and after one row is altered, a
 * `modified` finding naming that row's batch.
 */
import { resolveSpec } from '../operator/src/api/defaults';
import { generateSampleLines } from './fixtures/samples';
import { readTestBed } from './env/testbed';
import { freePort } from './env/process';
import {
  createIntegrityTables,
  createTopics,
  integrityPipeline,
  integrityWorkerConfig,
  scalar,
  signingKeys,
  spawnSigningWorker,
  verifyTable,
} from './integrity-support';
import { chClient, pollUntil, produceLines, stopWorker, testProducer } from './worker-support';

const bed = readTestBed();
const ch = chClient(bed);
const id = `integ_${Date.now().toString(36)}`;
const lp = integrityPipeline(bed, id, {
  partitions: 2,
  batch: { maxRows: 2000, maxDelay: '200ms' },
  deadLetter: { enabled: false },
});
const spec = resolveSpec(lp);
const { keys, publicKeyFile } = signingKeys('integ-');
const verify = () => verifyTable(bed, id, 'fw', publicKeyFile);

beforeAll(async () => {
  await createIntegrityTables(ch, spec);
  await createTopics(bed, [{ topic: spec.kafka.topic.name, numPartitions: 2 }]);
});

afterAll(async () => {
  await ch.command({ query: `DROP DATABASE IF EXISTS \`${id}\`` });
  await ch.close();
});

it('chains every batch the worker inserts; verify is clean, then names the batch of an altered row', async () => {
  const cfg = integrityWorkerConfig(spec);
  const worker = spawnSigningWorker(
    bed,
    keys,
    { ...cfg, tuning: { sessionTimeoutMs: 6_000, heartbeatIntervalMs: 500 } } as never,
    await freePort(),
    'integrity',
  );
  const lines = generateSampleLines('fortigate', 6000, {
    seed: 11,
    malformedRatio: 0,
    startMs: Date.now() - 3_600_000,
  });
  const producer = await testProducer(bed);
  await produceLines(producer, spec.kafka.topic.name, 2, lines, 25);
  await producer.disconnect();
  const count = () => scalar(ch, `SELECT count() AS n FROM \`${id}\`.fw`);
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
