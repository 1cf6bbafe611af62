/**
 * The LogPipeline API (logpipeline.io/v1alpha1) as TypeScript types. The CRD schema in
 * crds/logpipeline.io_logpipelines.yaml is the source of truth for admission; these types mirror it
 * and `applyDefaults()` (defaults.ts) fills what the schema leaves optional.
 */
import type { CsvFormat, KvFormat, SdFormat } from '../../../common/src/parser-contract';

import type { KeyFunction } from '../../../common/src/sql/key-functions';
import type { SaslMechanism } from '../../../common/src/worker-config';

export const GROUP = 'logpipeline.io';
export const VERSION = 'v1alpha1';
export const KIND = 'LogPipeline';
export const PLURAL = 'logpipelines';
export const API_VERSION = `${GROUP}/${VERSION}`;

/** Reference to one key of a Secret in the LogPipeline's namespace. */
export interface SecretKeyRef {
  name: string;
  key: string;
}

/** Kafka connection, auth and topic. */
export interface KafkaSpec {
  bootstrapServers: string[];
  /** SASL from a Secret; absent means no SASL. */
  sasl?: {
    mechanism: SaslMechanism;
    secretRef: { name: string; usernameKey?: string; passwordKey?: string };
  };
  /** TLS; `caSecretRef` names the CA bundle. */
  tls?: { enabled: boolean; caSecretRef?: SecretKeyRef; insecureSkipVerify?: boolean };
  topic?: {
    /** Defaults to `<namespace>.<name>`. Immutable. */
    name?: string;
    partitions?: number;
    replicationFactor?: number;
    /** Topic configs the operator manages (others are left alone). */
    config?: Record<string, string>;
  };
  /** Defaults to `logpipeline.<namespace>.<name>`. */
  consumerGroup?: string;
}

/** Supported log formats. */
export type ParserFormat =
  | 'auto'
  | 'rfc5424'
  | 'rfc3164'
  | 'fortigate'
  | 'paloalto'
  | 'cisco-asa'
  | 'iptables'
  | 'cef'
  | 'json'
  | 'pfsense'
  | 'juniper-srx'
  | 'huawei-usg'
  | 'sophos'
  | 'sonicwall'
  | 'checkpoint'
  | 'mikrotik'
  | 'kv'
  | 'csv'
  | 'structured-data';

/** How lines are parsed and enriched. */
export interface ParserSpec {
  format?: ParserFormat;
  /** IANA zone for timestamps that carry none (RFC 3164, some vendor formats). Default UTC. */
  timezone?: string;
  /** Lines longer than this go to the dead-letter queue. Default 65536. */
  maxLineBytes?: number;
  /** Static enrichment fields, available to columns as `static:<name>`. */
  staticFields?: Record<string, string>;
  /** Column sources every row must have; rows without them go to the DLQ as missing_field:<name>. Default none. */
  requiredFields?: string[];
  /** The ParserCoverage condition: share of rows without src_ip over a window, and the threshold. */
  coverage?: { window?: string; maxMissingSrcIpPercent?: number };
  /** format kv: a key/value format of your own. */
  kv?: KvFormatSpec;
  /** format csv: a delimited format of your own. */
  csv?: CsvFormatSpec;
  /** format structured-data: an RFC 5424 SD-ID mapping. */
  structuredData?: SdFormatSpec;
  /** Extra declarative formats `auto` tries first. */
  rules?: ParserRuleSpec[];
}

/** spec.parser.kv (the worker's contract). */
export type KvFormatSpec = KvFormat;

/** spec.parser.csv (the worker's contract). */
export type CsvFormatSpec = CsvFormat;

/** spec.parser.structuredData (the worker's contract). */
export type SdFormatSpec = SdFormat;

/** One entry of spec.parser.rules. */
export interface ParserRuleSpec {
  name?: string;
  match?: { prefix?: string; contains?: string };
  kv?: KvFormatSpec;
  csv?: CsvFormatSpec;
  structuredData?: SdFormatSpec;
}

/** One ClickHouse column: name, type (checked against a grammar), where its value comes from. */
export interface ColumnSpec {
  name: string;
  type: string;
  /** A parser output (timestamp, src_ip, …), `static:<name>`, `field:<vendorKey>`, or absent for DEFAULT only. */
  source?: string;
  /** Codec chain, e.g. ["Delta(4)", "ZSTD(1)"]. */
  codec?: string[];
  /** A literal default (validated as a literal, never an expression). */
  default?: string;
}

