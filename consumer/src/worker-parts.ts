/**
 * Construction of the worker's external parts from its config — kafkajs client, consumer, admin
 * and dead-letter producer, the ClickHouse sink, the encoder, the coverage reporter, the Kafka
 * record decoders — and the loading of committed
 * offsets with their cut journals for a new assignment. Kept apart from worker.ts so the worker
 * reads as the consume loop and its rebalance/drain rules.
 */
import {
  CompressionTypes,
  ConfigResourceTypes,
  Kafka,
  logLevel,
  type Admin,
  type Consumer,
  type Producer,
} from 'kafkajs';
import { hostname } from 'node:os';
import type { Logger } from '../../common/src/log';
import { registerKafkaCodecs } from '../../common/src/kafka/codecs';
import { installFastRecordDecoder } from '../../common/src/kafka/record-decoder';
import { recordBatchLimitFor, setRecordBatchOutputLimit } from '../../common/src/kafka/batch-bound';
import { installFastFetchBatch } from '../../common/src/kafka/fetch-batch';
import type { WorkerConfig } from '../../common/src/worker-config';
import { decodeJournal } from '../../common/src/cut-journal';
import type { PartitionState } from './delivery/partition-state';
import { consumerWithGenerations, type GenerationTracker } from './delivery/group-generation';
import type { IdentityStats } from './encode/identity-stats';
import type { WorkerMetrics } from './observability/metrics';
import { CoverageReporter } from './observability/parser-coverage';
import { BatchEncoder, type InsertFormat } from './encode/batch';
import type { DeadLetterProducer } from './sink/batch-delivery';
import { ClickHouseSink } from './sink/clickhouse-sink';
import { chunkDeadLetterMessages, DLQ_TABLE_COLUMNS } from './sink/dead-letter';
import { backoffMs } from '../../common/src/timing';
import { errorReason } from './sink/retry';
import { kafkaClientConfig, type WorkerSecrets, type WorkerTuning } from './worker-tuning';

/** The Kafka side of a worker. */
export interface KafkaParts {
  consumer: Consumer;
  /** The group generation of the consumer's assignment in force (commits are bound to it). */
  generations?: GenerationTracker;
  admin: Admin;
  /** Present when a dead-letter topic is configured. */
  producer?: Producer;
  deadLetterProducer?: DeadLetterProducer;
}

/** Creates the consumer (tuned fetch sizes and group timeouts), the admin and the DLQ producer. */
export function createKafkaParts(
  cfg: WorkerConfig,
  secrets: WorkerSecrets,
  t: WorkerTuning,
  log: Logger,
  onOffsetReset?: (partition: number) => void,
): KafkaParts {
  const kafka = new Kafka({
    ...kafkaClientConfig(cfg, secrets, t.requestTimeoutMs),
    logLevel: logLevel.ERROR,
    logCreator: kafkaLogCreator(log, onOffsetReset),
  });
  const { consumer, generations } = consumerWithGenerations(kafka, cfg.kafka.groupId, () =>
    kafka.consumer({
      groupId: cfg.kafka.groupId,
      sessionTimeout: t.sessionTimeoutMs,
      heartbeatInterval: t.heartbeatIntervalMs,
      rebalanceTimeout: t.rebalanceTimeoutMs,
      maxBytesPerPartition: t.maxBytesPerPartition,
      maxBytes: t.fetchMaxBytes,
      minBytes: t.fetchMinBytes,
      maxWaitTimeInMs: t.fetchMaxWaitMs,
    }),
  );
  const parts: KafkaParts = { consumer, generations, admin: kafka.admin() };
  const dl = cfg.deadLetter;
  if (dl.enabled && dl.topic) {
    // Idempotent: broker-side retries never duplicate a dead letter within one producer session.
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    const topic = dl.topic;
    parts.producer = producer;
    const admin = parts.admin;
    let maxBytes: number | undefined;
    parts.deadLetterProducer = async (messages) => {
      maxBytes ??= await deadLetterSendLimit(admin, topic);
      // Chunked below the topic's max.message.bytes: one batch's letters never make one oversized request.
      for (const chunk of chunkDeadLetterMessages(messages, maxBytes))
        await producer.send({ topic, messages: chunk, acks: -1, compression: CompressionTypes.LZ4 });
    };
  }
  return parts;
}

/** Lines per message when the config names no limit (a flood message is cut there). */
export const DEFAULT_MAX_LINES_PER_MESSAGE = 100_000;

/** Kafka's default max.message.bytes (1 MiB + record-batch overhead). */
const DEFAULT_MAX_MESSAGE_BYTES = 1_048_588;

/** Bytes one dead-letter send may carry: 90% of the topic's max.message.bytes (read once, default on failure). */
export async function deadLetterSendLimit(admin: Admin, topic: string): Promise<number> {
  let limit = DEFAULT_MAX_MESSAGE_BYTES;
  try {
    const res = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['max.message.bytes'] }],
    });
    const v = Number(
      res.resources[0]?.configEntries.find((e) => e.configName === 'max.message.bytes')?.configValue,
    );
    if (Number.isFinite(v) && v > 0) limit = v;
  } catch {
    /* unreadable: keep the broker default */
  }
  return Math.floor(limit * 0.9);
}

