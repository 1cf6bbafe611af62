/**
 * Tamper evidence on a custom schema whose time column is `DateTime` (seconds), not DateTime64:
 * the real worker chains real Kafka batches into ClickHouse, each link's time range is the batch
 * rows' range in epoch milliseconds (links before version 2 recorded seconds × 10^6 here), and
 * `logpipeline verify` is clean.
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
const id = `integdt_${Date.now().toString(36)}`;
const base = integrityPipeline(bed, id, {
  partitions: 1,
  batch: { maxRows: 500, maxDelay: '200ms' },
  deadLetter: { enabled: false },
});
const lp = {
  ...base,
  spec: {
    ...base.spec,
    clickhouse: {
      ...base.spec.clickhouse,
      preset: 'custom' as const,
      timeColumn: 'at',
      columns: [
        { name: 'at', type: 'DateTime', source: 'timestamp' },
        { name: 'raw', type: 'String', source: 'raw' },
        { name: 'kafka_partition', type: 'UInt16', source: 'kafka_partition' },
        { name: 'kafka_offset', type: 'UInt64', source: 'kafka_offset' },
        { name: 'kafka_line', type: 'UInt32', source: 'kafka_line' },
      ],
      orderBy: [{ column: 'kafka_partition' }, { column: 'kafka_offset' }],
      retention: { deleteAfter: '3650d' },
    },
  },
};
const spec = resolveSpec(lp);
const { keys, publicKeyFile } = signingKeys('integdt-');

beforeAll(async () => {
  await createIntegrityTables(ch, spec);
  await createTopics(bed, [{ topic: spec.kafka.topic.name, numPartitions: 1 }]);
});

afterAll(async () => {
  await ch.command({ query: `DROP DATABASE IF EXISTS \`${id}\`` });
  await ch.close();
});

it('records each link time range in epoch ms and verifies clean', async () => {
  const worker = spawnSigningWorker(bed, keys, integrityWorkerConfig(spec), await freePort(), 'integdt');
  const lines = generateSampleLines('fortigate', 2000, {
    seed: 5,
    malformedRatio: 0,
    startMs: Date.now() - 3_600_000,
  });
  const producer = await testProducer(bed);
  await produceLines(producer, spec.kafka.topic.name, 1, lines, 20);
  await producer.disconnect();
  const count = () => scalar(ch, `SELECT count() AS n FROM \`${id}\`.fw`);
  await pollUntil(count, (n) => n >= 2000, 120_000);
  expect(await stopWorker(worker)).toBe(0);

  // Per link: its recorded range against the range of the rows it covers, both in epoch ms.
  const query = async <T>(sql: string): Promise<T[]> =>
    (await ch.query({ query: sql, format: 'JSONEachRow' })).json<T>();
  const links = await query<{ first: string; last: string; min: string; max: string }>(
    'SELECT first_offset AS first, last_offset AS last, toUnixTimestamp64Milli(min_ts) AS min, ' +
      `toUnixTimestamp64Milli(max_ts) AS max FROM \`${id}\`.fw_integrity ORDER BY first_offset`,
  );
  const rows = await query<{ o: string; min: string; max: string }>(
    'SELECT kafka_offset AS o, toUInt64(min(at)) * 1000 AS min, toUInt64(max(at)) * 1000 AS max ' +
      `FROM \`${id}\`.fw GROUP BY kafka_offset`,
  );
  expect(links.length).toBeGreaterThan(1);
  for (const l of links) {
    const covered = rows.filter((r) => Number(r.o) >= Number(l.first) && Number(r.o) <= Number(l.last));
    const expected = {
      min: Math.min(...covered.map((r) => Number(r.min))),
      max: Math.max(...covered.map((r) => Number(r.max))),
    };
    expect({ first: l.first, min: Number(l.min), max: Number(l.max) }).toEqual({
      first: l.first,
      ...expected,
    });
  }

  const clean = await verifyTable(bed, id, 'fw', publicKeyFile);
  expect(clean.report.findings).toEqual([]);
  expect(clean.code).toBe(0);
}, 240_000);
