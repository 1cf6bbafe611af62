/**
 * The operator chart, rendered by the real helm binary (scripts/build-helm.sh): lint passes, and
 * the objects carry least-privilege RBAC, a restricted security context, the probes and the env
 * the operator reads — with default values and in the watchNamespaces mode.
 */
import { DEFAULT_WORKER_IMAGE } from '../operator/src/api/defaults';
import {
  chart,
  envOf,
  find,
  FULLNAME,
  grants,
  NS,
  operatorPod,
  RECONCILE_GRANTS,
  render,
  sortedGrants,
  type PolicyRule,
} from './chart-fixtures';
import { lintChart } from './helm';

describe('chart lint', () => {
  it('passes helm lint --strict with default values and with every option on', () => {
    expect(lintChart({})).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    const allOn = {
      replicaCount: 2,
      serviceMonitor: { enabled: true },
      prometheusRule: { enabled: true },
      networkPolicy: { enabled: true },
      podDisruptionBudget: { enabled: true },
    };
    expect(lintChart(allOn)).toMatch(/0 chart\(s\) failed/);
  });
});

describe('chart with default values', () => {
  const objects = render();

  it('renders exactly the operator objects, optional ones off', () => {
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(
      [
        `ClusterRole/${FULLNAME}`,
        `ClusterRoleBinding/${FULLNAME}`,
        `Deployment/${FULLNAME}`,
        `Role/${FULLNAME}-leader-election`,
        `RoleBinding/${FULLNAME}-leader-election`,
        `Service/${FULLNAME}-metrics`,
        `ServiceAccount/${FULLNAME}`,
      ].sort(),
    );
    for (const o of objects.filter((x) => !x.kind.startsWith('Cluster')))
      expect(o.metadata.namespace).toBe(NS);
  });

  it('grants cluster-wide exactly the verbs the operator needs, to its ServiceAccount', () => {
    const role = find(objects, 'ClusterRole', FULLNAME) as unknown as { rules: PolicyRule[] };
    expect(grants(role.rules)).toEqual(sortedGrants(RECONCILE_GRANTS));
    const binding = find(objects, 'ClusterRoleBinding', FULLNAME) as unknown as {
      roleRef: { kind: string; name: string };
      subjects: unknown[];
    };
    expect(binding.roleRef).toMatchObject({ kind: 'ClusterRole', name: FULLNAME });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: FULLNAME, namespace: NS }]);
  });

  it('limits leader election to one Lease in the release namespace, named as the operator is told', () => {
    const role = find(objects, 'Role', `${FULLNAME}-leader-election`, NS) as unknown as {
      rules: PolicyRule[];
    };
    const env = envOf(operatorPod(objects).containers[0]);
    expect(role.rules).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: [env.LEASE_NAME],
        verbs: ['get', 'update'],
      },
    ]);
    expect(env).toMatchObject({
      LEADER_ELECT: 'true',
      LEASE_NAMESPACE: NS,
      LEASE_NAME: `${FULLNAME}-leader`,
    });
  });

  it('runs the operator under the restricted Pod Security Standard', () => {
    const pod = operatorPod(objects);
    expect(pod.serviceAccountName).toBe(FULLNAME);
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
    const sc = pod.containers[0].securityContext;
    expect(sc).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      privileged: false,
    });
    expect(sc.capabilities).toEqual({ drop: ['ALL'] });
  });

  it('probes /healthz and /readyz on the metrics port the operator is told to listen on', () => {
    const c = operatorPod(objects).containers[0];
    const env = envOf(c);
    expect(c.ports).toEqual([{ name: 'http-metrics', containerPort: 8080, protocol: 'TCP' }]);
    expect(env.METRICS_PORT).toBe('8080');
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http-metrics' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http-metrics' });
    const svc = find(objects, 'Service', `${FULLNAME}-metrics`) as unknown as {
      spec: { ports: Array<{ port: number; targetPort: string }> };
    };
    expect(svc.spec.ports[0]).toMatchObject({ port: 8080, targetPort: 'http-metrics' });
  });

  it('points at the images the Dockerfile builds, tagged with the appVersion, and sets resources', () => {
    const c = operatorPod(objects).containers[0];
    const env = envOf(c);
    expect(c.image).toBe(`ghcr.io/logpipeline/logpipeline-operator:${chart.appVersion}`);
    expect(env.LP_WORKER_IMAGE).toBe(`ghcr.io/logpipeline/logpipeline-worker:${chart.appVersion}`);
    // The operator's built-in default and the chart's must agree, or pipelines would run mixed versions.
    expect(env.LP_WORKER_IMAGE).toBe(DEFAULT_WORKER_IMAGE);
    expect(env.POD_NAMESPACE).toBe('fieldRef:metadata.namespace');
    expect(env.POD_NAME).toBe('fieldRef:metadata.name');
    expect(env.WATCH_NAMESPACES).toBeUndefined();
    expect(c.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    expect(c.resources.limits?.memory).toBeDefined();
  });
});

describe('chart with watchNamespaces', () => {
  const objects = render({ watchNamespaces: ['team-a', 'team-b', 'team-a'] });

  it('grants the same verbs per namespace and nothing cluster-wide', () => {
    expect(objects.filter((o) => o.kind.startsWith('Cluster'))).toEqual([]);
    for (const ns of ['team-a', 'team-b']) {
      const role = find(objects, 'Role', FULLNAME, ns) as unknown as { rules: PolicyRule[] };
      expect(grants(role.rules)).toEqual(sortedGrants(RECONCILE_GRANTS));
      const binding = find(objects, 'RoleBinding', FULLNAME, ns) as unknown as {
        roleRef: unknown;
        subjects: unknown[];
      };
      expect(binding.roleRef).toEqual({
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name: FULLNAME,
      });
      expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: FULLNAME, namespace: NS }]);
    }
    expect(
      objects
        .filter((o) => o.kind === 'Role')
        .map((o) => o.metadata.namespace)
        .sort(),
    ).toEqual([NS, 'team-a', 'team-b']);
  });

  it('tells the operator which namespaces to watch, once each', () => {
    expect(envOf(operatorPod(objects).containers[0]).WATCH_NAMESPACES).toBe('team-a,team-b');
  });
});
