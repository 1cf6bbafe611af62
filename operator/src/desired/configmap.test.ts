import { resolveSpec } from '../api/defaults';
import type { LogPipeline } from '../api/types';
import type { WorkerConfig } from '../../../common/src/worker-config';
import { buildConfigMap, renderWorkerConfig, workerMaxValueBytes } from './configmap';
import { stableJson } from '../../../common/src/stable-json';
import { CONFIG_HASH_ANNOTATION, labelValue, selectorString } from './labels';

const lp: LogPipeline = {
  apiVersion: 'logpipeline.io/v1alpha1',
  kind: 'LogPipeline',
  metadata: { name: 'fw', namespace: 'logs', uid: 'uid-1' },
  spec: {
    kafka: {
      bootstrapServers: ['a:9092', 'b:9092'],
      sasl: { mechanism: 'plain', secretRef: { name: 'kafka-user' } },
      tls: { enabled: true, caSecretRef: { name: 'ca', key: 'ca.pem' } },
    },
    parser: { format: 'fortigate', staticFields: { site: 'ist', dc: 'ank' } },
    clickhouse: {
      url: 'http://ch:8123',
      database: 'logs',
      table: 'fw',
      credentialsSecretRef: { name: 'ch-creds' },
    },
    workers: { batch: { maxRows: 5000, maxDelay: '250ms' } },
  },
};
const columns = [
  { name: 'ts', type: 'DateTime64(3)', source: 'timestamp' },
  { name: 'src_ip', type: 'IPv6', source: 'src_ip' },
];

describe('worker max value bytes (bound on a decoded content-encoding value)', () => {
  const withSpec = (extra: Partial<LogPipeline['spec']>, topicConfig?: Record<string, string>) =>
    resolveSpec({
      ...lp,
      spec: { ...lp.spec, ...extra, kafka: { ...lp.spec.kafka, topic: { config: topicConfig } } },
    });
  const syslog = (maxBytes?: number) => ({
    syslog: { listeners: [{ name: 'tcp', protocol: 'TCP' as const, port: 514 }], packing: { maxBytes } },
  });

  it('is left out at the 16 MiB default (other pipelines render byte-identical configs)', () => {
    expect(workerMaxValueBytes(withSpec({}))).toBeUndefined();
    expect(workerMaxValueBytes(withSpec({ ingest: syslog() }))).toBeUndefined();
    expect(
      JSON.parse(renderWorkerConfig(withSpec({ ingest: syslog() }), columns).json).kafka,
    ).not.toHaveProperty('maxValueBytes');
  });

  it("follows the receiver's packing.maxBytes and the topic's max.message.bytes when larger", () => {
    const packed = withSpec({ ingest: syslog(48 << 20) }, { 'max.message.bytes': String(50 << 20) });
    expect(workerMaxValueBytes(packed)).toBe(50 << 20);
    expect(JSON.parse(renderWorkerConfig(packed, columns).json).kafka.maxValueBytes).toBe(50 << 20);
    expect(
      workerMaxValueBytes(withSpec({ ingest: syslog(32 << 20) }, { 'max.message.bytes': '1048576' })),
    ).toBe(32 << 20);
    expect(workerMaxValueBytes(withSpec({}, { 'max.message.bytes': 'lots' }))).toBeUndefined();
  });
});

