/**
 * The chart's RBAC on a real kube-apiserver: render it with helm, apply it as the admin, then act
 * as the chart's ServiceAccount (a TokenRequest token, not the admin) and check what the apiserver
 * allows — the operator's needs — and refuses — everything else.
 */
import { randomBytes } from 'node:crypto';
import {
  applyRendered,
  deleteRendered,
  ensureNamespace,
  kubeconfigRequest,
  renderRelease,
  serviceAccountKubeconfig,
  type RenderedObject,
} from './env/chart';
import { readTestBed } from './env/testbed';

const k8s = readTestBed().kubernetes!;
const LOGPIPELINES = '/apis/logpipeline.io/v1alpha1';

interface Access {
  verb: string;
  resource: string;
  group?: string;
  namespace?: string;
  subresource?: string;
  name?: string;
}

/** Asks the apiserver whether the kubeconfig's identity may do `a` (a SelfSubjectAccessReview). */
async function allowed(kubeconfig: string, a: Access): Promise<boolean> {
  const res = await kubeconfigRequest(
    kubeconfig,
    'POST',
    '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
    {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { group: '', ...a } },
    },
  );
  if (res.status !== 201)
    throw new Error(`SelfSubjectAccessReview failed (${res.status}): ${JSON.stringify(res.body)}`);
  return (res.body as { status?: { allowed?: boolean } }).status?.allowed === true;
}

/**
 * The HTTP status of one request made with the kubeconfig's identity. A 429 (the apiserver still
 * initializing a fresh CRD's watch cache) is retried: it says nothing about authorization.
 */
async function statusOf(kubeconfig: string, method: string, path: string): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const { status } = await kubeconfigRequest(kubeconfig, method, path);
    if (status !== 429 || attempt >= 50) return status;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** An object as the apiserver stored it. */
interface StoredObject {
  kind: string;
  metadata: { name: string; uid: string; resourceVersion: string };
  spec?: { template?: { spec?: { serviceAccountName?: string } } };
}

/** Installs a release in a fresh namespace and returns the ServiceAccount's kubeconfig. */
async function install(values: object): Promise<{
  ns: string;
  objects: RenderedObject[];
  stored: StoredObject[];
  kubeconfig: string;
  fullname: string;
}> {
  const id = randomBytes(3).toString('hex');
  const ns = `lp-chart-${id}`;
  const release = `rel-${id}`;
  await ensureNamespace(k8s, ns);
  const objects = renderRelease(values, release, ns);
  const first = (await applyRendered(k8s, objects)) as StoredObject[];
  // Server-side apply is idempotent: applying the same render again changes nothing.
  const stored = (await applyRendered(k8s, objects)) as StoredObject[];
  expect(stored.map((o) => o.metadata.resourceVersion)).toEqual(first.map((o) => o.metadata.resourceVersion));
  const fullname = `${release}-logpipeline-operator`;
  return { ns, objects, stored, kubeconfig: await serviceAccountKubeconfig(k8s, ns, fullname), fullname };
}

