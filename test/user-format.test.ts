/**
 * A pipeline with a user-defined `kv` format end to end (real Kafka, worker process, ClickHouse):
 * lines in a vendor layout the project has no native parser for are stored with every identity
 * field, a line without src_ip is dead-lettered as missing_field:src_ip under requiredFields, the
 * worker counts rows by vendor and missing identity field (Prometheus), and its per-window stats
 * row in `<table>_parser_stats` drives the ParserCoverage condition (False, naming the hashed shape).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { readParserCoverage } from '../operator/src/apply/parser-coverage';
import { buildTableDDL } from '../operator/src/desired/clickhouse';
import { resolved } from './fixtures/clickhouse-testing';
import { parserCoverageCondition } from '../operator/src/status/conditions';
import { freePort } from './env/process';
import { readTestBed } from './env/testbed';
import {
  chClient,
  createPipeline,
  dropPipeline,
  metricSum,
  newPipeline,
  pollUntil,
  produceLines,
  spawnWorker,
  stopWorker,
  storedCounts,
  testProducer,
  workerConfig,
  workerGet,
  type WorkerProcess,
} from './worker-support';

jest.setTimeout(180_000);

const bed = readTestBed();
const p = newPipeline('userkv', 1);
const spec = resolved({ database: p.database, table: p.table });
let ch: ClickHouseClient;
let worker: WorkerProcess | undefined;

const KV = {
  pairDelimiter: '|',
  keyValueDelimiter: '=',
  quote: '',
  fields: {
    timestamp: ['ts'],
    src_ip: ['client'],
    src_port: ['cport'],
    dst_ip: ['server'],
    dst_port: ['sport'],
    nat_src_ip: ['public'],
    nat_src_port: ['pport'],
    proto: ['l4'],
    action: ['verdict'],
  },
  actions: { ok: 'allow', no: 'deny' },
};

const good = (i: number) =>
  `ts=1741932723${String(i).padStart(3, '0')}|client=100.64.0.${i}|cport=${50000 + i}|server=198.51.100.7|sport=443|` +
  `public=203.0.113.9|pport=${40000 + i}|l4=tcp|verdict=${i % 2 ? 'ok' : 'no'}`;
const NO_SRC = 'ts=1741932723999|server=198.51.100.7|sport=443|l4=tcp|verdict=ok';

beforeAll(async () => {
  ch = chClient(bed);
  await createPipeline(bed, p);
  const ddl = buildTableDDL(spec);
  if (!ddl.ok) throw new Error(ddl.message);
  const stats = ddl.value.tables.find((t) => t.role === 'parserStats');
  await ch.command({ query: stats!.create[0] });
});

afterAll(async () => {
  if (worker) await stopWorker(worker, 5_000);
  await ch.command({ query: `DROP TABLE IF EXISTS ${p.database}.\`${spec.coverage.table}\`` });
  await dropPipeline(bed, p);
  await ch.close();
});

test('stores kv rows with every identity field and dead-letters the line without src_ip', async () => {
  const lines = [...Array.from({ length: 20 }, (_, i) => good(i + 1)), NO_SRC, NO_SRC, NO_SRC].map((l) =>
    Buffer.from(l),
  );
  const producer = await testProducer(bed);
  await produceLines(producer, p.topic, 1, lines, 5);
  await producer.disconnect();

  const port = await freePort();
  const base = workerConfig(bed, p);
  worker = spawnWorker(
    bed,
    {
      ...base,
      parser: { ...base.parser, format: 'kv', requiredFields: ['src_ip'], kv: KV } as typeof base.parser,
      coverage: { table: spec.coverage.table, windowMs: 1_000 },
    },
    port,
    'userkv',
  );
  const counts = await pollUntil(
    () => storedCounts(ch, p),
    (c) => c.rows + c.dlq >= 23,
    120_000,
  );
  expect([counts.rows, counts.dlq]).toEqual([20, 3]);

  const rs = await ch.query({
    query:
      `SELECT vendor, countIf(src_ip != toIPv6('::') AND dst_ip != toIPv6('::') AND src_port IS NOT NULL AND dst_port IS NOT NULL ` +
      `AND nat_src_ip IS NOT NULL AND nat_src_port IS NOT NULL) AS complete, countIf(action = 'deny') AS denied, min(ts) AS first ` +
      `FROM ${p.database}.\`${p.table}\` GROUP BY vendor`,
    format: 'JSONEachRow',
  });
  expect(await rs.json()).toEqual([
    { vendor: 'kv', complete: 20, denied: 10, first: '2025-03-14 06:12:03.001' },
  ]);
  const dlq = await ch.query({
    query: `SELECT DISTINCT reason FROM ${p.database}.\`${p.dlqTable}\``,
    format: 'JSONEachRow',
  });
  expect(await dlq.json()).toEqual([{ reason: 'missing_field:src_ip' }]);

  // Prometheus: rows by vendor and by missing identity field, whatever the policy did with them.
  const metrics = await pollUntil(
    async () => (await workerGet(port, '/metrics')).body,
    (text) => metricSum(text, 'logpipeline_worker_rows_by_vendor_total') >= 23,
    30_000,
  );
  expect(metrics).toMatch(/logpipeline_worker_rows_by_vendor_total\{vendor="kv"\} 23/);
  expect(metrics).toMatch(/logpipeline_worker_rows_missing_identity_total\{field="src_ip"\} 3/);

  // The worker -> operator channel: the stats row, read the way the Table part reads it.
  const coverage = await pollUntil(
    () => readParserCoverage(ch, spec),
    (c) => c.rows >= 23,
    30_000,
  );
  expect(coverage).toMatchObject({ rows: 23, missingSrcIp: 3, missingSrcIpPercent: 13 });
  expect(coverage.topShapes).toEqual([{ shape: expect.stringMatching(/^kv#[0-9a-f]{8}$/), rows: 3 }]);
  const condition = parserCoverageCondition(coverage, spec.coverage.maxMissingSrcIpPercent);
  expect(condition).toMatchObject({
    type: 'ParserCoverage',
    status: 'False',
    reason: 'SourceAddressMissing',
  });
  expect(condition.message).toContain(coverage.topShapes[0].shape);
});
