import { resolveSpec } from '../api/defaults';
import type { LogPipeline, LogPipelineSpec } from '../api/types';
import { SECRET_ENV } from '../../../common/src/worker-config';
import { renderWorkerConfig } from './configmap';
import { buildDeployment } from './deployment';
import { CONFIG_HASH_ANNOTATION } from './labels';
import { buildPodDisruptionBudget } from './pdb';

function pipeline(spec: Partial<LogPipelineSpec> = {}): LogPipeline {
  return {
    apiVersion: 'logpipeline.io/v1alpha1',
    kind: 'LogPipeline',
    metadata: { name: 'fw', namespace: 'logs', uid: 'uid-1', generation: 3 },
    spec: {
      kafka: { bootstrapServers: ['kafka:9092'] },
      clickhouse: {
        url: 'http://ch:8123',
        database: 'logs',
        table: 'fw',
        credentialsSecretRef: { name: 'ch-creds' },
      },
      ...spec,
    },
  };
}

const columns = [{ name: 'ts', type: 'DateTime64(3)', source: 'timestamp' }];

function deploymentOf(lp: LogPipeline) {
  const spec = resolveSpec(lp);
  return buildDeployment(spec, renderWorkerConfig(spec, columns));
}

describe('buildDeployment', () => {
  const d = deploymentOf(
    pipeline({
      workers: {
        replicas: 3,
        podAnnotations: { 'prometheus.io/scrape': 'true' },
        nodeSelector: { pool: 'logs' },
        tolerations: [{ key: 'dedicated', operator: 'Exists' }],
      },
    }),
  );
  const pod = d.spec.template.spec;
  const c = pod.containers[0];

  it('names, labels and owns the Deployment', () => {
    expect(d.metadata.name).toBe('fw-worker');
    expect(d.metadata.namespace).toBe('logs');
    expect(d.metadata.labels).toMatchObject({
      'app.kubernetes.io/name': 'logpipeline-worker',
      'app.kubernetes.io/instance': 'fw',
      'logpipeline.io/pipeline': 'fw',
      'app.kubernetes.io/managed-by': 'logpipeline-operator',
    });
    expect(d.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'logpipeline.io/v1alpha1',
        kind: 'LogPipeline',
        name: 'fw',
        uid: 'uid-1',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(d.spec.selector.matchLabels).toEqual({
      'app.kubernetes.io/name': 'logpipeline-worker',
      'logpipeline.io/pipeline': 'fw',
    });
    expect(d.spec.template.metadata.labels).toMatchObject(d.spec.selector.matchLabels);
    expect((d.metadata as Record<string, unknown>).finalizers).toBeUndefined();
  });

  it('sets replicas from the spec when autoscaling is off', () => {
    expect(d.spec.replicas).toBe(3);
  });

  it('omits replicas entirely when autoscaling is on', () => {
    const auto = deploymentOf(
      pipeline({ workers: { replicas: 3, autoscaling: { enabled: true, minReplicas: 2 } } }),
    );
    expect('replicas' in auto.spec).toBe(false);
    expect(JSON.stringify(auto)).not.toContain('"replicas"');
  });

  it('runs under the restricted security profile', () => {
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(c.securityContext).toEqual({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.automountServiceAccountToken).toBe(false);
  });

  it('wires image, resources, probes and a named metrics port', () => {
    expect(c.image).toBe('ghcr.io/logpipeline/logpipeline-worker:0.1.0');
    expect(c.resources).toEqual({ requests: { cpu: '500m', memory: '512Mi' }, limits: { memory: '1Gi' } });
    expect(c.ports).toEqual([{ name: 'metrics', containerPort: 8080, protocol: 'TCP' }]);
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
  });

  it('mounts the config at /etc/logpipeline and a writable /tmp', () => {
    expect(c.volumeMounts).toEqual(
      expect.arrayContaining([
        { name: 'config', mountPath: '/etc/logpipeline', readOnly: true },
        { name: 'tmp', mountPath: '/tmp' },
      ]),
    );
    expect(pod.volumes).toEqual(
      expect.arrayContaining([{ name: 'config', configMap: { name: 'fw-worker-config' } }]),
    );
    expect(c.args).toEqual(['--config', '/etc/logpipeline/config.json']);
  });

  it('passes secrets only as secretKeyRefs', () => {
    const byName = Object.fromEntries(c.env.map((e) => [e.name, e]));
    expect(byName[SECRET_ENV.clickhouseUser].valueFrom).toEqual({
      secretKeyRef: { name: 'ch-creds', key: 'username' },
    });
    expect(byName[SECRET_ENV.clickhousePassword].valueFrom).toEqual({
      secretKeyRef: { name: 'ch-creds', key: 'password' },
    });
    expect(byName[SECRET_ENV.kafkaSaslUser]).toBeUndefined();
    for (const e of c.env)
      if (e.name.startsWith('LP_') && e.name !== 'LP_CONFIG') expect(e.value).toBeUndefined();
  });

  it('adds SASL, signing-key env and the CA volume when configured; user env cannot shadow ours', () => {
    const lp = pipeline({
      kafka: {
        bootstrapServers: ['k:9093'],
        sasl: { mechanism: 'scram-sha-512', secretRef: { name: 'kafka-user', passwordKey: 'pw' } },
        tls: { enabled: true, caSecretRef: { name: 'kafka-ca', key: 'ca.pem' } },
      },
      integrity: { enabled: true, signingKeySecretRef: { name: 'signer', key: 'ed25519.pem' } },
      workers: {
        env: [
          { name: SECRET_ENV.clickhousePassword, value: 'leak' },
          { name: 'EXTRA', value: '1' },
        ],
      },
    });
    const dep = deploymentOf(lp);
    const ct = dep.spec.template.spec.containers[0];
    const byName = Object.fromEntries(ct.env.map((e) => [e.name, e]));
    expect(byName[SECRET_ENV.kafkaSaslPassword].valueFrom).toEqual({
      secretKeyRef: { name: 'kafka-user', key: 'pw' },
    });
    expect(byName[SECRET_ENV.signingKey].valueFrom).toEqual({
      secretKeyRef: { name: 'signer', key: 'ed25519.pem' },
    });
    expect(byName[SECRET_ENV.clickhousePassword].value).toBeUndefined();
    expect(byName.EXTRA.value).toBe('1');
    expect(ct.env.filter((e) => e.name === SECRET_ENV.clickhousePassword)).toHaveLength(1);
    expect(dep.spec.template.spec.volumes).toContainEqual({
      name: 'kafka-ca',
      secret: { secretName: 'kafka-ca', items: [{ key: 'ca.pem', path: 'ca.crt' }] },
    });
    expect(ct.volumeMounts).toContainEqual({
      name: 'kafka-ca',
      mountPath: '/etc/logpipeline-tls',
      readOnly: true,
    });
  });

  it('passes the TSA credentials Secret as optional env, one var per key', () => {
    const lp = pipeline({
      integrity: {
        enabled: true,
        signingKeySecretRef: { name: 'signer', key: 'ed25519.pem' },
        tsaUrl: 'https://tsa.example/tsr',
        tsaCredentialsSecretRef: { name: 'tsa' },
      },
    });
    const env = deploymentOf(lp).spec.template.spec.containers[0].env;
    const tsa = env.filter((e) => e.name.startsWith('LP_TSA_'));
    expect(tsa.map((e) => [e.name, e.valueFrom])).toEqual([
      [SECRET_ENV.tsaUsername, { secretKeyRef: { name: 'tsa', key: 'username', optional: true } }],
      [SECRET_ENV.tsaPassword, { secretKeyRef: { name: 'tsa', key: 'password', optional: true } }],
      [SECRET_ENV.tsaClientCert, { secretKeyRef: { name: 'tsa', key: 'tls.crt', optional: true } }],
      [SECRET_ENV.tsaClientKey, { secretKeyRef: { name: 'tsa', key: 'tls.key', optional: true } }],
      [SECRET_ENV.tsaServerCa, { secretKeyRef: { name: 'tsa', key: 'ca.crt', optional: true } }],
    ]);
  });

  it('copies scheduling fields and pod annotations, and stamps the config hash', () => {
    expect(pod.nodeSelector).toEqual({ pool: 'logs' });
    expect(pod.tolerations).toEqual([{ key: 'dedicated', operator: 'Exists' }]);
    expect(pod.affinity).toBeUndefined();
    const ann: Record<string, string> = d.spec.template.metadata.annotations;
    expect(ann['prometheus.io/scrape']).toBe('true');
    expect(ann[CONFIG_HASH_ANNOTATION]).toMatch(/^[0-9a-f]{64}$/);
  });

  it('changes the pod-template hash when the config changes, and only then', () => {
    const a = deploymentOf(pipeline());
    const b = deploymentOf(pipeline());
    const c2 = deploymentOf(pipeline({ parser: { timezone: 'Europe/Istanbul' } }));
    const hash = (x: typeof a) => x.spec.template.metadata.annotations[CONFIG_HASH_ANNOTATION];
    expect(hash(a)).toBe(hash(b));
    expect(hash(c2)).not.toBe(hash(a));
  });
});

describe('buildPodDisruptionBudget', () => {
  it('allows one voluntary disruption over the worker selector', () => {
    const pdb = buildPodDisruptionBudget(resolveSpec(pipeline()));
    expect(pdb.apiVersion).toBe('policy/v1');
    expect(pdb.metadata.name).toBe('fw-worker');
    expect(pdb.spec).toEqual({
      maxUnavailable: 1,
      selector: {
        matchLabels: { 'app.kubernetes.io/name': 'logpipeline-worker', 'logpipeline.io/pipeline': 'fw' },
      },
    });
    expect(pdb.metadata.ownerReferences[0]).toMatchObject({
      kind: 'LogPipeline',
      uid: 'uid-1',
      controller: true,
    });
  });
});
