/**
 * Proves the Kubernetes part of the test bed is real: a CRD is established and served, an object
 * of it is stored in etcd and read back, and RBAC refuses the non-admin identity.
 */
import { ApiException, CoreV1Api, CustomObjectsApi, KubeConfig, VersionApi } from '@kubernetes/client-node';
import { adminRequest } from './env/kubernetes';
import { readTestBed } from './env/testbed';

const bed = readTestBed();
const k8s = bed.kubernetes!;

function client<T>(kubeconfig: string, api: new (...args: never[]) => T): T {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  return kc.makeApiClient(api as never) as T;
}

const smokeCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'smokes.testbed.logpipeline.io' },
  spec: {
    group: 'testbed.logpipeline.io',
    scope: 'Namespaced',
    names: { plural: 'smokes', singular: 'smoke', kind: 'Smoke' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: { spec: { type: 'object', properties: { lines: { type: 'integer' } } } },
          },
        },
      },
    ],
  },
};

describe('Kubernetes test bed', () => {
  it('is a real kube-apiserver of the expected version', async () => {
    const version = await client(k8s.kubeconfig, VersionApi).getCode();
    expect(version.gitVersion).toBe(k8s.version);
    expect(Number(version.minor)).toBeGreaterThanOrEqual(33);
  });

  it('stores a custom object in etcd and reads it back', async () => {
    const created = await adminRequest(
      k8s,
      'POST',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      smokeCrd,
    );
    expect([201, 409]).toContain(created.status);
    const objects = client(k8s.kubeconfig, CustomObjectsApi);
    const coords = { group: 'testbed.logpipeline.io', version: 'v1', namespace: 'default', plural: 'smokes' };
    let stored: { spec?: { lines?: number }; metadata?: { uid?: string } } | undefined;
    for (let i = 0; i < 100 && !stored; i++) {
      try {
        stored = await objects.createNamespacedCustomObject({
          ...coords,
          body: {
            apiVersion: 'testbed.logpipeline.io/v1',
            kind: 'Smoke',
            metadata: { name: 'one' },
            spec: { lines: 42 },
          },
        });
      } catch (err) {
        if (!(err instanceof ApiException) || err.code !== 404) throw err;
        await new Promise((r) => setTimeout(r, 100)); // CRD not served yet
      }
    }
    const read = (await objects.getNamespacedCustomObject({ ...coords, name: 'one' })) as typeof stored;
    expect(read?.spec?.lines).toBe(42);
    expect(read?.metadata?.uid).toBe(stored?.metadata?.uid);
    await objects.deleteNamespacedCustomObject({ ...coords, name: 'one' });
    await adminRequest(
      k8s,
      'DELETE',
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${smokeCrd.metadata.name}`,
    );
  });

  it('refuses the non-admin identity by RBAC', async () => {
    const core = client(k8s.userKubeconfig, CoreV1Api);
    await expect(core.listNamespacedSecret({ namespace: 'default' })).rejects.toMatchObject({ code: 403 });
    const admin = client(k8s.kubeconfig, CoreV1Api);
    const secrets = await admin.listNamespacedSecret({ namespace: 'default' });
    expect(Array.isArray(secrets.items)).toBe(true);
  });
});
