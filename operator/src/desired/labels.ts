/**
 * Names, labels and owner references shared by every Kubernetes child of a LogPipeline. The
 * selector labels are immutable on a Deployment, so they are a small fixed subset.
 */
import { sha256Hex } from '../../../common/src/stable-json';
import { API_VERSION, KIND } from '../api/types';

/** The one field manager the operator applies with. */
export const FIELD_MANAGER = 'logpipeline-operator';
/** Label every child carries; informers select on it so the cache holds only our objects. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
/** Value of MANAGED_BY_LABEL. */
export const MANAGED_BY = 'logpipeline-operator';
/** Label naming the owning pipeline (also a selector label). */
export const PIPELINE_LABEL = 'logpipeline.io/pipeline';
/** Pod-template annotation carrying the sha256 of the worker config (a change rolls the pods). */
export const CONFIG_HASH_ANNOTATION = 'logpipeline.io/config-hash';
/**
 * Pod-template annotation carrying a hash of the referenced Secrets' names and resourceVersions:
 * a rotated password or signing key rolls the pods, which read Secrets only at start.
 */
export const SECRETS_HASH_ANNOTATION = 'logpipeline.io/secrets-hash';
/**
 * Annotation on every child: sha1 of the desired object we last applied (without this
 * annotation). A restarted operator skips the apply when it still matches (no in-memory memo needed).
 */
export const APPLIED_HASH_ANNOTATION = 'logpipeline.io/applied-hash';
/** Value of app.kubernetes.io/name on worker objects. */
export const WORKER_APP_NAME = 'logpipeline-worker';

/** A label value for `text`: itself when it fits 63 characters, else a prefix plus a stable hash. */
export function labelValue(text: string): string {
  if (text.length <= 63) return text;
  const hash = sha256Hex(text, 10);
  return `${text.slice(0, 52).replace(/[-_.]+$/, '')}-${hash}`;
}

/** Name of the worker Deployment and its PodDisruptionBudget. */
export function workerName(pipeline: string): string {
  return `${pipeline}-worker`;
}

/** Name of the worker ConfigMap. */
export function configMapName(pipeline: string): string {
  return `${pipeline}-worker-config`;
}

/** The immutable selector labels of the workers of `pipeline`. */
export function selectorLabels(pipeline: string): Record<string, string> {
  return { 'app.kubernetes.io/name': WORKER_APP_NAME, [PIPELINE_LABEL]: labelValue(pipeline) };
}

/** The selector as a label-selector string (status.workers.selector, for the scale subresource). */
export function selectorString(pipeline: string): string {
  return Object.entries(selectorLabels(pipeline))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/** Labels on every child object and on worker pods. */
export function commonLabels(pipeline: string): Record<string, string> {
  return {
    ...selectorLabels(pipeline),
    'app.kubernetes.io/instance': labelValue(pipeline),
    'app.kubernetes.io/component': 'worker',
    [MANAGED_BY_LABEL]: MANAGED_BY,
  };
}

/** The controller owner reference to the LogPipeline (garbage collection deletes the child with it). */
export function ownerReference(pipeline: { name: string; uid: string }) {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    name: pipeline.name,
    uid: pipeline.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Metadata of a child object: name, namespace, labels, owner reference. */
export function childMetadata(spec: { namespace: string; name: string; uid: string }, name: string) {
  return {
    name,
    namespace: spec.namespace,
    labels: commonLabels(spec.name),
    ownerReferences: [ownerReference(spec)],
  };
}

/** Value of app.kubernetes.io/name on the syslog receiver's objects (never the workers' value). */
export const INGEST_APP_NAME = 'logpipeline-ingest';

/** Name of the receiver's Deployment, Service, PodDisruptionBudget and HorizontalPodAutoscaler. */
export function ingestName(pipeline: string): string {
  return `${pipeline}-ingest`;
}

/** Name of the receiver's ConfigMap (ingest.json). */
export function ingestConfigMapName(pipeline: string): string {
  return `${pipeline}-ingest-config`;
}

/** The immutable selector labels of the receivers of `pipeline` (disjoint from the workers'). */
export function ingestSelectorLabels(pipeline: string): Record<string, string> {
  return { 'app.kubernetes.io/name': INGEST_APP_NAME, [PIPELINE_LABEL]: labelValue(pipeline) };
}

/** Labels on every receiver object and pod. */
export function ingestLabels(pipeline: string): Record<string, string> {
  return {
    ...ingestSelectorLabels(pipeline),
    'app.kubernetes.io/instance': labelValue(pipeline),
    'app.kubernetes.io/component': 'ingest',
    [MANAGED_BY_LABEL]: MANAGED_BY,
  };
}

/** Metadata of a receiver object: name, namespace, receiver labels, owner reference. */
export function ingestMetadata(spec: { namespace: string; name: string; uid: string }, name: string) {
  return { ...childMetadata(spec, name), labels: ingestLabels(spec.name) };
}
