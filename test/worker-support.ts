/**
 * Shared fixtures of the worker integration tests and the end-to-end benchmark: a pipeline's
 * topic, tables (built by the operator's DDL builders, so with its deduplication window and keys)
 * and worker config on the test bed; line generation with known garbage; content checks run in
 * ClickHouse. Spawning the real worker process: worker-process.ts (re-exported here).
 */
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import { CompressionTypes, Kafka, logLevel, Partitioners, type Producer } from 'kafkajs';
import type { WorkerConfig } from '../common/src/worker-config';
import { registerKafkaCodecs } from '../common/src/kafka/codecs';
import { REFERENCE_COLUMNS } from '../consumer/src/encode/reference-columns';
import { resolveSpec, type ResolvedSpec } from '../operator/src/api/defaults';
import { buildTableDDL } from '../operator/src/desired/clickhouse';
import { generateSampleLines } from './fixtures/samples';
import type { TestBed } from './env/testbed';
import { createTopicsWithLeaders } from './env/kafka-topics';

// Process helpers live in worker-process.ts; the tests import them from here as before.
export {
  metricSum,
  rssMiB,
  spawnCompiled,
  spawnWorker,
  stopWorker,
  workerGet,
  type WorkerProcess,
} from './worker-process';

/** Everything one test pipeline owns on the bed. */
export interface Pipeline {
  name: string;
  topic: string;
  dlqTopic: string;
  groupId: string;
  database: string;
  table: string;
  dlqTable: string;
  partitions: number;
}

/** Names for a fresh pipeline (unique per call). */
export function newPipeline(prefix: string, partitions: number): Pipeline {
  const id = `${prefix}_${process.pid}_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6).toString(36)}`;
  return {
    name: id,
    topic: `lp.${id}`,
    dlqTopic: `lp.${id}.dlq`,
    groupId: `logpipeline.test.${id}`,
    database: 'default',
    table: id,
    dlqTable: `${id}_dlq`,
    partitions,
  };
}

/** A ClickHouse client on the bed. */
export function chClient(bed: TestBed): ClickHouseClient {
  const ch = bed.clickhouse;
  if (!ch) throw new Error('the test bed has no ClickHouse part');
  return createClient({
    url: ch.url,
    username: ch.username,
    password: ch.password,
    log: { level: ClickHouseLogLevel.OFF },
    request_timeout: 120_000,
  });
}

/** A kafkajs client on the bed (LZ4 registered). */
export function kafkaClient(bed: TestBed, clientId = 'worker-test'): Kafka {
  if (!bed.kafka) throw new Error('the test bed has no Kafka part');
  registerKafkaCodecs();
  return new Kafka({ clientId, brokers: [bed.kafka.bootstrap], logLevel: logLevel.NOTHING });
}

/**
 * The operator's view of `p`: the reference columns as a custom schema, ordered by Kafka position
 * like the worker's delivery order; retention long enough that the samples' 2024 clock never expires.
 */
export function pipelineSpec(bed: TestBed, p: Pipeline): ResolvedSpec {
  return resolveSpec({
    apiVersion: 'logpipeline.io/v1alpha1',
    kind: 'LogPipeline',
    metadata: { name: p.name.replace(/_/g, '-').toLowerCase(), namespace: 'test', uid: `uid-${p.name}` },
    spec: {
      kafka: { bootstrapServers: [bed.kafka?.bootstrap ?? '127.0.0.1:9092'], topic: { name: p.topic } },
      clickhouse: {
        url: bed.clickhouse?.url ?? 'http://127.0.0.1:8123',
        database: p.database,
        table: p.table,
        preset: 'custom',
        columns: REFERENCE_COLUMNS.map((c) => ({ name: c.name, type: c.type, source: c.source })),
        orderBy: [{ column: 'kafka_partition' }, { column: 'kafka_offset' }],
        retention: { deleteAfter: '3650d' },
      },
      deadLetter: { enabled: true, topic: p.dlqTopic, table: p.dlqTable },
    },
  });
}

/** The operator's CREATE statements for the data and dead-letter tables of `p`. */
function tableStatements(bed: TestBed, p: Pipeline): string[] {
  const ddl = buildTableDDL(pipelineSpec(bed, p));
  if (!ddl.ok) throw new Error(`test pipeline ${p.name}: ${ddl.message}`);
  return ddl.value.tables
    .filter((t) => t.role === 'data' || t.role === 'deadLetter')
    .flatMap((t) => t.create);
}

/**
 * Creates the topics and the data + dead-letter tables of `p`; `dataConstraint` adds a CHECK to the data
 * table; `compression` is the topic's compression.type (`producer` keeps batches as producers compressed them).
 */