describe('chart RBAC, cluster-wide mode, as the chart ServiceAccount', () => {
  let release: Awaited<ReturnType<typeof install>>;
  beforeAll(async () => {
    release = await install({});
  });
  afterAll(async () => {
    if (release) await deleteRendered(k8s, release.objects);
  });

  it('stores every rendered object, the Deployment running as the chart ServiceAccount', () => {
    expect(release.stored.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(
      release.objects.map((o) => `${o.kind}/${o.metadata.name}`),
    );
    for (const o of release.stored) expect(o.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    const dep = release.stored.find((o) => o.kind === 'Deployment');
    expect(dep?.spec?.template?.spec?.serviceAccountName).toBe(release.fullname);
  });

  it('may list LogPipelines and Secrets in every namespace', async () => {
    const kc = release.kubeconfig;
    expect(await statusOf(kc, 'GET', `${LOGPIPELINES}/logpipelines`)).toBe(200);
    expect(await statusOf(kc, 'GET', '/api/v1/secrets')).toBe(200);
    expect(await statusOf(kc, 'GET', '/api/v1/namespaces/default/secrets')).toBe(200);
  });

  it('may reconcile: status, finalizers, Deployments and their scale, ConfigMaps, PDBs, Events', async () => {
    const kc = release.kubeconfig;
    const ns = 'default';
    const lp = { group: 'logpipeline.io', resource: 'logpipelines', namespace: ns };
    expect(await allowed(kc, { ...lp, verb: 'patch', subresource: 'status' })).toBe(true);
    expect(await allowed(kc, { ...lp, verb: 'update', subresource: 'finalizers' })).toBe(true);
    expect(await allowed(kc, { group: 'apps', resource: 'deployments', verb: 'create', namespace: ns })).toBe(
      true,
    );
    expect(
      await allowed(kc, {
        group: 'apps',
        resource: 'deployments',
        verb: 'patch',
        subresource: 'scale',
        namespace: ns,
      }),
    ).toBe(true);
    expect(await allowed(kc, { resource: 'configmaps', verb: 'delete', namespace: ns })).toBe(true);
    expect(
      await allowed(kc, { group: 'policy', resource: 'poddisruptionbudgets', verb: 'create', namespace: ns }),
    ).toBe(true);
    expect(await allowed(kc, { resource: 'events', verb: 'create', namespace: ns })).toBe(true);
  });

  it('holds only its own Lease, only in the release namespace', async () => {
    const kc = release.kubeconfig;
    const lease = { group: 'coordination.k8s.io', resource: 'leases' };
    expect(await allowed(kc, { ...lease, verb: 'create', namespace: release.ns })).toBe(true);
    expect(
      await allowed(kc, {
        ...lease,
        verb: 'update',
        namespace: release.ns,
        name: `${release.fullname}-leader`,
      }),
    ).toBe(true);
    expect(
      await allowed(kc, { ...lease, verb: 'update', namespace: release.ns, name: 'someone-elses-lease' }),
    ).toBe(false);
    expect(await allowed(kc, { ...lease, verb: 'create', namespace: 'default' })).toBe(false);
  });

  it('creates and renews its Lease for real, and cannot create one elsewhere', async () => {
    const kc = release.kubeconfig;
    const name = `${release.fullname}-leader`;
    const lease = (ns: string) => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace: ns },
      spec: { holderIdentity: 'pod-a', leaseDurationSeconds: 15 },
    });
    const base = `/apis/coordination.k8s.io/v1/namespaces/${release.ns}/leases`;
    const created = await kubeconfigRequest(kc, 'POST', base, lease(release.ns));
    expect(created.status).toBe(201);
    const current = (await kubeconfigRequest(kc, 'GET', `${base}/${name}`)).body as {
      metadata: object;
      spec: object;
    };
    const renewed = await kubeconfigRequest(kc, 'PUT', `${base}/${name}`, {
      ...current,
      spec: { ...current.spec, holderIdentity: 'pod-b' },
    });
    expect(renewed.status).toBe(200);
    expect((renewed.body as { spec: { holderIdentity: string } }).spec.holderIdentity).toBe('pod-b');
    const elsewhere = await kubeconfigRequest(
      kc,
      'POST',
      '/apis/coordination.k8s.io/v1/namespaces/default/leases',
      lease('default'),
    );
    expect(elsewhere.status).toBe(403);
  });

  it('is refused everything else: deleting namespaces, writing Secrets, LogPipeline deletion, pods, RBAC', async () => {
    const kc = release.kubeconfig;
    expect(await statusOf(kc, 'DELETE', `/api/v1/namespaces/${release.ns}`)).toBe(403);
    // Pods are read-only: the operator reads its workers' statuses (WorkersReady, Stalled), never writes them.
    expect(await allowed(kc, { resource: 'pods', verb: 'create', namespace: 'default' })).toBe(false);
    expect(await allowed(kc, { resource: 'pods', verb: 'delete', namespace: 'default' })).toBe(false);
    expect(await allowed(kc, { resource: 'pods', verb: 'patch', namespace: 'default' })).toBe(false);
    expect(await allowed(kc, { resource: 'secrets', verb: 'create', namespace: 'default' })).toBe(false);
    expect(await allowed(kc, { resource: 'secrets', verb: 'delete', namespace: 'default' })).toBe(false);
    expect(
      await allowed(kc, {
        group: 'logpipeline.io',
        resource: 'logpipelines',
        verb: 'delete',
        namespace: 'default',
      }),
    ).toBe(false);
    expect(
      await allowed(kc, { group: 'rbac.authorization.k8s.io', resource: 'clusterroles', verb: 'create' }),
    ).toBe(false);
    expect(
      await allowed(kc, {
        group: 'apiextensions.k8s.io',
        resource: 'customresourcedefinitions',
        verb: 'update',
      }),
    ).toBe(false);
  });
});

describe('chart RBAC, watchNamespaces mode, as the chart ServiceAccount', () => {
  const watched = `lp-watched-${randomBytes(3).toString('hex')}`;
  let release: Awaited<ReturnType<typeof install>>;
  beforeAll(async () => {
    await ensureNamespace(k8s, watched);
    release = await install({ watchNamespaces: [watched] });
  });
  afterAll(async () => {
    if (release) await deleteRendered(k8s, release.objects);
  });

  it('may list LogPipelines and Secrets only in the watched namespace', async () => {
    const kc = release.kubeconfig;
    expect(await statusOf(kc, 'GET', `${LOGPIPELINES}/namespaces/${watched}/logpipelines`)).toBe(200);
    expect(await statusOf(kc, 'GET', `/api/v1/namespaces/${watched}/secrets`)).toBe(200);
    expect(await statusOf(kc, 'GET', `${LOGPIPELINES}/logpipelines`)).toBe(403);
    expect(await statusOf(kc, 'GET', '/api/v1/secrets')).toBe(403);
    expect(await statusOf(kc, 'GET', '/api/v1/namespaces/default/secrets')).toBe(403);
  });

  it('has no cluster-scoped grant at all', () => {
    expect(release.objects.filter((o) => o.kind.startsWith('Cluster'))).toEqual([]);
  });
});
