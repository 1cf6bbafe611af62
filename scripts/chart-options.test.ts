/**
 * The operator chart's optional features (ServiceMonitor, PrometheusRule, NetworkPolicy, PDB,
 * several replicas, pinned images) rendered by the real helm binary, and values.schema.json
 * refusing bad values before anything renders.
 */
import { envOf, find, FULLNAME, NS, operatorPod, render } from './chart-fixtures';

describe('chart with every option on', () => {
  const values = {
    replicaCount: 2,
    logLevel: 'debug',
    image: { digest: `sha256:${'a'.repeat(64)}` },
    worker: { image: { tag: '9.9.9', pullPolicy: 'Always' } },
    extraEnv: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=384' }],
    serviceMonitor: { enabled: true, labels: { release: 'kube-prometheus' } },
    prometheusRule: { enabled: true, additionalRules: [{ alert: 'Custom', expr: 'vector(1)' }] },
    networkPolicy: {
      enabled: true,
      apiServerCidrs: ['10.0.0.1/32'],
      metricsFrom: [{ namespaceSelector: { matchLabels: { name: 'monitoring' } } }],
    },
    podDisruptionBudget: { enabled: true },
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
