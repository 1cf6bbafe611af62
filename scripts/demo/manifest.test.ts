import fs from 'node:fs';
import path from 'node:path';
import { formatValidationError, validatePipeline } from '../../operator/src/api/validate';
import { buildDemoManifest, type DemoEndpoints } from './manifest';

const endpoints: DemoEndpoints = {
  kafkaBootstrap: '127.0.0.1:39092',
  clickhouseUrl: 'http://127.0.0.1:38123',
  clickhouseUser: 'logpipeline',
  clickhousePassword: 'bed-secret',
  signingKeyPem: '-----BEGIN PRIVATE KEY-----\nMC4CAQ\n-----END PRIVATE KEY-----\n',
};

const EXAMPLE = `
apiVersion: v1
kind: Secret
metadata: { name: clickhouse-writer, namespace: logging }
stringData: { username: writer, password: change-me }
---
apiVersion: logpipeline.io/v1alpha1
kind: LogPipeline
metadata:
  name: firewall
  namespace: logging
  labels: { team: noc }
  resourceVersion: "42"
spec:
  kafka:
    bootstrapServers: [kafka-0.kafka:9093, kafka-1.kafka:9093]
    sasl: { mechanism: scram-sha-512, secretRef: { name: kafka-user } }
    tls: { enabled: true }
    topic: { partitions: 12, replicationFactor: 3 }
  parser: { format: auto, timezone: Europe/Istanbul }
  clickhouse:
    url: https://clickhouse.logging.svc:8443
    credentialsSecretRef: { name: clickhouse-writer }
    adminCredentialsSecretRef: { name: clickhouse-admin, usernameKey: user, passwordKey: pass }
    database: logs
    table: firewall
    cluster: prod
  workers:
    autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 40 }
  integrity:
    enabled: true
    signingKeySecretRef: { name: integrity-key, key: ed25519.pem }
    tsaUrl: https://tsa.example/tsr
status:
  conditions: []
`;

describe('buildDemoManifest', () => {
  const m = buildDemoManifest(EXAMPLE, endpoints, { namespace: 'demo', maxReplicas: 4 });

  it('points the pipeline at the bed, in the demo namespace, without server-owned metadata', () => {
    expect(m.pipeline.metadata).toEqual({ name: 'firewall', namespace: 'demo', labels: { team: 'noc' } });
    expect(m.pipeline.status).toBeUndefined();
    expect(m.pipeline.spec.kafka.bootstrapServers).toEqual(['127.0.0.1:39092']);
    expect(m.pipeline.spec.clickhouse.url).toBe('http://127.0.0.1:38123');
    expect(m.pipeline.spec.parser).toEqual({ format: 'auto', timezone: 'Europe/Istanbul' });
    expect(m.pipeline.spec.kafka.topic).toEqual({ partitions: 12, replicationFactor: 1 });
  });

  it('drops what a single local node cannot serve and says so', () => {
    expect(m.pipeline.spec.kafka.sasl).toBeUndefined();
    expect(m.pipeline.spec.kafka.tls).toBeUndefined();
    expect(m.pipeline.spec.clickhouse.cluster).toBeUndefined();
    expect(m.pipeline.spec.integrity).toEqual({
      enabled: true,
      signingKeySecretRef: { name: 'integrity-key', key: 'ed25519.pem' },
    });
    expect(m.pipeline.spec.workers?.autoscaling).toEqual({ enabled: true, minReplicas: 2, maxReplicas: 4 });
    expect(m.notes).toEqual([
      'kafka.sasl removed: the local broker has no SASL listener',
      'kafka.tls removed: the local broker listens in plaintext on loopback',
      'kafka.topic.replicationFactor set to 1: the local broker is a single node',
      'clickhouse.cluster removed: the local ClickHouse engine is a single server',
      'integrity.tsaUrl removed: no time-stamping authority is reachable offline',
      'workers.autoscaling.maxReplicas capped at 4 (workers are local processes here)',
    ]);
  });

  it("fills every referenced Secret with the bed's credentials or the fresh key, ignoring the example's values", () => {
    expect(m.secrets).toEqual([
      { name: 'clickhouse-writer', stringData: { username: 'logpipeline', password: 'bed-secret' } },
      { name: 'clickhouse-admin', stringData: { user: 'logpipeline', pass: 'bed-secret' } },
      { name: 'integrity-key', stringData: { 'ed25519.pem': endpoints.signingKeyPem } },
    ]);
  });

  it('overrides lagPerReplica on request', () => {
    const tuned = buildDemoManifest(EXAMPLE, endpoints, {
      namespace: 'demo',
      maxReplicas: 4,
      lagPerReplica: 1000,
    });
    expect(tuned.pipeline.spec.workers?.autoscaling?.lagPerReplica).toBe(1000);
    expect(tuned.notes).toContain('workers.autoscaling.lagPerReplica set to 1000 (--lag-per-replica)');
    expect(m.pipeline.spec.workers?.autoscaling?.lagPerReplica).toBeUndefined();
  });

  it('leaves a minimal pipeline as it is apart from the endpoints', () => {
    const minimal = buildDemoManifest(
      'apiVersion: logpipeline.io/v1alpha1\nkind: LogPipeline\nmetadata: { name: fw }\nspec:\n  kafka: { bootstrapServers: [k:9092] }\n  clickhouse: { url: "http://c:8123", database: logs, table: fw }\n  workers: { replicas: 2 }\n',
      endpoints,
      { namespace: 'demo', maxReplicas: 4 },
    );
    expect(minimal.notes).toEqual([]);
    expect(minimal.secrets).toEqual([]);
    expect(minimal.pipeline.spec).toEqual({
      kafka: { bootstrapServers: ['127.0.0.1:39092'] },
      clickhouse: { url: 'http://127.0.0.1:38123', database: 'logs', table: 'fw' },
      workers: { replicas: 2 },
    });
  });

  it('refuses manifests without a usable LogPipeline', () => {
    expect(() =>
      buildDemoManifest('kind: Secret\nmetadata: { name: x }\n', endpoints, {
        namespace: 'd',
        maxReplicas: 1,
      }),
    ).toThrow(/no LogPipeline/);
    expect(() =>
      buildDemoManifest(
        'apiVersion: logpipeline.io/v1\nkind: LogPipeline\nmetadata: { name: x }\nspec: {}\n',
        endpoints,
        { namespace: 'd', maxReplicas: 1 },
      ),
    ).toThrow(/apiVersion/);
    expect(() => buildDemoManifest('a: [1,\n', endpoints, { namespace: 'd', maxReplicas: 1 })).toThrow(
      /example manifest/,
    );
  });
});