/** A structured expression: a column, optionally wrapped by one whitelisted function. */
export interface KeyExpression {
  column: string;
  function?: KeyFunction;
}

/** A retention move: after `after`, parts go to a disk or a volume. */
export interface RetentionMove {
  after: string;
  toDisk?: string;
  toVolume?: string;
}

/** ClickHouse target. */
export interface ClickHouseSpec {
  url: string;
  /** Secret with `username` and `password` keys (key names overridable). */
  credentialsSecretRef?: { name: string; usernameKey?: string; passwordKey?: string };
  /** Optional admin credentials used only to create the workers' insert-only and auditors' read-only users. */
  adminCredentialsSecretRef?: { name: string; usernameKey?: string; passwordKey?: string };
  database: string;
  table: string;
  cluster?: string;
  /** `firewall` preset, or `custom` with `columns`. Default firewall. */
  preset?: 'firewall' | 'custom';
  /** Extra columns (appended to the preset) or the whole schema with preset custom. */
  columns?: ColumnSpec[];
  partitionBy?: KeyExpression;
  orderBy?: KeyExpression[];
  /** Name of the timestamp column used by TTL. Default `ts`. */
  timeColumn?: string;
  retention?: {
    deleteAfter?: string;
    moves?: RetentionMove[];
    materializeOnChange?: boolean;
    /** Floor of deleteAfter (default 730d for the firewall preset, none for custom). */
    minimumDeleteAfter?: string;
    /** Explicit override: lets an update shorten deleteAfter or lower minimumDeleteAfter. */
    allowShortening?: boolean;
  };
  storagePolicy?: string;
  /** Window of recent insert tokens the table remembers for exactly-once retries. Default 10000. */
  dedupWindow?: number;
}

/** Autoscaling on consumer lag. */
export interface AutoscalingSpec {
  enabled?: boolean;
  minReplicas?: number;
  maxReplicas?: number;
  /** Target lag per replica (not total). */
  lagPerReplica?: number;
  /** Alternative/additional: drain the backlog within this duration at the measured rate. */
  targetDrainTime?: string;
  /** Below this total lag the workload may scale to zero / is not activated. */
  activationLag?: number;
  scaleUpStabilization?: string;
  scaleDownStabilization?: string;
  maxScaleUpStep?: number;
  maxScaleDownStep?: number;
  pollInterval?: string;
}

/** The worker Deployment. */
export interface WorkersSpec {
  image?: string;
  imagePullPolicy?: string;
  /** Fixed replicas when autoscaling is off. */
  replicas?: number;
  batch?: { maxRows?: number; maxBytes?: number; maxDelay?: string; maxLinesPerMessage?: number };
  autoscaling?: AutoscalingSpec;
  resources?: Record<string, unknown>;
  env?: Array<Record<string, unknown>>;
  nodeSelector?: Record<string, string>;
  tolerations?: Array<Record<string, unknown>>;
  affinity?: Record<string, unknown>;
  podAnnotations?: Record<string, string>;
  /** A partition with lag whose committed offset does not move for this long sets Stalled=True. Default 10m. */
  progressDeadline?: string;
}

/** Where unparseable lines and rejected rows go. */
export interface DeadLetterSpec {
  enabled?: boolean;
  /** Kafka topic; default `<topic>.dlq`. */
  topic?: string;
  /** ClickHouse table in the same database; default `<table>_dlq`. */
  table?: string;
}

/** Tamper evidence. */
export interface IntegritySpec {
  enabled?: boolean;
  /** Secret holding an Ed25519 private key (PEM, PKCS#8) under `key` (default `ed25519.pem`). */
  signingKeySecretRef?: SecretKeyRef;
  checkpointInterval?: string;
  /** Optional RFC 3161 Time Stamping Authority URL. */
  tsaUrl?: string;
  /** Secret with TSA credentials: `username`/`password`, `tls.crt`/`tls.key`, `ca.crt` (each optional). */
  tsaCredentialsSecretRef?: { name: string };
  /** Daily sealed evidence made by the operator. */
  seal?: SealSpec;
}

/** The operator's scheduled seal (docs/compliance.md, "Daily sealed evidence"). */
export interface SealSpec {
  schedule: 'daily';
  /** Wait after the day ends for late lines; default 1h. */
  grace?: string;
  /** How many past days are sealed when unsealed; default 7. */
  backfillDays?: number;
  /** IANA time zone of the day boundaries; default UTC. */
  timeZone?: string;
}