export async function createPipeline(
  bed: TestBed,
  p: Pipeline,
  dataConstraint?: string,
  compression = 'lz4',
): Promise<void> {
  const admin = kafkaClient(bed).admin();
  await admin.connect();
  try {
    await createTopicsWithLeaders(admin, [
      {
        topic: p.topic,
        numPartitions: p.partitions,
        configEntries: [{ name: 'compression.type', value: compression }],
      },
      { topic: p.dlqTopic, numPartitions: p.partitions },
    ]);
  } finally {
    await admin.disconnect();
  }
  const ch = chClient(bed);
  try {
    for (const query of tableStatements(bed, p)) await ch.command({ query });
    if (dataConstraint) {
      await ch.command({
        query: `ALTER TABLE ${p.database}.\`${p.table}\` ADD CONSTRAINT test_check CHECK ${dataConstraint}`,
      });
    }
  } finally {
    await ch.close();
  }
}

/** Deletes the topics, tables and consumer group of `p` (best effort). */
export async function dropPipeline(bed: TestBed, p: Pipeline): Promise<void> {
  const admin = kafkaClient(bed).admin();
  await admin.connect().catch(() => undefined);
  await admin.deleteGroups([p.groupId]).catch(() => undefined);
  await admin.deleteTopics({ topics: [p.topic, p.dlqTopic] }).catch(() => undefined);
  await admin.disconnect().catch(() => undefined);
  const ch = chClient(bed);
  await ch.command({ query: `DROP TABLE IF EXISTS ${p.database}.\`${p.table}\`` }).catch(() => undefined);
  await ch.command({ query: `DROP TABLE IF EXISTS ${p.database}.\`${p.dlqTable}\`` }).catch(() => undefined);
  await ch.close();
}

/** The worker config of `p` on the bed. */
export function workerConfig(bed: TestBed, p: Pipeline, overrides: Partial<WorkerConfig> = {}): WorkerConfig {
  return {
    pipeline: { namespace: 'test', name: p.name, uid: `uid-${p.name}` },
    kafka: {
      brokers: [bed.kafka!.bootstrap],
      topic: p.topic,
      groupId: p.groupId,
      clientId: `worker-${p.name}`,
    },
    parser: { format: 'auto', timezone: 'UTC', maxLineBytes: 65536, staticFields: {} },
    clickhouse: {
      url: bed.clickhouse!.url,
      database: p.database,
      table: p.table,
      columns: REFERENCE_COLUMNS.map((c) => ({ name: c.name, type: c.type, source: c.source! })),
    },
    batch: { maxRows: 5_000, maxBytes: 4 * 1024 * 1024, maxDelayMs: 200 },
    deadLetter: { enabled: true, topic: p.dlqTopic, table: p.dlqTable },
    integrity: {
      enabled: false,
      table: `${p.table}_integrity`,
      checkpointTable: `${p.table}_checkpoints`,
      checkpointIntervalMs: 300_000,
    },
    httpPort: 0,
    // A killed worker stays a group member until its session times out; keep that short in tests.
    tuning: { sessionTimeoutMs: 6_000, heartbeatIntervalMs: 500, rebalanceTimeoutMs: 15_000 },
    ...overrides,
  };
}

/** Test traffic: valid lines of the vendor mix with every `garbageEvery`-th line replaced by garbage. */
export interface Traffic {
  lines: Buffer[];
  garbage: number;
}

/** `count` lines; line i is garbage when (i % garbageEvery) === garbageEvery - 1 (0: none). */
export function makeTraffic(count: number, garbageEvery: number, seed = 7): Traffic {
  const lines = generateSampleLines('mix', count, { seed });
  let garbage = 0;
  for (let i = 0; i < count; i++) {
    if (garbageEvery > 0 && i % garbageEvery === garbageEvery - 1) {
      // Not a log line in any supported format (and not valid UTF-8): the parser must refuse it.
      lines[i] = Buffer.concat([Buffer.from(`garbage #${i} `), Buffer.from([0xff, 0xfe, 0x00, 0x7f])]);
      garbage++;
    }
  }
  return { lines, garbage };
}

/** Produces lines round-robin over partitions, `perMessage` lines joined by LF per message. */
export async function produceLines(
  producer: Producer,
  topic: string,
  partitions: number,
  lines: Buffer[],
  perMessage: number,
): Promise<number> {
  let messages = 0;
  let bytes = 0;
  const chunk: Array<{ partition: number; value: Buffer }> = [];
  const flush = async () => {
    if (chunk.length === 0) return;
    bytes = 0;
    await producer.send({ topic, acks: -1, compression: CompressionTypes.LZ4, messages: chunk.splice(0) });
  };
  for (let i = 0; i < lines.length; i += perMessage) {
    const group = lines.slice(i, i + perMessage);
    const value =
      group.length === 1
        ? group[0]
        : Buffer.concat(group.flatMap((l, j) => (j === 0 ? [l] : [Buffer.from('\n'), l])));
    chunk.push({ partition: messages % partitions, value });
    messages++;
    bytes += value.length;
    // Stay well under the broker's 1 MiB record-batch limit even before compression.
    if (chunk.length >= 500 || bytes >= 512 * 1024) await flush();
  }
  await flush();
  return messages;
}

