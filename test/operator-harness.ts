/**
 * Shared helpers of the operator integration tests: typed @kubernetes/client-node clients against
 * the REAL test-bed apiserver (independent of the operator's own REST layer), namespaces that are
 * fully cleaned up without waiting for the bed's namespace controller, pipelines,
 * Secrets, Deployment status written by hand (no Deployment controller), and polling.
 */
import {
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  PolicyV1Api,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { GROUP, PLURAL, VERSION, type LogPipeline, type LogPipelineSpec } from '../operator/src/api/types';
import { Manager, type ManagerOptions } from '../operator/src/controller/manager';
import { createLogger } from '../common/src/log';
import { readTestBed } from './env/testbed';

/** Admin kubeconfig of the running bed. */
export function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(readTestBed().kubernetes!.kubeconfig);
  return kc;
}

/** Typed clients built fresh (the apiserver address is stable across restarts). */
export function apis() {
  const kc = kubeConfig();
  return {
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    policy: kc.makeApiClient(PolicyV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    coordination: kc.makeApiClient(CoordinationV1Api),
  };
}

/** Content-Type options for the typed patch calls. */
export const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
/** JSON-patch Content-Type option. */
export const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

const crd = (namespace: string) => ({ group: GROUP, version: VERSION, plural: PLURAL, namespace });

/** Creates a uniquely named namespace. */
export async function createNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  await apis().core.createNamespace({ body: { metadata: { name } } });
  return name;
}

async function ignore404(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if ((err as { code?: number }).code !== 404) throw err;
  }
}

/** Deletes everything the tests create in `namespace`, then the namespace itself (finalized by hand). */
export async function deleteNamespace(namespace: string): Promise<void> {
  const { core, apps, policy, custom, coordination } = apis();
  const pipelines = (await custom.listNamespacedCustomObject(crd(namespace))) as { items: LogPipeline[] };
  for (const lp of pipelines.items) {
    await ignore404(
      custom.patchNamespacedCustomObject(
        { ...crd(namespace), name: lp.metadata.name, body: { metadata: { finalizers: null } } },
        mergePatch,
      ),
    );
    await ignore404(custom.deleteNamespacedCustomObject({ ...crd(namespace), name: lp.metadata.name }));
  }
  await apps.deleteCollectionNamespacedDeployment({ namespace });
  await core.deleteCollectionNamespacedConfigMap({ namespace });
  await core.deleteCollectionNamespacedSecret({ namespace });
  await core.deleteCollectionNamespacedEvent({ namespace });
  await policy.deleteCollectionNamespacedPodDisruptionBudget({ namespace });
  await coordination.deleteCollectionNamespacedLease({ namespace });
  await ignore404(core.deleteNamespace({ name: namespace }));
  // Don't wait for the namespace controller (pipelines' finalizers were dropped above): finalize now.
  await ignore404(
    core.replaceNamespaceFinalize({
      name: namespace,
      body: { metadata: { name: namespace }, spec: { finalizers: [] } },
    }),
  );
}

/** A valid LogPipeline object (firewall preset) with `spec` merged over a minimal spec. */
export function pipeline(namespace: string, name: string, spec: Partial<LogPipelineSpec> = {}): LogPipeline {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'LogPipeline',
    metadata: { name, namespace },
    spec: {
      kafka: { bootstrapServers: ['kafka.example:9092'] },
      clickhouse: { url: 'http://clickhouse.example:8123', database: 'logs', table: name.replace(/-/g, '_') },
      ...spec,
    },
  };
}

/** Creates a LogPipeline; returns the stored object. */
export async function createPipeline(lp: LogPipeline): Promise<LogPipeline> {
  return (await apis().custom.createNamespacedCustomObject({
    ...crd(lp.metadata.namespace),
    body: lp,
  })) as LogPipeline;
}

/** Reads a LogPipeline (undefined when gone). */
export async function getPipeline(namespace: string, name: string): Promise<LogPipeline | undefined> {
  try {
    return (await apis().custom.getNamespacedCustomObject({ ...crd(namespace), name })) as LogPipeline;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

/** Merge-patches a LogPipeline's spec. */
export async function patchPipelineSpec(namespace: string, name: string, spec: object): Promise<LogPipeline> {
  return (await apis().custom.patchNamespacedCustomObject(
    { ...crd(namespace), name, body: { spec } },
    mergePatch,
  )) as LogPipeline;
}

/** Sets a test annotation on a LogPipeline: an update event that makes the operator reconcile it. */
export async function pokePipeline(namespace: string, name: string, value: string): Promise<void> {
  await apis().custom.patchNamespacedCustomObject(
    { ...crd(namespace), name, body: { metadata: { annotations: { 'test.logpipeline.io/poke': value } } } },
    mergePatch,
  );
}

/** Deletes a LogPipeline (its finalizer, if any, keeps it until the operator releases it). */
export async function deletePipeline(namespace: string, name: string): Promise<void> {
  await ignore404(apis().custom.deleteNamespacedCustomObject({ ...crd(namespace), name }));
}

/** Creates an Opaque Secret. */
export async function createSecret(
  namespace: string,
  name: string,
  data: Record<string, string>,
): Promise<void> {
  await apis().core.createNamespacedSecret({ namespace, body: { metadata: { name }, stringData: data } });
}

/** Writes a Deployment's status as the Deployment controller would (the bed runs none). */
export async function setDeploymentStatus(
  namespace: string,
  name: string,
  status: Record<string, unknown>,
): Promise<void> {
  await apis().apps.patchNamespacedDeploymentStatus({ namespace, name, body: { status } }, mergePatch);
}

/** Reads an object or undefined on 404. */
export async function maybe<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

/** Polls `probe` until it returns a truthy value; fails with `what` after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastErr ? `: ${(lastErr as Error).message}` : ''}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The condition `type` of a pipeline's status. */
export function condition(lp: LogPipeline | undefined, type: string) {
  return lp?.status?.conditions?.find((c) => c.type === type);
}

/** Starts a manager on `namespace` with test-friendly timing; the caller stops it. */
export function startManager(namespace: string, opts: Partial<ManagerOptions> = {}): Manager {
  const manager = new Manager({
    kubeConfig: kubeConfig(),
    namespaces: [namespace],
    identity: 'test-operator',
    leaderElection: false,
    concurrency: 2,
    queue: { baseDelayMs: 50, maxDelayMs: 2_000 },
    // LP_OPERATOR_LOG=1 shows the operator's JSON log lines on stderr while debugging a test.
    log: process.env.LP_OPERATOR_LOG
      ? createLogger({ level: 'debug', write: (l) => process.stderr.write(l + '\n') })
      : undefined,
    ...opts,
  });
  manager.start();
  return manager;
}
