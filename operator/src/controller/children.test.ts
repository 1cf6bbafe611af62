import { resolveSpec } from '../api/defaults';
import type { LogPipeline } from '../api/types';
import type { KubeClient } from '../apply/kube-rest';
import { buildConfigMap, renderWorkerConfig } from '../desired/configmap';
import { buildWorkerColumns, resolveTableSchema } from '../desired/clickhouse';
import { APPLIED_HASH_ANNOTATION } from '../desired/labels';
import { toConfigMapView, toDeploymentView, toPdbView, type ChildView } from '../status/views';
import { ChildApplier } from './children';

const lp: LogPipeline = {
  apiVersion: 'logpipeline.io/v1alpha1',
  kind: 'LogPipeline',
  metadata: { name: 'fw', namespace: 'isp', uid: 'uid-1', generation: 1 },
  spec: {
    kafka: { bootstrapServers: ['kafka:9092'] },
    clickhouse: { url: 'http://ch:8123', database: 'logs', table: 'fw' },
  },
};
const spec = resolveSpec(lp);
const config = renderWorkerConfig(spec, buildWorkerColumns(resolveTableSchema(spec)));

/** An apiserver that stores what is applied (SSA approximated by replacing the object). */
function fakeServer() {
  const stored = new Map<string, Record<string, unknown>>();
  let rv = 1;
  let writes = 0;
  const client: KubeClient = {
    async request<T>(_m: string, path: string, opts?: { body?: unknown }): Promise<T> {
      writes++;
      const body = opts?.body as { metadata: Record<string, unknown> };
      const obj = { ...body, metadata: { ...body.metadata, uid: 'c', resourceVersion: String(rv++) } };
      stored.set(path.replace(/\/scale$/, ''), obj);
      return obj as T;
    },
    watch: async () => undefined,
  };
  const view = <V>(kind: string, to: (r: Record<string, unknown>) => V) => ({
    get: (_ns: string, name: string) => {
      const hit = [...stored.entries()].find(([p]) => p.includes(`/${kind}/${name}`));
      return hit ? to(hit[1]) : undefined;
    },
  });
  const caches = {
    configMaps: view<ChildView>('configmaps', toConfigMapView),
    deployments: view('deployments', toDeploymentView),
    pdbs: view<ChildView>('poddisruptionbudgets', toPdbView),
  };
  return { client, caches, stored, writes: () => writes };
}

describe('ChildApplier applied-hash annotation', () => {
  it('a fresh applier (a restarted operator) sends nothing when the children carry the hash', async () => {
    const server = fakeServer();
    const first = await new ChildApplier(server.client, server.caches).apply(spec, config);
    expect(first.writes).toBe(3);
    for (const obj of server.stored.values())
      expect(
        (obj.metadata as { annotations: Record<string, string> }).annotations[APPLIED_HASH_ANNOTATION],
      ).toMatch(/^[0-9a-f]{40}$/);
    const restarted = await new ChildApplier(server.client, server.caches).apply(spec, config);
    expect(restarted.writes).toBe(0);
    expect(server.writes()).toBe(3);
  });

  it('re-applies after a restart when another field manager owns spec fields', async () => {
    const server = fakeServer();
    await new ChildApplier(server.client, server.caches).apply(spec, config);
    const [path, pdb] = [...server.stored.entries()].find(([p]) => p.includes('poddisruptionbudgets'))!;
    server.stored.set(path, {
      ...pdb,
      metadata: {
        ...(pdb.metadata as object),
        managedFields: [{ manager: 'kubectl-edit', operation: 'Update', fieldsV1: { 'f:spec': {} } }],
      },
    });
    const restarted = await new ChildApplier(server.client, server.caches).apply(spec, config);
    expect(restarted.writes).toBe(1);
  });

  it('re-applies when the desired object changed', async () => {
    const server = fakeServer();
    await new ChildApplier(server.client, server.caches).apply(spec, config);
    const more = resolveSpec({ ...lp, spec: { ...lp.spec, workers: { replicas: 3 } } });
    const again = await new ChildApplier(server.client, server.caches).apply(more, config);
    expect(again.writes).toBe(1);
  });
});