/** The parser + encoder (RowBinary or TabSeparated) for the configured columns (throws on a bad column plan). */
export function createEncoder(
  cfg: WorkerConfig,
  identity?: IdentityStats,
  format: InsertFormat = 'RowBinary',
): BatchEncoder {
  return new BatchEncoder({
    format,
    parser: cfg.parser,
    columns: cfg.clickhouse.columns,
    staticFields: cfg.parser.staticFields,
    retainMs: cfg.clickhouse.retainMs,
    identity,
    partitionKey: cfg.clickhouse.partitionBy,
    maxLinesPerMessage: cfg.batch.maxLinesPerMessage ?? DEFAULT_MAX_LINES_PER_MESSAGE,
  });
}

/** The ClickHouse sink for the data table (columns in encoder order) and the DLQ table. */
export function createSink(
  cfg: WorkerConfig,
  secrets: WorkerSecrets,
  t: WorkerTuning,
  columns: readonly string[],
): ClickHouseSink {
  const dl = cfg.deadLetter;
  return new ClickHouseSink({
    url: cfg.clickhouse.url,
    username: secrets.clickhouseUser,
    password: secrets.clickhousePassword,
    database: cfg.clickhouse.database,
    table: cfg.clickhouse.table,
    columns,
    deadLetterTable: dl.enabled ? dl.table : undefined,
    deadLetterColumns: DLQ_TABLE_COLUMNS,
    maxOpenConnections: t.insertConcurrency + 1,
    requestTimeoutMs: t.requestTimeoutMs,
  });
}

/**
 * Loads the committed offset and cut journal of every state of a new assignment (retrying until
 * done or every state is revoked); partitions without a commit start from the beginning.
 */
export async function loadJournals(
  admin: Admin,
  cfg: WorkerConfig,
  states: ReadonlyMap<number, PartitionState>,
  log: Logger,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    if (![...states.values()].some((s) => s.alive)) return;
    try {
      const [res] = await admin.fetchOffsets({ groupId: cfg.kafka.groupId, topics: [cfg.kafka.topic] });
      const loaded = new Set<number>();
      for (const po of res?.partitions ?? []) {
        const s = states.get(po.partition);
        if (!s || !s.alive) continue;
        loaded.add(po.partition);
        const committed = Number(po.offset);
        const plan = decodeJournal(po.metadata, committed);
        s.load(committed, plan);
        if (plan.length > 0)
          log.info('re-cutting journaled batches', {
            partition: po.partition,
            batches: plan.length,
            from: committed,
          });
      }
      for (const [p, s] of states) if (s.alive && !loaded.has(p)) s.load(-1, []);
      return;
    } catch (err) {
      log.warn('loading committed offsets failed; retrying', { err: errorReason(err) });
      await new Promise((r) => setTimeout(r, backoffMs(attempt)));
    }
  }
}

/** kafkajs's words when a fetch found its position deleted and it jumps to the default offset. */
const OFFSET_RESET = 'Offset out of range, resetting to default offset';

/**
 * Routes kafkajs's own log lines (errors only) into the worker's JSON logger, and reports each
 * offset reset: kafkajs commits its default offset for it with no metadata, outside our
 * generation-bound committer, and says so only in this log line.
 */
export function kafkaLogCreator(log: Logger, onOffsetReset?: (partition: number) => void) {
  return () =>
    ({
      namespace,
      log: entry,
    }: {
      namespace: string;
      log: { message: string; error?: string; partition?: unknown };
    }) => {
      log.warn('kafkajs', { component: namespace, detail: entry.message, err: entry.error });
      if (onOffsetReset && entry.message === OFFSET_RESET && typeof entry.partition === 'number')
        onOffsetReset(entry.partition);
    };
}

/** Registers the Kafka codecs and installs the fast record decoders, logging which are in place. */
export function installKafkaDecoding(maxValueBytes: number | undefined, log: Logger): void {
  registerKafkaCodecs();
  // No record batch decompresses past this (an inflating batch is dead-lettered whole: worker-values.ts).
  setRecordBatchOutputLimit(recordBatchLimitFor(maxValueBytes));
  // Before the consumer's first fetch loads kafkajs's own decoder (false inside jest's registry).
  const fastBatch = installFastFetchBatch(); // in place only when main.ts loaded it before kafkajs
  // Record runs (one lazily decompressed object per record batch) need the fast Batch, which
  // expands them for kafkajs's own filtering of aborted transactions.
  const runs = fastBatch && process.env.LOGPIPELINE_RECORD_RUNS !== '0';
  const fastDecoder = installFastRecordDecoder(true, { runs });
  log.info('kafka record decoder', {
    decoder: fastDecoder ? (runs ? 'runs' : 'fast') : 'kafkajs',
    batch: fastBatch ? 'fast' : 'kafkajs',
  });
}

/** The parser-coverage reporter: identity metrics always, stats rows only when the operator configured the stats table. */
export function createCoverage(
  cfg: WorkerConfig,
  secrets: WorkerSecrets,
  identity: IdentityStats,
  metrics: WorkerMetrics,
  log: Logger,
): CoverageReporter {
  const c = cfg.clickhouse;
  return new CoverageReporter(
    identity,
    metrics,
    {
      ...{ url: c.url, username: secrets.clickhouseUser, password: secrets.clickhousePassword },
      ...{ database: c.database, table: cfg.coverage?.table, windowMs: cfg.coverage?.windowMs ?? 60_000 },
      worker: process.env.HOSTNAME ?? hostname(),
    },
    log,
  );
}
