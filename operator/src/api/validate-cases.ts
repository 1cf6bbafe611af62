/**
 * Shared examples of valid and invalid LogPipelines with the errors admission reports for them. The
 * unit tests run them through `validatePipeline`, the admission integration test through the real
 * kube-apiserver, so the offline validator and the CRD are held to the same table.
 */
import type { ValidationErrorType } from './validate-structure';
import type { LogPipeline } from './types';

/** A complete, valid pipeline exercising most optional fields. */
export function validPipeline(name = 'fw', namespace = 'default'): LogPipeline {
  return {
    apiVersion: 'logpipeline.io/v1alpha1',
    kind: 'LogPipeline',
    metadata: { name, namespace },
    spec: {
      kafka: {
        bootstrapServers: ['kafka-0.kafka:9092', '[::1]:9093'],
        sasl: { mechanism: 'scram-sha-512', secretRef: { name: 'kafka-creds' } },
        tls: { enabled: true, caSecretRef: { name: 'kafka-ca', key: 'ca.crt' } },
        topic: {
          name: 'firewall.logs',
          partitions: 12,
          replicationFactor: 3,
          config: { 'retention.ms': '86400000' },
        },
      },
      parser: { format: 'fortigate', timezone: 'Europe/Istanbul', staticFields: { site: 'ist1' } },
      clickhouse: {
        url: 'http://clickhouse.logs.svc:8123',
        credentialsSecretRef: { name: 'ch-writer' },
        database: 'logs',
        table: 'firewall',
        columns: [
          {
            name: 'site',
            type: 'LowCardinality(String)',
            source: 'static:site',
            codec: ['ZSTD(1)'],
            default: "''",
          },
        ],
        partitionBy: { column: 'ts', function: 'toYYYYMMDD' },
        orderBy: [{ column: 'src_ip' }, { column: 'ts' }],
        retention: {
          deleteAfter: '730d',
          moves: [
            { after: '7d', toDisk: 'warm' },
            { after: '90d', toVolume: 'cold' },
          ],
        },
        storagePolicy: 'hot_warm_cold',
      },
      workers: {
        autoscaling: {
          enabled: true,
          minReplicas: 1,
          maxReplicas: 12,
          lagPerReplica: 50_000,
          scaleDownStabilization: '5m',
        },
        batch: { maxRows: 200_000, maxDelay: '1s500ms' },
        resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { memory: '2Gi' } },
        env: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=1536' }],
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'logs', effect: 'NoSchedule' }],
      },
      deadLetter: { enabled: true },
      integrity: {
        enabled: true,
        signingKeySecretRef: { name: 'signing', key: 'ed25519.pem' },
        checkpointInterval: '5m',
      },
      deletionPolicy: 'Retain',
    },
  };
}

/** One expected error: where, what kind, and for cross-field rules which rule. */
export interface ExpectedError {
  field: string;
  type: ValidationErrorType;
  rule?: string;
}

/** An example: `change` turns validPipeline() into the object under test (the update, with `before`). */
export interface PipelineCase {
  name: string;
  /** For update cases: turns validPipeline() into the stored object first. */
  before?(lp: LogPipeline): void;
  change(lp: LogPipeline): void;
  /** Errors admission reports; empty for valid examples. */
  expect: ExpectedError[];
}

/** Objects and updates that admission accepts. */
export const VALID_CASES: PipelineCase[] = [
  { name: 'the full example', change: () => undefined, expect: [] },
  {
    name: 'only required fields',
    change: (lp) => {
      lp.spec = {
        kafka: { bootstrapServers: ['k:9092'] },
        clickhouse: { url: 'https://ch:8443', database: 'db', table: 't' },
      };
    },
    expect: [],
  },
  {
    name: 'a move just before the default deleteAfter (730d)',
    change: (lp) => (lp.spec.clickhouse.retention = { moves: [{ after: '729d23h', toVolume: 'cold' }] }),
    expect: [],
  },
  {
    name: 'fixed replicas equal to the partition count, autoscaling off',
    change: (lp) => (lp.spec.workers = { replicas: 12, autoscaling: { enabled: false, minReplicas: 0 } }),
    expect: [],
  },
  {
    name: 'minReplicas up to the default partition count when maxReplicas is unset',
    change: (lp) => {
      delete lp.spec.kafka.topic;
      lp.spec.workers = { autoscaling: { enabled: true, minReplicas: 6 } };
    },
    expect: [],
  },
  {
    name: 'partitions grow on update',
    change: (lp) => (lp.spec.kafka.topic!.partitions = 24),
    before: () => undefined,
    expect: [],
  },
  {
    name: 'unchanged immutable fields on update, other fields changed',
    before: () => undefined,
    change: (lp) => {
      lp.spec.clickhouse.retention = { deleteAfter: '1095d' };
      lp.spec.workers!.autoscaling!.maxReplicas = 10;
    },
    expect: [],
  },
  {
    name: 'retention shortened on update with the explicit override',
    before: (lp) => (lp.spec.clickhouse.retention!.deleteAfter = '1095d'),
    change: (lp) => {
      lp.spec.clickhouse.retention!.deleteAfter = '800d';
      lp.spec.clickhouse.retention!.allowShortening = true;
    },
    expect: [],
  },
  {
    name: 'a short retention below a lowered floor, at creation',
    change: (lp) =>
      (lp.spec.clickhouse.retention = { deleteAfter: '30d', minimumDeleteAfter: '7d', moves: [] }),
    expect: [],
  },
];

/** Builds the stored object (update cases) and the object under test of `c`. */
export function materialize(
  c: PipelineCase,
  name = 'fw',
  namespace = 'default',
): { before?: LogPipeline; object: LogPipeline } {
  const object = validPipeline(name, namespace);
  if (!c.before) {
    c.change(object);
    return { object };
  }
  c.before(object);
  const before = structuredClone(object);
  c.change(object);
  return { before, object };
}
