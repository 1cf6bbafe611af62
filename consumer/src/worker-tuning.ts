/**
 * Turns a WorkerConfig into the concrete settings the worker runs with: tuning defaults derived
 * from the batch limits, and the kafkajs client options (brokers, SASL/TLS from the SECRET_ENV
 * variables). Pure apart from reading the CA file named in the config.
 */
import fs from 'node:fs';
import type { KafkaConfig, SASLOptions } from 'kafkajs';
import { SECRET_ENV, type WorkerConfig } from '../../common/src/worker-config';
import { MAX_JOURNAL_ENTRIES } from '../../common/src/cut-journal';

/**
 * Most outstanding (cut, not yet folded) batches a partition may hold: one message can close two
 * batches, and every one of them must fit in the cut journal (offset-commit metadata).
 */
export const MAX_OUTSTANDING_BATCHES = MAX_JOURNAL_ENTRIES - 2;

/** Every tuning knob with its value. */
export interface WorkerTuning {
  maxInFlightBytes: number;
  maxOutstandingBatchesPerPartition: number;
  insertConcurrency: number;
  maxBytesPerPartition: number;
  fetchMaxBytes: number;
  fetchMinBytes: number;
  fetchMaxWaitMs: number;
  partitionsConsumedConcurrently: number;
  drainTimeoutMs: number;
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  rebalanceTimeoutMs: number;
  requestTimeoutMs: number;
}

const MiB = 1024 * 1024;

/**
 * Defaults: in-flight memory of eight batches (64 MiB..512 MiB) — encoded bodies are about twice
 * the raw bytes, so this keeps a 1 GiB pod well inside its limit while leaving room for a few
 * concurrent INSERTs and a full fetch.
 */
export function resolveTuning(cfg: WorkerConfig): WorkerTuning {
  const t = cfg.tuning ?? {};
  const batchBytes = Math.max(1, cfg.batch.maxBytes);
  return {
    maxInFlightBytes: t.maxInFlightBytes ?? Math.min(512 * MiB, Math.max(64 * MiB, 8 * batchBytes)),
    maxOutstandingBatchesPerPartition: Math.max(
      1,
      Math.min(MAX_OUTSTANDING_BATCHES, t.maxOutstandingBatchesPerPartition ?? 8),
    ),
    insertConcurrency: t.insertConcurrency ?? 4,
    maxBytesPerPartition: t.maxBytesPerPartition ?? 2 * MiB,
    fetchMaxBytes: t.fetchMaxBytes ?? 16 * MiB,
    fetchMinBytes: t.fetchMinBytes ?? 64 * 1024,
    fetchMaxWaitMs: t.fetchMaxWaitMs ?? Math.min(500, Math.max(10, Math.floor(cfg.batch.maxDelayMs / 2))),
    partitionsConsumedConcurrently: t.partitionsConsumedConcurrently ?? 4,
    drainTimeoutMs: t.drainTimeoutMs ?? 25_000,
    sessionTimeoutMs: t.sessionTimeoutMs ?? 30_000,
    heartbeatIntervalMs: t.heartbeatIntervalMs ?? 3_000,
    rebalanceTimeoutMs: t.rebalanceTimeoutMs ?? 60_000,
    requestTimeoutMs: t.requestTimeoutMs ?? 120_000,
  };
}

/** Secrets the worker reads from its environment (never from the config file). */
export interface WorkerSecrets {
  clickhouseUser: string;
  clickhousePassword: string;
  kafkaSaslUser?: string;
  kafkaSaslPassword?: string;
}

/** Reads the SECRET_ENV variables; ClickHouse user defaults to `default` with an empty password. */
export function readSecrets(env: NodeJS.ProcessEnv = process.env): WorkerSecrets {
  return {
    clickhouseUser: env[SECRET_ENV.clickhouseUser] ?? 'default',
    clickhousePassword: env[SECRET_ENV.clickhousePassword] ?? '',
    kafkaSaslUser: env[SECRET_ENV.kafkaSaslUser],
    kafkaSaslPassword: env[SECRET_ENV.kafkaSaslPassword],
  };
}

/** kafkajs client options for the worker and the receiver (brokers, client id, SASL and TLS). */
export function kafkaClientConfig(
  cfg: Pick<WorkerConfig, 'kafka'>,
  secrets: WorkerSecrets,
  requestTimeoutMs: number,
): KafkaConfig {
  const k = cfg.kafka;
  const out: KafkaConfig = {
    clientId: k.clientId,
    brokers: k.brokers,
    requestTimeout: Math.min(requestTimeoutMs, 30_000),
  };
  if (k.sasl) {
    if (!secrets.kafkaSaslUser || secrets.kafkaSaslPassword === undefined) {
      throw new Error(
        `kafka.sasl is set but ${SECRET_ENV.kafkaSaslUser}/${SECRET_ENV.kafkaSaslPassword} are not`,
      );
    }
    out.sasl = {
      mechanism: k.sasl.mechanism,
      username: secrets.kafkaSaslUser,
      password: secrets.kafkaSaslPassword,
    } as SASLOptions;
  }
  if (k.tls?.enabled) {
    out.ssl = {
      rejectUnauthorized: !k.tls.insecureSkipVerify,
      ca: k.tls.caFile ? [fs.readFileSync(k.tls.caFile, 'utf8')] : undefined,
    };
  }
  return out;
}
