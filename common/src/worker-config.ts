/**
 * The worker's configuration: rendered by the operator into a ConfigMap (config.json, mounted at
 * /etc/logpipeline/config.json) and read by the worker at start. Secrets are never in this file:
 * they reach the worker as environment variables from secretKeyRefs (names below).
 */
import fs from 'node:fs';

/** Env var names the operator sets from Secrets (values never appear in the ConfigMap). */
export const SECRET_ENV = {
  clickhouseUser: 'LP_CLICKHOUSE_USER',
  clickhousePassword: 'LP_CLICKHOUSE_PASSWORD',
  kafkaSaslUser: 'LP_KAFKA_SASL_USERNAME',
  kafkaSaslPassword: 'LP_KAFKA_SASL_PASSWORD',
  signingKey: 'LP_INTEGRITY_SIGNING_KEY',
  tsaUsername: 'LP_TSA_USERNAME',
  tsaPassword: 'LP_TSA_PASSWORD',
  tsaClientCert: 'LP_TSA_CLIENT_CERT',
  tsaClientKey: 'LP_TSA_CLIENT_KEY',
  tsaServerCa: 'LP_TSA_SERVER_CA',
} as const;

/** Keys of the TSA credentials Secret (spec.integrity.tsaCredentialsSecretRef), by env var; each optional. */
export const TSA_SECRET_KEYS: ReadonlyArray<[string, string]> = [
  [SECRET_ENV.tsaUsername, 'username'],
  [SECRET_ENV.tsaPassword, 'password'],
  [SECRET_ENV.tsaClientCert, 'tls.crt'],
  [SECRET_ENV.tsaClientKey, 'tls.key'],
  [SECRET_ENV.tsaServerCa, 'ca.crt'],
];

/** SASL mechanisms the operator admits and the worker's Kafka client speaks. */
export const SASL_MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512'] as const;

/** One of SASL_MECHANISMS. */
export type SaslMechanism = (typeof SASL_MECHANISMS)[number];

/** One column the worker fills: ClickHouse name and type, and the parser output it comes from. */
export interface WorkerColumn {
  name: string;
  type: string;
  source: string;
}

/** Everything one worker process needs, fully defaulted by the operator. */
export interface WorkerConfig {
  pipeline: { namespace: string; name: string; uid: string };
  kafka: {
    brokers: string[];
    topic: string;
    groupId: string;
    clientId: string;
    sasl?: { mechanism: SaslMechanism };
    tls?: { enabled: boolean; caFile?: string; insecureSkipVerify?: boolean };
    /**
     * Largest value a `content-encoding` header may decode to; one inflating past it is
     * dead-lettered whole. Default DEFAULT_MAX_VALUE_BYTES; rendered only when the pipeline needs more.
     */
    maxValueBytes?: number;
  };
  parser: {
    format: string;
    timezone: string;
    maxLineBytes: number;
    staticFields: Record<string, string>;
    /** Column sources a row must have, else it is dead-lettered as missing_field:<name>. */
    requiredFields?: string[];
  };
  /** Parser coverage stats: one row per worker and window into this table (ParserCoverage condition). */
  coverage?: { table: string; windowMs: number };
  clickhouse: {
    url: string;
    database: string;
    table: string;
    columns: WorkerColumn[];
    /** The table's delete TTL in ms: older rows are dead-lettered (ClickHouse would drop them at insert). */
    retainMs?: number;
    /** The table's partition key (e.g. toYYYYMMDD(ts)): batches are split so no INSERT spans too many partitions. */
    partitionBy?: { column: string; function?: string };
  };
  batch: {
    maxRows: number;
    maxBytes: number;
    maxDelayMs: number;
    /** Most non-blank lines taken from one Kafka message; the rest is dead-lettered as one record. Default 100000. */
    maxLinesPerMessage?: number;
  };
  deadLetter: { enabled: boolean; topic?: string; table?: string };
  integrity: {
    enabled: boolean;
    table: string;
    checkpointTable: string;
    checkpointIntervalMs: number;
    tsaUrl?: string;
    /** The time column whose range each link records (spec.clickhouse.timeColumn); absent in older configs: `ts`. */
    timeColumn?: string;
  };
  /** Port of /metrics, /healthz and /readyz. */
  httpPort: number;
  /** Optional flow-control and fetch tuning; every field has a default (consumer/src/worker-tuning.ts). */
  tuning?: WorkerTuningInput;
}

/** Overrides of the worker's flow control and Kafka fetch sizes (all optional). */
export interface WorkerTuningInput {
  /** Cap on bytes held for data not yet in ClickHouse (raw + encoded). */
  maxInFlightBytes?: number;
  /** Batches cut and not yet stored, per partition (bounded so the cut journal fits Kafka's metadata). */
  maxOutstandingBatchesPerPartition?: number;
  /** Concurrent INSERT requests. */
  insertConcurrency?: number;
  /** kafkajs fetch sizes. */
  maxBytesPerPartition?: number;
  fetchMaxBytes?: number;
  fetchMinBytes?: number;
  fetchMaxWaitMs?: number;
  /** kafkajs partitionsConsumedConcurrently. */
  partitionsConsumedConcurrently?: number;
  /** Bound on the SIGTERM drain (finish in-flight, commit, leave the group). */
  drainTimeoutMs?: number;
  /** Body format of data INSERTs: RowBinary (default; less ClickHouse CPU) or TabSeparated. */
  insertFormat?: 'RowBinary' | 'TabSeparated';
  sessionTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  rebalanceTimeoutMs?: number;
  requestTimeoutMs?: number;
}

/**
 * Default bound on one decoded message value (16 MiB, the default batch size): far above the syslog
 * receiver's default packing (1 MiB) and Kafka's default max.message.bytes, small enough that a
 * forged header cannot make a worker allocate without limit.
 */
export const DEFAULT_MAX_VALUE_BYTES = 16 * 1024 * 1024;

/** Path of the mounted config file inside the worker pod. */
export const DEFAULT_CONFIG_PATH = '/etc/logpipeline/config.json';

/** Reads the worker config from LP_CONFIG (path) or the default mount, then applies env overrides. */
export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const file = env.LP_CONFIG ?? DEFAULT_CONFIG_PATH;
  const cfg = JSON.parse(fs.readFileSync(file, 'utf8')) as WorkerConfig;
  // Overrides for local runs (outside a pod the broker and ClickHouse addresses differ).
  if (env.LP_KAFKA_BROKERS) cfg.kafka.brokers = env.LP_KAFKA_BROKERS.split(',');
  if (env.LP_CLICKHOUSE_URL) cfg.clickhouse.url = env.LP_CLICKHOUSE_URL;
  if (env.LP_HTTP_PORT) cfg.httpPort = Number(env.LP_HTTP_PORT);
  return cfg;
}
