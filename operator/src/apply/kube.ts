/**
 * Writes to the apiserver, each one idempotent: server-side apply of children with ONE field
 * manager (force, because every field we send is ours to own), the LogPipeline's status through
 * the status subresource, finalizer edits guarded by resourceVersion, the scale handover to the
 * autoscaler's field manager, and Events. Reads of Secret values for external parts happen here
 * too, on demand and never cached.
 */
import { PatchStrategy } from './kube-lib';
import { GROUP, PLURAL, VERSION, type LogPipeline, type LogPipelineStatus } from '../api/types';
import { FIELD_MANAGER } from '../desired/labels';
import { isStatus, type KubeClient } from './kube-rest';

/** Field manager the autoscaler writes `spec.replicas` with (through the scale subresource). */
export const AUTOSCALER_FIELD_MANAGER = 'logpipeline-autoscaler';

const COLLECTIONS: Record<string, [prefix: string, plural: string]> = {
  ConfigMap: ['/api/v1', 'configmaps'],
  Secret: ['/api/v1', 'secrets'],
  Event: ['/api/v1', 'events'],
  Pod: ['/api/v1', 'pods'],
  Deployment: ['/apis/apps/v1', 'deployments'],
  PodDisruptionBudget: ['/apis/policy/v1', 'poddisruptionbudgets'],
  Service: ['/api/v1', 'services'],
  HorizontalPodAutoscaler: ['/apis/autoscaling/v2', 'horizontalpodautoscalers'],
  LogPipeline: [`/apis/${GROUP}/${VERSION}`, PLURAL],
};

/** Collection path of `kind` in `namespace`, or across all namespaces when namespace is empty. */
export function collectionPath(kind: string, namespace: string): string {
  const entry = COLLECTIONS[kind];
  if (!entry) throw new Error(`no path known for kind ${kind}`);
  const [prefix, plural] = entry;
  return namespace
    ? `${prefix}/namespaces/${encodeURIComponent(namespace)}/${plural}`
    : `${prefix}/${plural}`;
}

/** Path of one object. */
export function objectPath(kind: string, namespace: string, name: string): string {
  return `${collectionPath(kind, namespace)}/${encodeURIComponent(name)}`;
}

/** A minimal object to apply: kind, apiVersion and a namespaced name. */
export interface Applicable {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string };
}

/** Server-side applies `obj` as the operator's field manager; returns the stored object. */
export function applyObject<T = Record<string, unknown>>(
  client: KubeClient,
  obj: Applicable,
  fieldManager = FIELD_MANAGER,
): Promise<T> {
  return client.request<T>('PATCH', objectPath(obj.kind, obj.metadata.namespace, obj.metadata.name), {
    body: obj,
    contentType: PatchStrategy.ServerSideApply,
    query: { fieldManager, force: true },
  });
}

/**
 * Sets the worker Deployment's replicas as the AUTOSCALER's field manager through the scale
 * subresource. Used to seed the replicas when autoscaling is on and to hand the field over before
 * our own manager stops sending it (a field dropped by its only owner would be reset to 1).
 */
export function applyReplicasAsAutoscaler(
  client: KubeClient,
  namespace: string,
  name: string,
  replicas: number,
): Promise<unknown> {
  return client.request('PATCH', `${objectPath('Deployment', namespace, name)}/scale`, {
    body: { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name, namespace }, spec: { replicas } },
    contentType: PatchStrategy.ServerSideApply,
    query: { fieldManager: AUTOSCALER_FIELD_MANAGER, force: true },
  });
}

/**
 * Merge-patches the status subresource: each key of `status` replaces the stored one, keys it
 * leaves out stay as stored (a merge patch deletes only explicit nulls).
 */
export function patchPipelineStatus(
  client: KubeClient,
  lp: LogPipeline,
  status: LogPipelineStatus,
): Promise<LogPipeline> {
  return client.request<LogPipeline>(
    'PATCH',
    `${objectPath('LogPipeline', lp.metadata.namespace, lp.metadata.name)}/status`,
    {
      body: { status },
      contentType: PatchStrategy.MergePatch,
      // Our one field manager; without it the apiserver names the manager after the HTTP client.
      query: { fieldManager: FIELD_MANAGER },
    },
  );
}

/**
 * Replaces the finalizer list, guarded by the resourceVersion we read (409 if it moved on), so a
 * finalizer another controller added meanwhile is never dropped. Never creates the object.
 */
export function patchFinalizers(
  client: KubeClient,
  lp: LogPipeline,
  finalizers: string[],
): Promise<LogPipeline> {
  return client.request<LogPipeline>(
    'PATCH',
    objectPath('LogPipeline', lp.metadata.namespace, lp.metadata.name),
    {
      body: { metadata: { finalizers, resourceVersion: lp.metadata.resourceVersion } },
      contentType: PatchStrategy.MergePatch,
      query: { fieldManager: FIELD_MANAGER },
    },
  );
}

/** Reads one key of a Secret (decoded); undefined when the Secret or key is missing. */
export async function readSecretKey(
  client: KubeClient,
  namespace: string,
  name: string,
  key: string,
): Promise<string | undefined> {
  try {
    const secret = await client.request<{ data?: Record<string, string> }>(
      'GET',
      objectPath('Secret', namespace, name),
    );
    const b64 = secret.data?.[key];
    return b64 === undefined ? undefined : Buffer.from(b64, 'base64').toString('utf8');
  } catch (err) {
    if (isStatus(err, 404)) return undefined;
    throw err;
  }
}

/** One Event about a LogPipeline. */
export interface PipelineEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** The core/v1 Event body for a new event on `lp` at ISO time `now`, reported by `instance`. */
export function eventBody(lp: LogPipeline, ev: PipelineEvent, instance: string, now: string) {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { generateName: `${lp.metadata.name}.`, namespace: lp.metadata.namespace },
    involvedObject: {
      apiVersion: lp.apiVersion,
      kind: lp.kind,
      name: lp.metadata.name,
      namespace: lp.metadata.namespace,
      uid: lp.metadata.uid,
      resourceVersion: lp.metadata.resourceVersion,
    },
    type: ev.type,
    reason: ev.reason,
    message: ev.message.slice(0, 1024),
    source: { component: FIELD_MANAGER },
    reportingComponent: `${GROUP}/operator`,
    reportingInstance: instance,
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  };
}

/** Creates a core/v1 Event on `lp`; failures are returned, never thrown (events are best effort). */
export async function recordEvent(
  client: KubeClient,
  lp: LogPipeline,
  ev: PipelineEvent,
  instance: string,
): Promise<Error | undefined> {
  const body = eventBody(lp, ev, instance, new Date().toISOString());
  try {
    await client.request('POST', collectionPath('Event', lp.metadata.namespace), { body });
    return undefined;
  } catch (err) {
    return err as Error;
  }
}