describe('worker config', () => {
  const spec = resolveSpec(lp);
  const rendered = renderWorkerConfig(spec, columns);
  const cfg = JSON.parse(rendered.json) as WorkerConfig;

  it('renders every WorkerConfig field from the resolved spec', () => {
    expect(cfg.pipeline).toEqual({ namespace: 'logs', name: 'fw', uid: 'uid-1' });
    expect(cfg.kafka).toEqual({
      brokers: ['a:9092', 'b:9092'],
      topic: 'logs.fw',
      groupId: 'logpipeline.logs.fw',
      clientId: 'logpipeline-logs-fw',
      sasl: { mechanism: 'plain' },
      tls: { enabled: true, caFile: '/etc/logpipeline-tls/ca.crt', insecureSkipVerify: false },
    });
    expect(cfg.parser).toEqual({
      format: 'fortigate',
      timezone: 'UTC',
      maxLineBytes: 65536,
      staticFields: { dc: 'ank', site: 'ist' },
      requiredFields: [],
    });
    expect(cfg.coverage).toEqual({ table: 'fw_parser_stats', windowMs: 60_000 });
    expect(cfg.clickhouse).toEqual({
      url: 'http://ch:8123',
      database: 'logs',
      table: 'fw',
      columns,
      retainMs: 730 * 86_400_000,
      partitionBy: { column: 'ts', function: 'toYYYYMMDD' },
    });
    expect(cfg.batch).toEqual({
      maxRows: 5000,
      maxBytes: 16 * 1024 * 1024,
      maxDelayMs: 250,
      maxLinesPerMessage: 100_000,
    });
    expect(cfg.deadLetter).toEqual({ enabled: true, topic: 'logs.fw.dlq', table: 'fw_dlq' });
    expect(cfg.integrity).toEqual({
      enabled: false,
      table: 'fw_integrity',
      checkpointTable: 'fw_checkpoints',
      checkpointIntervalMs: 300_000,
    });
    // The default time column is left out, so a config rendered before the field existed is unchanged.
    expect('timeColumn' in cfg.integrity).toBe(false);
    expect(cfg.httpPort).toBe(8080);
  });

  it("names the table's time column for the integrity chain (custom schemas may not call it ts)", () => {
    const custom = resolveSpec({
      ...lp,
      spec: { ...lp.spec, clickhouse: { ...lp.spec.clickhouse, timeColumn: 'at' } },
    });
    const atColumns = [{ name: 'at', type: 'DateTime', source: 'timestamp' }];
    const cfg = JSON.parse(renderWorkerConfig(custom, atColumns).json) as WorkerConfig;
    expect(cfg.integrity.timeColumn).toBe('at');
  });

  it('never contains secret names or values', () => {
    expect(rendered.json).not.toContain('ch-creds');
    expect(rendered.json).not.toContain('kafka-user');
    expect(rendered.json).not.toMatch(/password/i);
  });

  it('is canonical: key order does not change bytes or hash', () => {
    const reordered: LogPipeline = {
      ...lp,
      spec: { ...lp.spec, parser: { staticFields: { dc: 'ank', site: 'ist' }, format: 'fortigate' } },
    };
    expect(renderWorkerConfig(resolveSpec(reordered), columns)).toEqual(rendered);
    expect(stableJson({ b: 1, a: { d: undefined, c: [2, { z: 1, y: 2 }] } })).toBe(
      '{"a":{"c":[2,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('builds the ConfigMap with the config, its hash and owner', () => {
    const cm = buildConfigMap(spec, rendered);
    expect(cm.metadata.name).toBe('fw-worker-config');
    expect(cm.data['config.json']).toBe(rendered.json);
    expect(cm.metadata.annotations[CONFIG_HASH_ANNOTATION]).toBe(rendered.hash);
    expect(cm.metadata.ownerReferences[0]).toEqual({
      apiVersion: 'logpipeline.io/v1alpha1',
      kind: 'LogPipeline',
      name: 'fw',
      uid: 'uid-1',
      controller: true,
      blockOwnerDeletion: true,
    });
  });
});

describe('labels', () => {
  it('keeps label values within 63 characters, stably', () => {
    const long = 'p'.repeat(100);
    expect(labelValue('short')).toBe('short');
    expect(labelValue(long)).toHaveLength(63);
    expect(labelValue(long)).toBe(labelValue(long));
    expect(labelValue(long)).not.toBe(labelValue('p'.repeat(99)));
  });

  it('renders the selector string', () => {
    expect(selectorString('fw')).toBe('app.kubernetes.io/name=logpipeline-worker,logpipeline.io/pipeline=fw');
  });
});
