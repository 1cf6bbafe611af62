/**
 * The operator chart's optional features (ServiceMonitor, PrometheusRule, NetworkPolicy, PDB,
 * several replicas, pinned images) rendered by the real helm binary, and values.schema.json
 * refusing bad values before anything renders.
 */
import { METRICS_PORT_NAME } from '../operator/src/desired/deployment';
import { commonLabels, PIPELINE_LABEL } from '../operator/src/desired/labels';
import { OperatorMetrics } from '../operator/src/observability/metrics';
import { envOf, find, FULLNAME, NS, operatorPod, render } from './chart-fixtures';

describe('chart with every option on', () => {
  const values = {
    replicaCount: 2,
    logLevel: 'debug',
    image: { digest: `sha256:${'a'.repeat(64)}` },
    worker: { image: { tag: '9.9.9', pullPolicy: 'Always' }, allowedImages: ['mirror.corp/lp/'] },
    extraEnv: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=384' }],
    serviceMonitor: { enabled: true, labels: { release: 'kube-prometheus' } },
    prometheusRule: { enabled: true, additionalRules: [{ alert: 'Custom', expr: 'vector(1)' }] },
    networkPolicy: {
      enabled: true,
      apiServerCidrs: ['10.0.0.1/32'],
      metricsFrom: [{ namespaceSelector: { matchLabels: { name: 'monitoring' } } }],
    },
    podDisruptionBudget: { enabled: true },
    workerPodMonitor: { enabled: true },
  };
  const objects = render(values);
  const podLabels = (
    find(objects, 'Deployment', FULLNAME) as unknown as {
      spec: { template: { metadata: { labels: Record<string, string> } } };
    }
  ).spec.template.metadata.labels;

  it('runs two replicas behind leader election with a PDB that selects them', () => {
    const dep = find(objects, 'Deployment', FULLNAME) as unknown as {
      spec: { replicas: number; strategy?: unknown };
    };
    expect(dep.spec.replicas).toBe(2);
    expect(dep.spec.strategy).toBeUndefined();
    const pdb = find(objects, 'PodDisruptionBudget', FULLNAME, NS) as unknown as {
      spec: { minAvailable: number; selector: { matchLabels: Record<string, string> } };
    };
    expect(pdb.spec.minAvailable).toBe(1);
    expect(podLabels).toMatchObject(pdb.spec.selector.matchLabels);
  });

  it('pins the operator image by digest and passes the worker image and extra env through', () => {
    const c = operatorPod(objects).containers[0];
    expect(c.image).toBe(`ghcr.io/logpipeline/logpipeline-operator@sha256:${'a'.repeat(64)}`);
    expect(envOf(c)).toMatchObject({
      LOG_LEVEL: 'debug',
      LP_WORKER_IMAGE: 'ghcr.io/logpipeline/logpipeline-worker:9.9.9',
      LP_WORKER_IMAGE_PULL_POLICY: 'Always',
      // The chart's own worker repository is always allowed; allowedImages adds to it.
      LP_ALLOWED_WORKER_IMAGES: 'ghcr.io/logpipeline/logpipeline-worker,mirror.corp/lp/',
      NODE_OPTIONS: '--max-old-space-size=384',
    });
  });

  it('scrapes the metrics Service with a ServiceMonitor and alerts on the same job', () => {
    const svc = find(objects, 'Service', `${FULLNAME}-metrics`);
    const sm = find(objects, 'ServiceMonitor', FULLNAME, NS) as unknown as {
      metadata: { labels: Record<string, string> };
      spec: {
        selector: { matchLabels: Record<string, string> };
        endpoints: Array<{ port: string; path: string }>;
        namespaceSelector: { matchNames: string[] };
      };
    };
    expect(svc.metadata.labels).toMatchObject(sm.spec.selector.matchLabels);
    expect(sm.spec.endpoints[0]).toMatchObject({ port: 'http-metrics', path: '/metrics' });
    expect(sm.spec.namespaceSelector.matchNames).toEqual([NS]);
    expect(sm.metadata.labels.release).toBe('kube-prometheus');
    const rule = find(objects, 'PrometheusRule', FULLNAME, NS) as unknown as {
      spec: { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> };
    };
    const rules = rule.spec.groups[0].rules;
    expect(rules.map((r) => r.alert)).toEqual(
      expect.arrayContaining(['LogPipelineOperatorDown', 'LogPipelineLagHigh', 'Custom']),
    );
    expect(rules.find((r) => r.alert === 'LogPipelineOperatorDown')?.expr).toContain(
      `job="${svc.metadata.name}"`,
    );
  });

  it('alerts only on metrics the operator actually exports', async () => {
    const exported = new Set((await new OperatorMetrics().registry.getMetricsAsJSON()).map((m) => m.name));
    const rules = (
      find(objects, 'PrometheusRule', FULLNAME) as unknown as {
        spec: { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> };
      }
    ).spec.groups[0].rules;
    const used = rules.flatMap(
      (r) => r.expr.match(/logpipeline_operator_[a-z_]+|logpipeline_condition/g) ?? [],
    );
    expect(used.length).toBeGreaterThanOrEqual(3);
    for (const name of used) expect({ name, exported: exported.has(name) }).toEqual({ name, exported: true });
  });

  it('scrapes the worker pods the operator creates, labelled by pipeline, for the lag alert', () => {
    const pm = find(objects, 'PodMonitor', `${FULLNAME}-workers`, NS) as unknown as {
      spec: {
        namespaceSelector: { any?: boolean };
        selector: { matchLabels: Record<string, string> };
        podMetricsEndpoints: Array<{
          port: string;
          relabelings: Array<{ sourceLabels: string[]; targetLabel: string }>;
        }>;
      };
    };
    expect(pm.spec.namespaceSelector).toEqual({ any: true });
    // The selector must match the labels the operator's own builder puts on worker pods.
    expect(commonLabels('any-pipeline')).toMatchObject(pm.spec.selector.matchLabels);
    const endpoint = pm.spec.podMetricsEndpoints[0];
    expect(endpoint.port).toBe(METRICS_PORT_NAME);
    const metaLabel = `__meta_kubernetes_pod_label_${PIPELINE_LABEL.replace(/[^a-zA-Z0-9_]/g, '_')}`;
    expect(endpoint.relabelings).toEqual([{ sourceLabels: [metaLabel], targetLabel: 'pipeline' }]);
    const rules = (
      find(objects, 'PrometheusRule', FULLNAME) as unknown as {
        spec: { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> };
      }
    ).spec.groups[0].rules;
    expect(rules.find((r) => r.alert === 'LogPipelineLagHigh')?.expr).toMatch(
      /sum by \(namespace, pipeline\) \(logpipeline_worker_partition_lag\)/,
    );
    expect(rules.find((r) => r.alert === 'LogPipelineNotReady')?.expr).toContain('logpipeline_condition{');
  });

  it('limits the worker PodMonitor to the watched namespaces', () => {
    const pm = find(
      render({ workerPodMonitor: { enabled: true }, watchNamespaces: ['team-a'] }),
      'PodMonitor',
    ) as unknown as {
      spec: { namespaceSelector: unknown };
    };
    expect(pm.spec.namespaceSelector).toEqual({ matchNames: ['team-a'] });
  });

  it('confines the operator pod with a NetworkPolicy: metrics in; DNS, API server and data plane out', () => {
    const np = find(objects, 'NetworkPolicy', FULLNAME, NS) as unknown as {
      spec: {
        podSelector: { matchLabels: Record<string, string> };
        policyTypes: string[];
        ingress: Array<{ ports: unknown[]; from?: unknown[] }>;
        egress: Array<{ ports: Array<{ port: number }>; to?: unknown[] }>;
      };
    };
    expect(podLabels).toMatchObject(np.spec.podSelector.matchLabels);
    expect(np.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(np.spec.ingress).toEqual([
      { ports: [{ port: 'http-metrics', protocol: 'TCP' }], from: values.networkPolicy.metricsFrom },
    ]);
    const ports = np.spec.egress.map((e) => e.ports.map((p) => p.port));
    expect(ports).toEqual([
      [53, 53],
      [443, 6443],
      [9092, 9093, 8123, 8443],
    ]);
    expect(np.spec.egress[1].to).toEqual([{ ipBlock: { cidr: '10.0.0.1/32' } }]);
  });
});

describe('chart values validation', () => {
  it('runs one replica with Recreate and no Lease grant when leader election is off', () => {
    const objects = render({ leaderElection: { enabled: false } });
    expect(objects.some((o) => o.kind === 'Role')).toBe(false);
    const dep = find(objects, 'Deployment', FULLNAME) as unknown as { spec: { strategy: { type: string } } };
    expect(dep.spec.strategy.type).toBe('Recreate');
    expect(envOf(operatorPod(objects).containers[0]).LEADER_ELECT).toBe('false');
  });

  it.each([
    ['an unknown log level', { logLevel: 'verbose' }, /logLevel/],
    [
      'two replicas without leader election',
      { replicaCount: 2, leaderElection: { enabled: false } },
      /replicaCount/,
    ],
    ['an unknown key', { replicas: 2 }, /additional properties 'replicas'/],
    ['an invalid namespace name', { watchNamespaces: ['Team_A'] }, /watchNamespaces/],
    ['a string port', { metrics: { port: 'http' } }, /metrics\/port/],
    ['an unknown pull policy', { image: { pullPolicy: 'Sometimes' } }, /pullPolicy/],
    ['a malformed digest', { image: { digest: 'latest' } }, /digest/],
  ])('rejects %s', (_what, values, message) => {
    expect(() => render(values)).toThrow(message);
  });
});
