/**
 * Slim projections of cached objects. The informers keep only what the reconciler reads: for
 * children a fingerprint of the fields anyone could edit instead of the fields themselves, and
 * the Deployment's status; Secrets arrive as metadata only. This keeps the operator's memory
 * flat with 1000 pipelines.
 */
import { createHash } from 'node:crypto';
import type { LogPipeline } from '../api/types';
import { stableJson } from '../../../common/src/stable-json';
import { APPLIED_HASH_ANNOTATION, FIELD_MANAGER } from '../desired/labels';

/** Field manager of the autoscaler's scale writes (kept here: views must not import apply/). */
const AUTOSCALER_MANAGER = 'logpipeline-autoscaler';

/** Owner reference fields used to map a child to its pipeline. */
export interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

/** Cached view of any child object (ConfigMap, PDB, and the base of a Deployment). */
export interface ChildView {
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    resourceVersion: string;
    ownerReferences: OwnerRef[];
  };
  /** sha1 of labels, annotations, owner references and spec/data: changes on any edit of those. */
  fingerprint: string;
  /** Our annotation: hash of the desired object we last applied (children.ts). */
  appliedHash?: string;
  /** True when a field manager other than ours (or the autoscaler's) owns spec or data fields. */
  foreignSpec?: boolean;
}

/** Cached view of the worker Deployment. */
export interface DeploymentView extends ChildView {
  generation: number;
  /** spec.replicas as stored (defaulted to 1 by the apiserver when nobody sets it). */
  replicas: number;
  /** True while OUR field manager owns spec.replicas (it must be handed over before we drop it). */
  ownsReplicas: boolean;
  /** The Deployment controller's deployment.kubernetes.io/revision: 2 and up once a template replaced an earlier one. */
  revision?: number;
  status: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
  };
}

/** Cached view of a Service: fingerprint and the addresses senders can use. */
export interface ServiceView extends ChildView {
  type: string;
  clusterIP?: string;
  /** Load balancer ingress addresses (IP or hostname), once the provider assigned them. */
  ingress: string[];
  /** Node ports by Service port name (NodePort and LoadBalancer). */
  nodePorts: Record<string, number>;
}

/** Projects a Service. */
export function toServiceView(raw: Raw): ServiceView {
  const meta = raw.metadata as RawMeta;
  const spec = (raw.spec ?? {}) as {
    type?: string;
    clusterIP?: string;
    ports?: Array<{ name?: string; nodePort?: number }>;
  };
  const st = (raw.status ?? {}) as { loadBalancer?: { ingress?: Array<{ ip?: string; hostname?: string }> } };
  const nodePorts: Record<string, number> = {};
  for (const p of spec.ports ?? []) if (p.name && p.nodePort) nodePorts[p.name] = p.nodePort;
  return {
    metadata: childMeta(meta),
    fingerprint: fingerprint(meta, raw.spec),
    type: spec.type ?? 'ClusterIP',
    clusterIP: spec.clusterIP && spec.clusterIP !== 'None' ? spec.clusterIP : undefined,
    ingress: (st.loadBalancer?.ingress ?? []).map((i) => i.ip ?? i.hostname ?? '').filter((a) => a !== ''),
    nodePorts,
  };
}

/** Cached view of a Secret: its name only. */
export interface SecretView {
  metadata: { name: string; namespace: string; resourceVersion: string };
}

type Raw = Record<string, unknown>;
type RawMeta = {
  name: string;
  namespace: string;
  uid: string;
  resourceVersion: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerRef[];
  managedFields?: Array<{ manager?: string; operation?: string; subresource?: string; fieldsV1?: Raw }>;
};

/** Annotations the Deployment controller keeps on every Deployment: its bookkeeping, not an edit. */
const CONTROLLER_ANNOTATION = /^deployment\.kubernetes\.io\//;

function ownAnnotations(annotations: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!annotations) return annotations;
  const keys = Object.keys(annotations).filter((k) => !CONTROLLER_ANNOTATION.test(k));
  if (keys.length === Object.keys(annotations).length) return annotations;
  return Object.fromEntries(keys.map((k) => [k, annotations[k]]));
}

function fingerprint(meta: RawMeta, body: unknown): string {
  const a = ownAnnotations(meta.annotations);
  const basis = stableJson({ l: meta.labels, a, o: meta.ownerReferences, b: body });
  return createHash('sha1').update(basis).digest('hex');
}

/**
 * True when someone other than the operator and its autoscaler wrote spec or data fields (an
 * edit, a `kubectl apply`): status subresource writers and metadata-only writers (the Deployment
 * controller's revision annotation) do not count.
 */