describe('the demo applied to examples/firewall.yaml', () => {
  const text = fs.readFileSync(path.join(__dirname, '../../examples/firewall.yaml'), 'utf8');
  const m = buildDemoManifest(text, endpoints, { namespace: 'demo', maxReplicas: 4 });

  it('yields a pipeline that passes admission', () => {
    expect(validatePipeline(m.pipeline).map(formatValidationError)).toEqual([]);
  });

  it('creates exactly the Secrets the pipeline still references', () => {
    const refs = [
      m.pipeline.spec.clickhouse.credentialsSecretRef?.name,
      m.pipeline.spec.integrity?.signingKeySecretRef?.name,
    ].filter(Boolean);
    expect(m.secrets.map((s) => s.name).sort()).toEqual([...refs].sort());
    expect(m.pipeline.spec.kafka.sasl).toBeUndefined();
    expect(m.pipeline.spec.kafka.tls).toBeUndefined();
  });
});

describe('demo manifest: the syslog receiver', () => {
  const endpoints = {
    kafkaBootstrap: '127.0.0.1:9092',
    clickhouseUrl: 'http://127.0.0.1:8123',
    clickhouseUser: 'u',
    clickhousePassword: 'p',
    signingKeyPem: 'pem',
  };
  const yamlText = fs.readFileSync(path.join(__dirname, '../../examples/firewall-syslog.yaml'), 'utf8');

  it('replaces the example receiver with one local TCP listener (LF framing) on the given port', () => {
    const m = buildDemoManifest(yamlText, endpoints, {
      namespace: 'demo',
      maxReplicas: 2,
      syslogPort: 15514,
    });
    expect(m.pipeline.spec.ingest).toEqual({
      syslog: { listeners: [{ name: 'tcp', protocol: 'TCP', port: 15514, framing: 'lf' }], replicas: 1 },
    });
    expect(m.notes.join('\n')).toContain('15514');
  });

  it('drops the receiver with --direct', () => {
    const m = buildDemoManifest(yamlText, endpoints, { namespace: 'demo', maxReplicas: 2 });
    expect(m.pipeline.spec.ingest).toBeUndefined();
    expect(m.notes.join('\n')).toContain('--direct');
  });
});