/** Transport of one syslog listener: UDP (RFC 5426), TCP (RFC 6587) or TLS (RFC 5425). */
export type SyslogProtocol = 'UDP' | 'TCP' | 'TLS';

/** One listening port of the syslog receiver (spec.ingest.syslog.listeners[]). */
export interface SyslogListenerSpec {
  /** DNS-1123 label; the Service port name. */
  name: string;
  protocol: SyslogProtocol;
  /** Service port (the container port is derived, see common/src/ingest-config.ts containerPortFor). */
  port: number;
  /** TCP/TLS framing: auto (octet counting detected per frame) or lf. Default auto. */
  framing?: 'auto' | 'lf';
}

/** The receiver's Service. */
export interface SyslogServiceSpec {
  type?: 'LoadBalancer' | 'NodePort' | 'ClusterIP';
  annotations?: Record<string, string>;
  loadBalancerIP?: string;
  /** Default Local for LoadBalancer and NodePort (the sender address survives). */
  externalTrafficPolicy?: 'Local' | 'Cluster';
}

/** spec.ingest.syslog: the syslog receiver Deployment, its Service and packing into Kafka. */
export interface SyslogIngestSpec {
  listeners: SyslogListenerSpec[];
  tls?: {
    secretRef: { name: string };
    clientAuth?: 'None' | 'Optional' | 'Required';
    clientCASecretRef?: SecretKeyRef;
  };
  service?: SyslogServiceSpec;
  allowedSourceCIDRs?: string[];
  replicas?: number;
  autoscaling?: {
    enabled?: boolean;
    minReplicas?: number;
    maxReplicas?: number;
    targetCPUUtilizationPercentage?: number;
  };
  packing?: { maxLines?: number; maxBytes?: number; linger?: string };
  compression?: 'lz4' | 'zstd';
  maxMessageSize?: number;
  udpReceiveBuffer?: number;
  maxBytesHeld?: number;
  resources?: Record<string, unknown>;
  nodeSelector?: Record<string, string>;
  tolerations?: Array<Record<string, unknown>>;
  affinity?: Record<string, unknown>;
  podAnnotations?: Record<string, string>;
}

/** spec.ingest: how lines get into the topic (today: a syslog receiver). */
export interface IngestSpec {
  syslog?: SyslogIngestSpec;
}

/** The desired state of a pipeline. */
export interface LogPipelineSpec {
  kafka: KafkaSpec;
  parser?: ParserSpec;
  clickhouse: ClickHouseSpec;
  workers?: WorkersSpec;
  deadLetter?: DeadLetterSpec;
  integrity?: IntegritySpec;
  ingest?: IngestSpec;
  deletionPolicy?: 'Retain' | 'Delete';
}

/** A status condition (metav1.Condition shape). */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}

/** Observed state. */
export interface LogPipelineStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  topic?: {
    name?: string;
    partitions?: number;
    clusterId?: string;
    topicId?: string;
    owner?: string;
    /** The topic's effective max.message.bytes (its own config or the broker default). */
    maxMessageBytes?: number;
  };
  table?: {
    database?: string;
    table?: string;
    serverIdentity?: string;
    serverVersion?: string;
    owner?: string;
  };
  workers?: {
    desired?: number;
    current?: number;
    ready?: number;
    selector?: string;
    /** Since when a scale-up's new workers start (WorkersStarting); null deletes it in a merge patch. */
    startingSince?: string | null;
  };
  /** The scheduled seal: the newest day sealed and the last failure (null deletes it in a merge patch). */
  seal?: { lastSealedDay?: string; lastSealTime?: string; lastFailure?: string } | null;
  /** Identity coverage of the last window (ParserCoverage condition). */
  parserCoverage?: {
    windowMs?: number;
    rows?: number;
    missingSrcIp?: number;
    missingSrcIpPercent?: number;
    topShapes?: Array<{ shape: string; rows: number }>;
  };
  /** The syslog receiver: where senders connect and how many receivers are ready. */
  ingest?: { endpoints?: string[]; desired?: number; ready?: number } | null;
  lag?: {
    total?: number;
    maxPartition?: number;
    smoothed?: number;
    ratePerSecond?: number;
    lastScaleTime?: string;
    lastScaleReason?: string;
  };
}

/** The LogPipeline custom resource. */
export interface LogPipeline {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata: {
    name: string;
    namespace: string;
    uid?: string;
    generation?: number;
    resourceVersion?: string;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: LogPipelineSpec;
  status?: LogPipelineStatus;
}
