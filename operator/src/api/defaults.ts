/**
 * Defaults for every optional LogPipeline field, in one place, so the operator, the `plan` CLI and
 * the docs agree. `resolveSpec` never mutates its input.
 */
import type { SaslMechanism } from '../../../common/src/worker-config';
import type {
  AutoscalingSpec,
  ColumnSpec,
  CsvFormatSpec,
  KeyExpression,
  KvFormatSpec,
  LogPipeline,
  ParserFormat,
  ParserRuleSpec,
  RetentionMove,
  SdFormatSpec,
} from './types';
import { durationMs } from './duration';
import { resolveIngest, type ResolvedIngest } from './defaults-ingest';
import { imageRepository } from './worker-policy';

/** The worker image the chart builds; overridable per pipeline. */
export const DEFAULT_WORKER_IMAGE = 'ghcr.io/logpipeline/logpipeline-worker:0.1.0';

/** Operator-wide defaults set once at start (the chart's worker image), before any reconcile. */
const operatorDefaults = {
  workerImage: DEFAULT_WORKER_IMAGE,
  workerImagePullPolicy: 'IfNotPresent',
  allowedWorkerImages: undefined as string[] | undefined,
};

/**
 * Sets the operator-wide worker image defaults (from LP_WORKER_IMAGE / LP_WORKER_IMAGE_PULL_POLICY)
 * and the worker image allowlist (LP_ALLOWED_WORKER_IMAGES).
 */
export function configureDefaults(opts: {
  workerImage?: string;
  workerImagePullPolicy?: string;
  allowedWorkerImages?: string[];
}): void {
  if (opts.workerImage) operatorDefaults.workerImage = opts.workerImage;
  if (opts.workerImagePullPolicy) operatorDefaults.workerImagePullPolicy = opts.workerImagePullPolicy;
  if (opts.allowedWorkerImages && opts.allowedWorkerImages.length > 0)
    operatorDefaults.allowedWorkerImages = [...opts.allowedWorkerImages];
}

/** The worker image allowlist: as configured, else the repository of the default worker image. */
export function workerImageAllowlist(): string[] {
  return operatorDefaults.allowedWorkerImages ?? [imageRepository(operatorDefaults.workerImage)];
}
/** Kafka partitions when the spec says nothing; also the default ceiling of autoscaling.maxReplicas. */
export const DEFAULT_PARTITIONS = 6;
/** Retention when the spec says nothing: Law 5651 plan of two years. */
export const DEFAULT_DELETE_AFTER = '730d';

/** Default floor of retention.deleteAfter: two years for the firewall preset (Law 5651), none for custom. */
export const DEFAULT_FIREWALL_MINIMUM_DELETE_AFTER = '730d';

/** The retention floor a preset implies when retention.minimumDeleteAfter is not set. */
export function defaultMinimumDeleteAfter(preset: string | undefined): string {
  return (preset ?? 'firewall') === 'custom' ? '0s' : DEFAULT_FIREWALL_MINIMUM_DELETE_AFTER;
}
/** Below this retention the operator warns (the regulation's minimum is six months). */
export const MIN_COMPLIANT_RETENTION_MS = 180 * 86_400_000;

/** A LogPipeline spec with every default applied; what builders consume. */
export interface ResolvedSpec {
  namespace: string;
  name: string;
  uid: string;
  kafka: {
    bootstrapServers: string[];
    sasl?: {
      mechanism: SaslMechanism;
      secretName: string;
      usernameKey: string;
      passwordKey: string;
    };
    tls?: { enabled: boolean; caSecretName?: string; caKey?: string; insecureSkipVerify: boolean };
    topic: { name: string; partitions: number; replicationFactor: number; config: Record<string, string> };
    consumerGroup: string;
  };
  parser: {
    format: ParserFormat;
    timezone: string;
    maxLineBytes: number;
    staticFields: Record<string, string>;
    requiredFields: string[];
    kv?: KvFormatSpec;
    csv?: CsvFormatSpec;
    structuredData?: SdFormatSpec;
    rules?: ParserRuleSpec[];
  };
  /** ParserCoverage: window, threshold and the stats table the workers write. */
  coverage: { windowMs: number; maxMissingSrcIpPercent: number; table: string };
  clickhouse: {
    url: string;
    credentials?: { secretName: string; usernameKey: string; passwordKey: string };
    adminCredentials?: { secretName: string; usernameKey: string; passwordKey: string };
    database: string;
    table: string;
    cluster?: string;
    preset: 'firewall' | 'custom';
    columns: ColumnSpec[];
    partitionBy?: KeyExpression;
    orderBy?: KeyExpression[];
    timeColumn: string;
    retention: {
      deleteAfterMs: number;
      deleteAfter: string;
      moves: RetentionMove[];
      materializeOnChange: boolean;
      /** The override that lets a spec change shorten retention (admission and ALTER). */
      allowShortening: boolean;
      /** The floor deleteAfter may not go below (default 730d for the firewall preset, 0 for custom). */
      minimumDeleteAfterMs: number;
    };
    storagePolicy?: string;
    dedupWindow: number;
  };
  workers: {
    image: string;
    imagePullPolicy: string;
    replicas: number;
    batch: { maxRows: number; maxBytes: number; maxDelayMs: number; maxLinesPerMessage: number };
    autoscaling: Required<Omit<AutoscalingSpec, 'targetDrainTime' | 'lagPerReplica'>> & {
      lagPerReplica?: number;
      targetDrainTimeMs?: number;
      scaleUpStabilizationMs: number;
      scaleDownStabilizationMs: number;
      pollIntervalMs: number;
    };
    resources: Record<string, unknown>;
    env: Array<Record<string, unknown>>;
    nodeSelector: Record<string, string>;
    tolerations: Array<Record<string, unknown>>;
    affinity?: Record<string, unknown>;
    podAnnotations: Record<string, string>;
    progressDeadline: string;
    progressDeadlineMs: number;
  };
  deadLetter: { enabled: boolean; topic: string; table: string };
  integrity: {
    enabled: boolean;
    signingKey?: { secretName: string; key: string };
    checkpointIntervalMs: number;
    tsaUrl?: string;
    table: string;
    checkpointTable: string;
    sealTable: string;
    tsaCredentialsSecret?: string;
    seal?: { schedule: 'daily'; graceMs: number; backfillDays: number; timeZone: string };
  };
  /** The syslog receiver (spec.ingest.syslog); absent when the pipeline has none. */
  ingest?: ResolvedIngest;
  deletionPolicy: 'Retain' | 'Delete';
}

