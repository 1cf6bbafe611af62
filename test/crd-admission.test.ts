/**
 * The LogPipeline CRD against the REAL kube-apiserver of the test bed: valid objects are stored as
 * sent, every invalid example of the shared table is rejected at admission with the field and the
 * reason, and the apiserver's wording matches `validatePipeline` (so `logpipeline plan` cannot drift
 * from admission). Also the status and scale subresources. Every object created here is deleted.
 */
import { ApiException, ApiextensionsV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { GROUP, PLURAL, VERSION, type LogPipeline } from '../operator/src/api/types';
import { VALID_CASES, materialize, validPipeline, type PipelineCase } from './fixtures/validate-cases';
import { INVALID_CASES } from './fixtures/validate-cases-invalid';
import { formatValidationError, validatePipeline } from '../operator/src/api/validate';
import { readTestBed } from './env/testbed';

const NAMESPACE = 'default';
const coords = { group: GROUP, version: VERSION, plural: PLURAL, namespace: NAMESPACE };

function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(readTestBed().kubernetes!.kubeconfig);
  return kc;
}
const custom = kubeConfig().makeApiClient(CustomObjectsApi);
const created = new Set<string>();
let seq = 0;

/** A unique object name per example (the bed is shared by every test file). */
const uniqueName = () => `adm-${process.pid}-${++seq}`;

async function create(lp: LogPipeline): Promise<LogPipeline> {
  created.add(lp.metadata.name);
  // Strict, as kubectl apply is: unknown fields are errors rather than silently pruned.
  return (await custom.createNamespacedCustomObject({
    ...coords,
    body: lp,
    fieldValidation: 'Strict',
  })) as LogPipeline;
}

async function get(name: string): Promise<LogPipeline> {
  return (await custom.getNamespacedCustomObject({ ...coords, name })) as LogPipeline;
}

async function replace(lp: LogPipeline): Promise<LogPipeline> {
  const current = await get(lp.metadata.name);
  const body = { ...lp, metadata: { ...lp.metadata, resourceVersion: current.metadata.resourceVersion } };
  return (await custom.replaceNamespacedCustomObject({
    ...coords,
    name: lp.metadata.name,
    body,
    fieldValidation: 'Strict',
  })) as LogPipeline;
}

async function remove(name: string): Promise<void> {
  try {
    await custom.deleteNamespacedCustomObject({ ...coords, name });
  } catch (err) {
    if (!(err instanceof ApiException && err.code === 404)) throw err;
  }
  created.delete(name);
}

interface Status {
  code: number;
  message: string;
  details?: { causes?: Array<{ field?: string; reason?: string; message?: string }> };
}

/** Runs `op`, expects the apiserver to refuse it, returns the Status it answered with. */
async function rejection(op: Promise<unknown>): Promise<Status> {
  try {
    await op;
  } catch (err) {
    if (!(err instanceof ApiException)) throw err;
    const body = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
    return { ...(body as Status), code: err.code };
  }
  throw new Error('the apiserver accepted an object it should have rejected');
}

/** Creates the example (and, for update examples, applies the update); resolves to the stored object. */
async function admit(c: PipelineCase, name: string): Promise<LogPipeline> {
  const { before, object } = materialize(c, name, NAMESPACE);
  if (!before) return create(object);
  await create(before);
  return replace(object);
}

afterAll(async () => {
  for (const name of [...created]) await remove(name);
});