export function hasForeignSpecManager(meta: RawMeta): boolean {
  return (meta.managedFields ?? []).some((mf) => {
    if (mf.manager === FIELD_MANAGER || mf.manager === AUTOSCALER_MANAGER) return false;
    if (mf.subresource) return false;
    const f = mf.fieldsV1 ?? {};
    return 'f:spec' in f || 'f:data' in f || 'f:binaryData' in f;
  });
}

/** The fields every child view shares besides metadata. */
function childBase(
  meta: RawMeta,
  body: unknown,
): Pick<ChildView, 'fingerprint' | 'appliedHash' | 'foreignSpec'> {
  return {
    fingerprint: fingerprint(meta, body),
    appliedHash: meta.annotations?.[APPLIED_HASH_ANNOTATION],
    foreignSpec: hasForeignSpecManager(meta),
  };
}

function childMeta(meta: RawMeta): ChildView['metadata'] {
  const owners = (meta.ownerReferences ?? []).map(({ apiVersion, kind, name, uid, controller }) => ({
    apiVersion,
    kind,
    name,
    uid,
    controller,
  }));
  return {
    name: meta.name,
    namespace: meta.namespace,
    uid: meta.uid,
    resourceVersion: meta.resourceVersion,
    ownerReferences: owners,
  };
}

/** Projects a ConfigMap (data hashed, not kept). */
export function toConfigMapView(raw: Raw): ChildView {
  const meta = raw.metadata as RawMeta;
  return { metadata: childMeta(meta), ...childBase(meta, [raw.data, raw.binaryData]) };
}

/** Projects a PodDisruptionBudget. */
export function toPdbView(raw: Raw): ChildView {
  const meta = raw.metadata as RawMeta;
  return { metadata: childMeta(meta), ...childBase(meta, raw.spec) };
}

/** True when `manager` applied spec.replicas (main resource or scale subresource). */
export function managerOwnsReplicas(meta: RawMeta, manager = FIELD_MANAGER): boolean {
  return (meta.managedFields ?? []).some((mf) => {
    if (mf.manager !== manager) return false;
    const spec = mf.fieldsV1?.['f:spec'] as Raw | undefined;
    return spec !== undefined && 'f:replicas' in spec;
  });
}

/** Projects a Deployment: fingerprint, replicas, ownership of replicas and status. */
export function toDeploymentView(raw: Raw): DeploymentView {
  const meta = raw.metadata as RawMeta;
  const spec = (raw.spec ?? {}) as Raw;
  const st = (raw.status ?? {}) as DeploymentView['status'] & Raw;
  return {
    metadata: childMeta(meta),
    // spec.replicas is left out of the fingerprint: the autoscaler's scale writes change it, and
    // each would otherwise look like an edit and cost a re-apply; it is compared on its own
    // (`replicas`, controller/children.ts) where our manager sets it.
    ...childBase(meta, { ...spec, replicas: undefined }),
    generation: meta.generation ?? 0,
    replicas: typeof spec.replicas === 'number' ? spec.replicas : 1,
    ownsReplicas: managerOwnsReplicas(meta),
    ...revisionOf(meta.annotations),
    status: {
      observedGeneration: st.observedGeneration,
      replicas: st.replicas,
      updatedReplicas: st.updatedReplicas,
      readyReplicas: st.readyReplicas,
      availableReplicas: st.availableReplicas,
      conditions: st.conditions?.map(({ type, status, reason, message }) => ({
        type,
        status,
        reason,
        message,
      })),
    },
  };
}

/** The controller's revision annotation as `{ revision }`, or nothing when absent or unreadable. */
function revisionOf(annotations: Record<string, string> | undefined): { revision?: number } {
  const n = Number(annotations?.['deployment.kubernetes.io/revision']);
  return Number.isInteger(n) && n > 0 ? { revision: n } : {};
}

/** Projects a Secret's PartialObjectMetadata to its name. */
export function toSecretView(raw: Raw): SecretView {
  const meta = raw.metadata as RawMeta;
  return { metadata: { name: meta.name, namespace: meta.namespace, resourceVersion: meta.resourceVersion } };
}

/** Keeps a LogPipeline whole except managedFields and the last-applied annotation. */
export function toPipelineView(raw: Raw): LogPipeline {
  const lp = raw as unknown as LogPipeline & { metadata: { managedFields?: unknown } };
  const { managedFields: _mf, ...metadata } = lp.metadata;
  const annotations = metadata.annotations && { ...metadata.annotations };
  if (annotations) delete annotations['kubectl.kubernetes.io/last-applied-configuration'];
  return { ...lp, metadata: { ...metadata, annotations } };
}