/** Fills every default of `lp.spec`; assumes the spec passed admission (or `validatePipeline`). */
export function resolveSpec(lp: LogPipeline): ResolvedSpec {
  const { namespace, name } = lp.metadata;
  const s = lp.spec;
  const topicName = s.kafka.topic?.name ?? `${namespace}.${name}`;
  const deleteAfter = s.clickhouse.retention?.deleteAfter ?? DEFAULT_DELETE_AFTER;
  const as = s.workers?.autoscaling ?? {};
  const partitions = s.kafka.topic?.partitions ?? DEFAULT_PARTITIONS;
  const creds = s.clickhouse.credentialsSecretRef;
  const admin = s.clickhouse.adminCredentialsSecretRef;
  return {
    namespace,
    name,
    uid: lp.metadata.uid ?? '',
    kafka: {
      bootstrapServers: s.kafka.bootstrapServers,
      sasl: s.kafka.sasl && {
        mechanism: s.kafka.sasl.mechanism,
        secretName: s.kafka.sasl.secretRef.name,
        usernameKey: s.kafka.sasl.secretRef.usernameKey ?? 'username',
        passwordKey: s.kafka.sasl.secretRef.passwordKey ?? 'password',
      },
      tls: s.kafka.tls && {
        enabled: s.kafka.tls.enabled,
        caSecretName: s.kafka.tls.caSecretRef?.name,
        caKey: s.kafka.tls.caSecretRef?.key,
        insecureSkipVerify: s.kafka.tls.insecureSkipVerify ?? false,
      },
      topic: {
        name: topicName,
        partitions,
        replicationFactor: s.kafka.topic?.replicationFactor ?? 1,
        // LZ4 on the wire and on disk unless the user chose otherwise (seeds: LZ4 is the cheap win).
        config: { 'compression.type': 'lz4', ...(s.kafka.topic?.config ?? {}) },
      },
      consumerGroup: s.kafka.consumerGroup ?? `logpipeline.${namespace}.${name}`,
    },
    parser: {
      format: s.parser?.format ?? 'auto',
      timezone: s.parser?.timezone ?? 'UTC',
      maxLineBytes: s.parser?.maxLineBytes ?? 65536,
      staticFields: s.parser?.staticFields ?? {},
      requiredFields: s.parser?.requiredFields ?? [],
      ...(s.parser?.kv ? { kv: s.parser.kv } : {}),
      ...(s.parser?.csv ? { csv: s.parser.csv } : {}),
      ...(s.parser?.structuredData ? { structuredData: s.parser.structuredData } : {}),
      ...(s.parser?.rules?.length ? { rules: s.parser.rules } : {}),
    },
    coverage: {
      windowMs: durationMs(s.parser?.coverage?.window ?? '15m'),
      maxMissingSrcIpPercent: s.parser?.coverage?.maxMissingSrcIpPercent ?? 5,
      table: `${s.clickhouse.table}_parser_stats`,
    },
    clickhouse: {
      url: s.clickhouse.url,
      credentials: creds && {
        secretName: creds.name,
        usernameKey: creds.usernameKey ?? 'username',
        passwordKey: creds.passwordKey ?? 'password',
      },
      adminCredentials: admin && {
        secretName: admin.name,
        usernameKey: admin.usernameKey ?? 'username',
        passwordKey: admin.passwordKey ?? 'password',
      },
      database: s.clickhouse.database,
      table: s.clickhouse.table,
      cluster: s.clickhouse.cluster,
      preset: s.clickhouse.preset ?? 'firewall',
      columns: s.clickhouse.columns ?? [],
      partitionBy: s.clickhouse.partitionBy,
      orderBy: s.clickhouse.orderBy,
      timeColumn: s.clickhouse.timeColumn ?? 'ts',
      retention: {
        deleteAfter,
        deleteAfterMs: durationMs(deleteAfter),
        moves: s.clickhouse.retention?.moves ?? [],
        materializeOnChange: s.clickhouse.retention?.materializeOnChange ?? false,
        allowShortening: s.clickhouse.retention?.allowShortening ?? false,
        minimumDeleteAfterMs: durationMs(
          s.clickhouse.retention?.minimumDeleteAfter ?? defaultMinimumDeleteAfter(s.clickhouse.preset),
        ),
      },
      storagePolicy: s.clickhouse.storagePolicy,
      // Counted in inserts for the whole table: at ~100 inserts/s (data + DLQ tokens) 10000 covers
      // minutes of retries and restarts, not seconds; the hashes it keeps are tiny.
      dedupWindow: s.clickhouse.dedupWindow ?? 10_000,
    },
    workers: {
      image: s.workers?.image ?? operatorDefaults.workerImage,
      imagePullPolicy: s.workers?.imagePullPolicy ?? operatorDefaults.workerImagePullPolicy,
      replicas: s.workers?.replicas ?? 1,
      batch: {
        maxRows: s.workers?.batch?.maxRows ?? 100_000,
        maxBytes: s.workers?.batch?.maxBytes ?? 16 * 1024 * 1024,
        maxDelayMs: durationMs(s.workers?.batch?.maxDelay ?? '1s'),
        maxLinesPerMessage: s.workers?.batch?.maxLinesPerMessage ?? 100_000,
      },
      autoscaling: {
        enabled: as.enabled ?? false,
        minReplicas: as.minReplicas ?? 1,
        maxReplicas: as.maxReplicas ?? partitions,
        lagPerReplica: as.lagPerReplica ?? (as.targetDrainTime ? undefined : 100_000),
        targetDrainTimeMs: as.targetDrainTime ? durationMs(as.targetDrainTime) : undefined,
        activationLag: as.activationLag ?? 0,
        scaleUpStabilization: as.scaleUpStabilization ?? '0s',
        scaleDownStabilization: as.scaleDownStabilization ?? '5m',
        scaleUpStabilizationMs: durationMs(as.scaleUpStabilization ?? '0s'),
        scaleDownStabilizationMs: durationMs(as.scaleDownStabilization ?? '5m'),
        maxScaleUpStep: as.maxScaleUpStep ?? 4,
        maxScaleDownStep: as.maxScaleDownStep ?? 1,
        pollInterval: as.pollInterval ?? '15s',
        pollIntervalMs: durationMs(as.pollInterval ?? '15s'),
      },
      resources: s.workers?.resources ?? {
        requests: { cpu: '500m', memory: '512Mi' },
        limits: { memory: '1Gi' },
      },
      env: s.workers?.env ?? [],
      nodeSelector: s.workers?.nodeSelector ?? {},
      tolerations: s.workers?.tolerations ?? [],
      affinity: s.workers?.affinity,
      podAnnotations: s.workers?.podAnnotations ?? {},
      progressDeadline: s.workers?.progressDeadline ?? '10m',
      progressDeadlineMs: durationMs(s.workers?.progressDeadline ?? '10m'),
    },
    deadLetter: {
      enabled: s.deadLetter?.enabled ?? true,
      topic: s.deadLetter?.topic ?? `${topicName}.dlq`,
      table: s.deadLetter?.table ?? `${s.clickhouse.table}_dlq`,
    },
    integrity: {
      enabled: s.integrity?.enabled ?? false,
      signingKey: s.integrity?.signingKeySecretRef && {
        secretName: s.integrity.signingKeySecretRef.name,
        key: s.integrity.signingKeySecretRef.key,
      },
      checkpointIntervalMs: durationMs(s.integrity?.checkpointInterval ?? '5m'),
      tsaUrl: s.integrity?.tsaUrl,
      table: `${s.clickhouse.table}_integrity`,
      checkpointTable: `${s.clickhouse.table}_checkpoints`,
      sealTable: `${s.clickhouse.table}_seals`,
      tsaCredentialsSecret: s.integrity?.tsaCredentialsSecretRef?.name,
      seal: s.integrity?.seal && {
        schedule: s.integrity.seal.schedule,
        graceMs: durationMs(s.integrity.seal.grace ?? '1h'),
        backfillDays: s.integrity.seal.backfillDays ?? 7,
        timeZone: s.integrity.seal.timeZone ?? 'UTC',
      },
    },
    ...(s.ingest?.syslog ? { ingest: resolveIngest(s.ingest.syslog) } : {}),
    deletionPolicy: s.deletionPolicy ?? 'Retain',
  };
}
