/**
 * The worker configuration: WorkerConfig rendered from the ResolvedSpec into config.json of a
 * ConfigMap. Rendering is canonical (sorted keys), so the same spec always yields the same bytes
 * and the same hash; the Deployment's pod template carries that hash.
 */
import { sha256Hex, stableJson } from '../../../common/src/stable-json';
import {
  DEFAULT_MAX_VALUE_BYTES,
  type WorkerColumn,
  type WorkerConfig,
} from '../../../common/src/worker-config';
import type { ResolvedSpec } from '../api/defaults';
import { partitionKeyOf } from './clickhouse/schema';
import { CONFIG_HASH_ANNOTATION, childMetadata, configMapName } from './labels';

/** Port of the worker's /metrics, /healthz and /readyz. */
export const WORKER_HTTP_PORT = 8080;
/** Where the ConfigMap is mounted in the worker pod. */
export const CONFIG_MOUNT_PATH = '/etc/logpipeline';
/** Key of the config file in the ConfigMap. */
export const CONFIG_FILE = 'config.json';
/** Where the Kafka CA bundle Secret is mounted. */
export const KAFKA_CA_MOUNT_PATH = '/etc/logpipeline-tls';
/** File name of the CA bundle inside KAFKA_CA_MOUNT_PATH. */
export const KAFKA_CA_FILE = 'ca.crt';

/**
 * The largest decoded message value the pipeline's workers accept (a compressed value inflating
 * past it is dead-lettered): the default 16 MiB, raised to the receiver's packing.maxBytes or the
 * topic's max.message.bytes set in the spec when either is larger (nothing legitimate decodes to
 * more than the topic could hold uncompressed). Undefined at the default, so the config — and the
 * workers' pod template — of every other pipeline stays byte-identical.
 */
export function workerMaxValueBytes(spec: ResolvedSpec): number | undefined {
  const text = spec.kafka.topic.config['max.message.bytes'];
  const topicLimit = text !== undefined && /^[0-9]{1,10}$/.test(text) ? Number(text) : 0;
  const bound = Math.max(DEFAULT_MAX_VALUE_BYTES, spec.ingest?.packing.maxBytes ?? 0, topicLimit);
  return bound > DEFAULT_MAX_VALUE_BYTES ? bound : undefined;
}

/** The WorkerConfig for `spec`; `columns` come from the ClickHouse schema builder. */
export function buildWorkerConfig(spec: ResolvedSpec, columns: WorkerColumn[]): WorkerConfig {
  const { kafka } = spec;
  return {
    pipeline: { namespace: spec.namespace, name: spec.name, uid: spec.uid },
    kafka: {
      brokers: kafka.bootstrapServers,
      topic: kafka.topic.name,
      groupId: kafka.consumerGroup,
      clientId: `logpipeline-${spec.namespace}-${spec.name}`,
      sasl: kafka.sasl && { mechanism: kafka.sasl.mechanism },
      tls: kafka.tls && {
        enabled: kafka.tls.enabled,
        caFile: kafka.tls.caSecretName ? `${KAFKA_CA_MOUNT_PATH}/${KAFKA_CA_FILE}` : undefined,
        insecureSkipVerify: kafka.tls.insecureSkipVerify,
      },
      maxValueBytes: workerMaxValueBytes(spec),
    },
    parser: { ...spec.parser },
    // Workers write one stats row per minute (or per window when shorter); the status sums the window.
    coverage: { table: spec.coverage.table, windowMs: Math.min(60_000, spec.coverage.windowMs) },
    clickhouse: {
      url: spec.clickhouse.url,
      database: spec.clickhouse.database,
      table: spec.clickhouse.table,
      columns,
      retainMs: spec.clickhouse.retention.deleteAfterMs,
      // The worker splits batches by it (no INSERT may span more than 100 partitions).
      partitionBy: partitionKeyOf(spec),
    },
    batch: { ...spec.workers.batch },
    deadLetter: spec.deadLetter.enabled ? { ...spec.deadLetter } : { enabled: false },
    integrity: {
      enabled: spec.integrity.enabled,
      table: spec.integrity.table,
      checkpointTable: spec.integrity.checkpointTable,
      checkpointIntervalMs: spec.integrity.checkpointIntervalMs,
      tsaUrl: spec.integrity.tsaUrl,
      // Only when it is not the default: existing pipelines' configs (and their hash) stay as they were.
      ...(spec.clickhouse.timeColumn !== 'ts' ? { timeColumn: spec.clickhouse.timeColumn } : {}),
    },
    httpPort: WORKER_HTTP_PORT,
  };
}

/** The rendered config and its hash. */
export interface RenderedConfig {
  json: string;
  hash: string;
}

/** Renders the worker config canonically and hashes it. */
export function renderWorkerConfig(spec: ResolvedSpec, columns: WorkerColumn[]): RenderedConfig {
  const json = stableJson(buildWorkerConfig(spec, columns), 2) + '\n';
  return { json, hash: sha256Hex(json) };
}

/** The worker ConfigMap (config.json) of a pipeline. */
export function buildConfigMap(spec: ResolvedSpec, config: RenderedConfig) {
  const metadata = childMetadata(spec, configMapName(spec.name));
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { ...metadata, annotations: { [CONFIG_HASH_ANNOTATION]: config.hash } },
    data: { [CONFIG_FILE]: config.json },
  };
}