describe('ChildApplier and writes that are not edits (issue 18)', () => {
  const deploymentPath = (server: ReturnType<typeof fakeServer>) =>
    [...server.stored.keys()].find((p) => p.includes('/deployments/'))!;
  type Stored = {
    metadata: { resourceVersion: string; annotations?: Record<string, string> };
    spec: { replicas?: number };
  };
  const change = (server: ReturnType<typeof fakeServer>, edit: (d: Stored) => void) => {
    const path = deploymentPath(server);
    const d = structuredClone(server.stored.get(path)!) as unknown as Stored;
    edit(d);
    d.metadata.resourceVersion = `${d.metadata.resourceVersion}0`;
    server.stored.set(path, d as unknown as Record<string, unknown>);
  };

  it("sends nothing after the autoscaler's scale or the Deployment controller's revision annotation", async () => {
    const auto = resolveSpec({
      ...lp,
      spec: { ...lp.spec, workers: { autoscaling: { enabled: true, minReplicas: 0, maxReplicas: 2 } } },
    });
    const server = fakeServer();
    const applier = new ChildApplier(server.client, server.caches);
    await applier.apply(auto, config);
    change(server, (d) => {
      d.spec.replicas = 0;
      d.metadata.annotations = { ...d.metadata.annotations, 'deployment.kubernetes.io/revision': '1' };
    });
    const again = await applier.apply(auto, config);
    expect(again).toMatchObject({ writes: 0, repaired: [] });
  });

  it('repairs a scale by someone else when our manager sets the replicas', async () => {
    const fixed = resolveSpec({ ...lp, spec: { ...lp.spec, workers: { replicas: 2 } } });
    const server = fakeServer();
    const applier = new ChildApplier(server.client, server.caches);
    await applier.apply(fixed, config);
    change(server, (d) => {
      d.spec.replicas = 5;
    });
    const again = await applier.apply(fixed, config);
    expect(again).toMatchObject({ writes: 1, repaired: ['Deployment/fw-worker'] });
    expect((server.stored.get(deploymentPath(server))!.spec as { replicas: number }).replicas).toBe(2);
  });

  it('creates an autoscaled Deployment with minReplicas: no scale write, hand-over only before an apply', async () => {
    const autoSpec = (podAnnotations: Record<string, string> = {}) =>
      resolveSpec({
        ...lp,
        spec: {
          ...lp.spec,
          workers: { podAnnotations, autoscaling: { enabled: true, minReplicas: 0, maxReplicas: 2 } },
        },
      });
    const server = fakeServer();
    const paths: string[] = [];
    const client: KubeClient = {
      request: (m, path, opts) => (paths.push(path), server.client.request(m, path, opts)),
      watch: server.client.watch,
    };
    const applier = new ChildApplier(client, server.caches);
    const first = await applier.apply(autoSpec(), config);
    // The Deployment only: no ConfigMap or PDB for a Deployment that never asked for a pod.
    expect(first.writes).toBe(1);
    expect(paths.filter((p) => p.endsWith('/scale'))).toEqual([]);
    expect(first.deployment.replicas).toBe(0);
    // The apiserver records our manager as the owner of spec.replicas (it sent them).
    change(server, (d) => {
      (d.metadata as Record<string, unknown>).managedFields = [
        { manager: 'logpipeline-operator', operation: 'Apply', fieldsV1: { 'f:spec': { 'f:replicas': {} } } },
      ];
    });
    expect(server.caches.deployments.get('isp', 'fw-worker')!.ownsReplicas).toBe(true);
    paths.length = 0;
    expect((await applier.apply(autoSpec(), config)).writes).toBe(0);
    expect(paths).toEqual([]);
    // An apply that leaves spec.replicas out hands the field over first (no reset to 1).
    await applier.apply(autoSpec({ edited: 'yes' }), config);
    expect(paths.map((p) => p.replace(/.*\/deployments\//, ''))).toEqual(['fw-worker/scale', 'fw-worker']);
    const applied = server.stored.get(deploymentPath(server))!.spec as { replicas?: number };
    expect(applied.replicas).toBeUndefined();
  });

  it('knows the objects exactly as its own apply stored them (their watch events bring nothing new)', async () => {
    const server = fakeServer();
    const applier = new ChildApplier(server.client, server.caches);
    await applier.apply(spec, config);
    const live = server.caches.deployments.get('isp', 'fw-worker')!;
    const rv = live.metadata.resourceVersion;
    expect(applier.wrote('Deployment', 'isp', 'fw-worker', rv)).toBe(true);
    // Anyone's later write (the Deployment controller's status, an edit) has another version.
    expect(applier.wrote('Deployment', 'isp', 'fw-worker', `${rv}0`)).toBe(false);
    expect(applier.wrote('ConfigMap', 'isp', 'fw-worker', rv)).toBe(false);
    applier.forget('isp', 'fw');
    expect(applier.wrote('Deployment', 'isp', 'fw-worker', rv)).toBe(false);
  });
});

describe('ChildApplier order (issue 18)', () => {
  /** Records when each apply is sent and answered; answers come a macrotask later. */
  function orderServer() {
    const server = fakeServer();
    const order: string[] = [];
    const kind = (path: string) => path.split('/').slice(-2)[0];
    const client: KubeClient = {
      async request<T>(
        m: Parameters<KubeClient['request']>[0],
        path: string,
        opts?: { body?: unknown },
      ): Promise<T> {
        order.push(`sent ${kind(path)}`);
        await new Promise((r) => setImmediate(r));
        order.push(`answered ${kind(path)}`);
        return server.client.request<T>(m, path, opts);
      },
      watch: async () => undefined,
    };
    return { client, caches: server.caches, order };
  }
  const withWorkers = (workers: Record<string, unknown>) =>
    resolveSpec({ ...lp, spec: { ...lp.spec, workers } as LogPipeline['spec'] });

  it('sends no ConfigMap with a Deployment created with zero replicas (no pod mounts it)', async () => {
    const { client, caches, order } = orderServer();
    const zero = withWorkers({ autoscaling: { enabled: true, minReplicas: 0, maxReplicas: 2 } });
    await new ChildApplier(client, caches).apply(zero, config);
    expect(order.filter((o) => o.startsWith('sent'))).toEqual(['sent deployments']);
  });

  it('sends an existing ConfigMap and a Deployment created with zero replicas at once', async () => {
    const { client, caches, order } = orderServer();
    const zero = withWorkers({ autoscaling: { enabled: true, minReplicas: 0, maxReplicas: 2 } });
    const applier = new ChildApplier(client, caches);
    await applier.ensureConfigMap(zero, config);
    order.length = 0;
    const edited = withWorkers({
      batch: { maxDelay: '2500ms' },
      autoscaling: { enabled: true, minReplicas: 0 },
    });
    await applier.apply(edited, renderWorkerConfig(edited, buildWorkerColumns(resolveTableSchema(edited))));
    expect(order.slice(0, 2).every((o) => o.startsWith('sent'))).toBe(true);
    expect(order.filter((o) => o.startsWith('sent')).sort()).toEqual(['sent configmaps', 'sent deployments']);
  });

  it('applies the ConfigMap before the Deployment when pods may start or exist', async () => {
    const { client, caches, order } = orderServer();
    await new ChildApplier(client, caches).apply(withWorkers({ replicas: 2 }), config);
    expect(order.indexOf('answered configmaps')).toBeLessThan(order.indexOf('sent deployments'));
  });
});

describe('ChildApplier ConfigMap (issue 18: none before the first pod)', () => {
  const cmPath = (server: ReturnType<typeof fakeServer>) =>
    [...server.stored.keys()].find((p) => p.includes('/configmaps/'));
  const auto = (minReplicas: number, extra: Record<string, unknown> = {}) =>
    resolveSpec({
      ...lp,
      spec: {
        ...lp.spec,
        workers: { ...extra, autoscaling: { enabled: true, minReplicas, maxReplicas: 2 } },
      },
    });

  it('creates none for a Deployment at zero, and one before the first scale-up (ensureConfigMap)', async () => {
    const server = fakeServer();
    const applier = new ChildApplier(server.client, server.caches);
    await applier.apply(auto(0), config);
    expect(cmPath(server)).toBeUndefined();
    expect((await applier.apply(auto(0), config)).writes).toBe(0);
    // The autoscaler's scale-up applies it (runAutoscaler, awaited before the scale write)...
    expect((await applier.ensureConfigMap(auto(0), config)).wrote).toBe(true);
    expect(cmPath(server)).toBeDefined();
    // ...and once it exists it is a no-op there, and kept as desired by every apply.
    expect((await applier.ensureConfigMap(auto(0), config)).wrote).toBe(false);
    expect((await applier.apply(auto(0), config)).writes).toBe(0);
    const changed = auto(0, { batch: { maxDelay: '2500ms' } });
    const rendered = renderWorkerConfig(changed, buildWorkerColumns(resolveTableSchema(changed)));
    await applier.apply(changed, rendered);
    const data = server.stored.get(cmPath(server)!)!.data;
    expect(data).toEqual(buildConfigMap(changed, rendered).data);
    expect(data).not.toEqual(buildConfigMap(auto(0), config).data);
  });

  it('creates it first for workers with pods, and for a Deployment someone scaled up', async () => {
    const server = fakeServer();
    await new ChildApplier(server.client, server.caches).apply(auto(1), config);
    expect(cmPath(server)).toBeDefined();
    const other = fakeServer();
    const applier = new ChildApplier(other.client, other.caches);
    await applier.apply(auto(0), config);
    const depPath = [...other.stored.keys()].find((p) => p.includes('/deployments/'))!;
    const dep = other.stored.get(depPath)!;
    other.stored.set(depPath, { ...dep, spec: { ...(dep.spec as object), replicas: 2 } });
    await applier.apply(auto(0), config);
    expect(cmPath(other)).toBeDefined();
  });

  it('says whether the workers ask for pods: fixed replicas, else the live (or minimum) count', async () => {
    const server = fakeServer();
    const applier = new ChildApplier(server.client, server.caches);
    const fixed = (replicas: number) => resolveSpec({ ...lp, spec: { ...lp.spec, workers: { replicas } } });
    expect(applier.asksForPods(fixed(0))).toBe(false);
    expect(applier.asksForPods(fixed(2))).toBe(true);
    expect(applier.asksForPods(auto(0))).toBe(false);
    expect(applier.asksForPods(auto(1))).toBe(true);
    await applier.apply(auto(0), config);
    const depPath = [...server.stored.keys()].find((p) => p.includes('/deployments/'))!;
    const dep = server.stored.get(depPath)!;
    server.stored.set(depPath, { ...dep, spec: { ...(dep.spec as object), replicas: 1 } });
    expect(applier.asksForPods(auto(0))).toBe(true);
  });

  it('restores a deleted ConfigMap at zero (it existed: a repair)', async () => {
    const server = fakeServer();
    const applier = new ChildApplier(server.client, server.caches);
    await applier.apply(auto(0), config);
    await applier.ensureConfigMap(auto(0), config);
    server.stored.delete(cmPath(server)!);
    const again = await applier.apply(auto(0), config);
    expect(again.repaired).toContain('ConfigMap/fw-worker-config');
  });
});

describe('ChildApplier PodDisruptionBudget (issue 18: none before the first pod)', () => {
  const pdbPath = (server: ReturnType<typeof fakeServer>) =>
    [...server.stored.keys()].find((p) => p.includes('/poddisruptionbudgets/'));
  const auto = (minReplicas: number) =>
    resolveSpec({
      ...lp,
      spec: { ...lp.spec, workers: { autoscaling: { enabled: true, minReplicas, maxReplicas: 2 } } },
    });

  it('creates none for a Deployment at zero, and one with the first scale-up (ensurePdb)', async () => {
    const server = fakeServer();
    const applier = new ChildApplier(server.client, server.caches);
    await applier.apply(auto(0), config);
    expect(pdbPath(server)).toBeUndefined();
    // Applied again at zero: still none, and nothing sent.
    expect((await applier.apply(auto(0), config)).writes).toBe(0);
    // The autoscaler's scale-up applies it (runAutoscaler); the next apply keeps it, sending nothing.
    expect((await applier.ensurePdb(auto(0))).wrote).toBe(true);
    expect(pdbPath(server)).toBeDefined();
    expect((await applier.apply(auto(0), config)).writes).toBe(0);
  });

  it('creates it with the children when the Deployment asks for pods, and keeps it once it exists', async () => {
    const server = fakeServer();
    await new ChildApplier(server.client, server.caches).apply(auto(1), config);
    expect(pdbPath(server)).toBeDefined();
    // Scaled to zero since (the autoscaler's write), and a restarted operator: the PDB that exists
    // is checked as desired (nothing sent)...
    const depPath = [...server.stored.keys()].find((p) => p.includes('/deployments/'))!;
    const dep = server.stored.get(depPath)!;
    server.stored.set(depPath, { ...dep, spec: { ...(dep.spec as object), replicas: 0 } });
    const restarted = new ChildApplier(server.client, server.caches);
    expect((await restarted.apply(auto(0), config)).writes).toBe(0);
    // ...and kept: deleted by someone, it is restored (a repair) although no pod is asked for.
    server.stored.delete(pdbPath(server)!);
    const again = await restarted.apply(auto(0), config);
    expect(again.repaired).toContain('PodDisruptionBudget/fw-worker');
    expect(pdbPath(server)).toBeDefined();
  });
});