/**
 * A connected idempotent producer for test traffic: the tests count rows and offsets exactly, and
 * a plain producer's retry after a slow answer on a loaded machine can write a message twice.
 */
export async function testProducer(bed: TestBed): Promise<Producer> {
  const producer = kafkaClient(bed, 'worker-test-producer').producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    idempotent: true,
    maxInFlightRequests: 1,
  });
  await producer.connect();
  return producer;
}

/** Counts in ClickHouse that prove exactly-once: rows, distinct (partition, offset, raw), DLQ rows. */
export interface StoredCounts {
  rows: number;
  distinct: number;
  dlq: number;
  dlqDistinct: number;
}

/** Reads StoredCounts of `p`. */
export async function storedCounts(ch: ClickHouseClient, p: Pipeline): Promise<StoredCounts> {
  const [d] = await (
    await ch.query({
      query: `SELECT count() AS c, uniqExact(kafka_partition, kafka_offset, raw) AS u FROM ${p.database}.\`${p.table}\``,
      format: 'JSONEachRow',
    })
  ).json<{ c: string; u: string }>();
  const [q] = await (
    await ch.query({
      query: `SELECT count() AS c, uniqExact(\`partition\`, \`offset\`, raw) AS u FROM ${p.database}.\`${p.dlqTable}\``,
      format: 'JSONEachRow',
    })
  ).json<{ c: string; u: string }>();
  return { rows: Number(d.c), distinct: Number(d.u), dlq: Number(q.c), dlqDistinct: Number(q.u) };
}

/** Polls until `check` holds or `timeoutMs` passes; returns the last value seen. */
export async function pollUntil<T>(
  read: () => Promise<T>,
  check: (v: T) => boolean,
  timeoutMs: number,
  intervalMs = 500,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let v = await read();
  while (!check(v) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, intervalMs));
    v = await read();
  }
  return v;
}

/**
 * Waits until the group has committed every partition up to its log end. The workers commit only
 * what is durable (rows, dead letters), so from then on the stored counts are final: a test judges
 * them on this condition instead of sleeping "long enough" for stragglers. Throws after `timeoutMs`.
 */
export async function waitCaughtUp(bed: TestBed, p: Pipeline, timeoutMs = 120_000): Promise<void> {
  const admin = kafkaClient(bed, 'caught-up-check').admin();
  await admin.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [ends, [group]] = await Promise.all([
        admin.fetchTopicOffsets(p.topic),
        admin.fetchOffsets({ groupId: p.groupId, topics: [p.topic] }),
      ]);
      const committed = new Map(group.partitions.map((x) => [x.partition, Number(x.offset)]));
      const behind = ends.filter((e) => (committed.get(e.partition) ?? -1) < Number(e.high));
      if (behind.length === 0) return;
      if (Date.now() > deadline)
        throw new Error(
          `group ${p.groupId} not caught up after ${timeoutMs} ms: ${behind.map((e) => `p${e.partition} ${committed.get(e.partition)}/${e.high}`).join(', ')}`,
        );
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    await admin.disconnect();
  }
}

/** Where each produced line landed (`partition:offset:line`), for produceLines calls in order on a fresh topic. */
export function expectedKeys(
  batches: Array<{ lines: Buffer[]; perMessage: number }>,
  partitions: number,
): string[] {
  const next = new Array<number>(partitions).fill(0);
  const keys: string[] = [];
  for (const { lines, perMessage } of batches) {
    // produceLines restarts its round-robin at partition 0 on every call.
    let message = 0;
    for (let i = 0; i < lines.length; i += perMessage) {
      const partition = message % partitions;
      const offset = next[partition]++;
      for (const line of lines.slice(i, i + perMessage))
        keys.push(`${partition}:${offset}:${line.toString('latin1')}`);
      message++;
    }
  }
  return keys;
}

/** Every stored row of the data table as a `partition:offset:raw` key (raw as latin1 bytes). */
export async function storedKeys(
  ch: ClickHouseClient,
  p: Pipeline,
  table = p.table,
  cols = ['kafka_partition', 'kafka_offset'],
): Promise<string[]> {
  const rs = await ch.query({
    query: `SELECT ${cols[0]} AS p, ${cols[1]} AS o, hex(raw) AS h FROM ${p.database}.\`${table}\``,
    format: 'JSONCompactEachRow',
  });
  const rows = await rs.json<[number, string, string]>();
  return rows.map(([part, off, hex]) => `${part}:${off}:${Buffer.from(hex, 'hex').toString('latin1')}`);
}