describe('LogPipeline CRD on the real apiserver', () => {
  it('is established with short name, categories and the status and scale subresources', async () => {
    const ext = kubeConfig().makeApiClient(ApiextensionsV1Api);
    const crd = await ext.readCustomResourceDefinition({ name: `${PLURAL}.${GROUP}` });
    expect(crd.status?.conditions?.find((c) => c.type === 'Established')?.status).toBe('True');
    expect(crd.spec.names.shortNames).toEqual(['lp']);
    expect(crd.spec.names.categories).toEqual(['logpipeline']);
    const v = crd.spec.versions.find((x) => x.name === VERSION)!;
    expect(v.subresources?.scale?.specReplicasPath).toBe('.spec.workers.replicas');
    expect(v.additionalPrinterColumns?.map((c) => c.name)).toEqual([
      'Ready',
      'Topic',
      'Partitions',
      'Replicas',
      'Lag',
      'Ingest',
      'Age',
    ]);
  });

  it('stores a valid pipeline exactly as sent (nothing pruned, nothing added to the spec)', async () => {
    const lp = validPipeline(uniqueName(), NAMESPACE);
    await create(lp);
    const read = await get(lp.metadata.name);
    expect(read.spec).toEqual(lp.spec);
    expect(read.metadata.generation).toBe(1);
    await remove(lp.metadata.name);
  });

  it.each(VALID_CASES.map((c) => [c.name, c] as const))('admits: %s', async (_n, c) => {
    const name = uniqueName();
    const { object } = materialize(c, name, NAMESPACE);
    const stored = await admit(c, name);
    expect(stored.spec).toEqual(object.spec);
    await remove(name);
  });

  it.each(INVALID_CASES.map((c) => [c.name, c] as const))('rejects: %s', async (_n, c) => {
    const name = uniqueName();
    const { before, object } = materialize(c, name, NAMESPACE);
    const status = await rejection(admit(c, name));
    expect(status.code).toBe(422);
    const causes = (status.details?.causes ?? []).map((x) => ({ field: x.field, reason: x.reason }));
    for (const e of c.expect) expect(causes).toContainEqual({ field: e.field, reason: e.type });
    // Same wording offline and at admission, error by error.
    const offline = validatePipeline(object, before);
    expect(offline.length).toBeGreaterThan(0);
    for (const e of offline) expect(status.message).toContain(formatValidationError(e));
    await remove(name);
  });

  it('rejects unknown fields under strict field validation, as validatePipeline does', async () => {
    const lp = validPipeline(uniqueName(), NAMESPACE) as LogPipeline & {
      spec: { kafka: Record<string, unknown> };
    };
    lp.spec.kafka.topics = ['typo'];
    const status = await rejection(create(lp));
    expect(status.code).toBe(400);
    expect(status.message).toContain(formatValidationError(validatePipeline(lp)[0]));
  });

  it('rejects retention durations beyond CEL range, as validatePipeline does', async () => {
    const lp = validPipeline(uniqueName(), NAMESPACE);
    lp.spec.clickhouse.retention = { deleteAfter: '106751991168d', moves: [{ after: '1d', toDisk: 'warm' }] };
    const status = await rejection(create(lp));
    expect(status.message).toMatch(/spec\.clickhouse\.retention.*overflow/);
    // Both rules that convert deleteAfter overflow (moves, and the retention floor), offline as in CEL.
    expect(validatePipeline(lp).map((e) => `${e.field} ${e.rule}`)).toEqual([
      'spec.clickhouse.retention.deleteAfter delete-after-later-than-moves',
      'spec.clickhouse.retention.deleteAfter retention-above-minimum',
    ]);
    lp.spec.clickhouse.retention.deleteAfter = '106751991167d';
    expect(validatePipeline(lp)).toEqual([]);
    await create(lp);
    await remove(lp.metadata.name);
  });
});

describe('status and scale subresources', () => {
  const name = uniqueName();

  beforeAll(async () => {
    const lp = validPipeline(name, NAMESPACE);
    lp.spec.workers = { replicas: 2 };
    await create(lp);
  });

  it('keeps status writes out of the spec and spec writes out of the status', async () => {
    const current = await get(name);
    const status = {
      observedGeneration: 1,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Reconciled',
          message: 'ok',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
      topic: { name: 'firewall.logs', partitions: 12 },
      workers: { desired: 2, current: 2, ready: 2, selector: 'app.kubernetes.io/instance=x' },
      lag: { total: 42, smoothed: 40.5 },
    };
    await custom.replaceNamespacedCustomObjectStatus({
      ...coords,
      name,
      body: { ...current, status, spec: { ...current.spec, workers: { replicas: 3 } } },
    });
    const read = await get(name);
    expect(read.status).toEqual(status);
    expect(read.spec.workers).toEqual({ replicas: 2 });
  });

  it('lets `kubectl scale` set spec.workers.replicas, within the partition count', async () => {
    const scale = (await custom.getNamespacedCustomObjectScale({ ...coords, name })) as {
      spec: { replicas: number };
      status: { replicas: number; selector: string };
    };
    expect(scale.spec.replicas).toBe(2);
    expect(scale.status).toEqual({ replicas: 2, selector: 'app.kubernetes.io/instance=x' });
    await custom.patchNamespacedCustomObjectScale({
      ...coords,
      name,
      body: [{ op: 'replace', path: '/spec/replicas', value: 5 }],
    });
    expect((await get(name)).spec.workers?.replicas).toBe(5);
    const status = await rejection(
      custom.patchNamespacedCustomObjectScale({
        ...coords,
        name,
        body: [{ op: 'replace', path: '/spec/replicas', value: 13 }],
      }),
    );
    expect(status.message).toContain(
      'spec.workers.replicas (13) must not exceed spec.kafka.topic.partitions (12)',
    );
  });
});
