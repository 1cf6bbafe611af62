/**
 * Applies a pipeline's Kubernetes children (ConfigMap, Deployment, PDB) by server-side apply and
 * skips the write when it would be a no-op: we remember, per child, the hash of what we applied
 * and the fingerprint of what the server stored; while both still match the desired object and
 * the cached live object, nothing was changed by anyone. A child that someone edited or deleted
 * is re-applied (repaired) and reported.
 */
import { createHash } from 'node:crypto';
import type { ResolvedSpec } from '../api/defaults';
import { applyObject, applyReplicasAsAutoscaler, type Applicable } from '../apply/kube';
import type { KubeClient } from '../apply/kube-rest';
import { buildConfigMap, type RenderedConfig } from '../desired/configmap';
import { stableJson } from '../../../common/src/stable-json';
import { buildDeployment } from '../desired/deployment';
import { APPLIED_HASH_ANNOTATION, configMapName, workerName } from '../desired/labels';
import { buildPodDisruptionBudget } from '../desired/pdb';
import type { PodView } from '../status/pod-view';
import {
  toConfigMapView,
  toDeploymentView,
  toPdbView,
  type ChildView,
  type DeploymentView,
  type ServiceView,
} from '../status/views';

/** Read access to a cache by namespace and name. */
export interface Lookup<T> {
  get(namespace: string, name: string): T | undefined;
}

/** The caches of the children. */
export interface ChildCaches {
  configMaps: Lookup<ChildView>;
  deployments: Lookup<DeploymentView>;
  pdbs: Lookup<ChildView>;
  /** The syslog receivers' Services and HPAs (spec.ingest); absent: the operator does not watch them. */
  services?: Lookup<ServiceView>;
  hpas?: Lookup<ChildView>;
  /** The worker pods of a pipeline (status only), when the operator watches pods. */
  pods?: { forPipeline(namespace: string, pipeline: string): PodView[] };
}

/** Outcome of applying the children. */
export interface ChildrenResult {
  deployment: DeploymentView;
  /** "Kind/name" of children that had been changed or deleted by someone else and were restored. */
  repaired: string[];
  /** Number of apply requests actually sent (0 when everything was already as desired). */
  writes: number;
}

/** What `ensure` returns for one child. */
type ChildApplied<V extends ChildView> = { view: V; wrote: boolean; repaired: boolean };

interface Memo {
  desiredHash: string;
  fingerprint: string;
  resourceVersion: string;
}

/**
 * True when applying would change nothing. With a memo (we applied or checked it in this
 * process): the desired object and the stored fingerprint are what we remembered. Without one
 * (after a restart): the object carries our hash of this very desired object and nobody else
 * owns spec or data fields, so no one edited what we set.
 */
function unchanged(memo: Memo | undefined, live: ChildView, desiredHash: string): boolean {
  if (memo) return memo.desiredHash === desiredHash && memo.fingerprint === live.fingerprint;
  return live.appliedHash === desiredHash && !live.foreignSpec;
}

/** `desired` with the applied-hash annotation added (the hash is of the object without it). */
function withAppliedHash(desired: Applicable, hash: string): Applicable {
  const meta = desired.metadata as Applicable['metadata'] & { annotations?: Record<string, string> };
  const metadata = { ...meta, annotations: { ...meta.annotations, [APPLIED_HASH_ANNOTATION]: hash } };
  return { ...desired, metadata } as Applicable;
}

/** Clamps `n` into [min, max]. */
export function clampReplicas(n: number, min: number, max: number): number {
  return Math.min(Math.max(n, min), Math.max(min, max));
}

/** Applies children with no-op skipping; one instance per operator (memos live in memory). */
export class ChildApplier {
  private readonly memo = new Map<string, Memo>();

  constructor(
    private readonly client: KubeClient,
    private readonly caches: ChildCaches,
  ) {}

  /** Applies ConfigMap, Deployment and PDB of `spec`; returns the Deployment as stored. */
  async apply(spec: ResolvedSpec, config: RenderedConfig, secretsVersion?: string): Promise<ChildrenResult> {
    const { name } = spec;
    const repaired: string[] = [];
    let writes = 0;
    const track = <V extends ChildView>(r: { view: V; wrote: boolean; repaired: boolean }, label: string) => {
      if (r.wrote) writes++;
      if (r.repaired) repaired.push(label);
      return r.view;
    };
    const cmName = configMapName(name);
    // No ConfigMap while the workers never asked for a pod (issue 18: one write and one watch event
    // fewer per new scaled-to-zero pipeline); the first scale-up applies it before the scale
    // (`ensureConfigMap`), so no pod ever starts without it.
    const configMap = () =>
      this.wantedForPods('ConfigMap', cmName, spec)
        ? this.ensureConfigMap(spec, config)
        : Promise.resolve(undefined);
    const rest = () =>
      Promise.allSettled([
        this.ensureDeployment(spec, config, secretsVersion),
        this.wantedForPods('PodDisruptionBudget', workerName(name), spec)
          ? this.ensurePdb(spec)
          : Promise.resolve(undefined),
      ]);
    // The ConfigMap first (the workers mount it, and pods of a new template must read the new
    // config); the Deployment and its PDB do not depend on each other. A Deployment created with
    // zero replicas starts no pod, so all go at once (issue 18: one round trip fewer).
    let dep: PromiseSettledResult<ChildApplied<DeploymentView>>;
    let pdb: PromiseSettledResult<ChildApplied<ChildView> | undefined>;
    let cm: ChildApplied<ChildView> | undefined;
    if (this.createdAtZero(spec)) [cm, [dep, pdb]] = await Promise.all([configMap(), rest()]);
    else [cm, [dep, pdb]] = [await configMap(), await rest()];
    if (cm) track(cm, `ConfigMap/${cmName}`);
    if (dep.status === 'rejected') throw dep.reason;
    if (pdb.status === 'rejected') throw pdb.reason;
    const deployment = track(dep.value, `Deployment/${workerName(name)}`);
    if (pdb.value) track(pdb.value, `PodDisruptionBudget/${workerName(name)}`);
    return { deployment, repaired, writes };
  }

  /**
   * Applies the workers' PodDisruptionBudget (a no-op when it is as desired). The autoscaler calls
   * it with a scale-up: a Deployment created with zero replicas gets its PDB only then.
   */
  ensurePdb(spec: ResolvedSpec): Promise<ChildApplied<ChildView>> {
    const pdb = buildPodDisruptionBudget(spec);
    return this.ensure(pdb, this.caches.pdbs.get(spec.namespace, pdb.metadata.name), toPdbView);
  }

  /**
   * Applies the workers' ConfigMap (a no-op when it is as desired). The autoscaler calls it before
   * a scale-up and waits for it: a Deployment created with zero replicas gets its ConfigMap only
   * then, and a pod must never start without the config it mounts.
   */
  ensureConfigMap(spec: ResolvedSpec, config: RenderedConfig): Promise<ChildApplied<ChildView>> {
    const cm = buildConfigMap(spec, config);
    return this.ensure(cm, this.caches.configMaps.get(spec.namespace, cm.metadata.name), toConfigMapView);
  }

  /**
   * True when the workers' ConfigMap or PDB (`kind`/`name`) is applied with the other children: it
   * exists (kept as desired, repaired when deleted) or the Deployment asks for pods. Neither
   * matters to a Deployment that never had a pod, and at a thousand new scaled-to-zero pipelines
   * each was one write in six (issue 18); the first scale-up creates them (`runAutoscaler`).
   */
  private wantedForPods(
    kind: 'ConfigMap' | 'PodDisruptionBudget',
    name: string,
    spec: ResolvedSpec,
  ): boolean {
    const { namespace } = spec;
    const cache = kind === 'ConfigMap' ? this.caches.configMaps : this.caches.pdbs;
    if (cache.get(namespace, name)) return true;
    if (this.memo.has(`${kind}/${namespace}/${name}`)) return true;
    return this.asksForPods(spec);
  }

  /**
   * True when the workers of `spec` ask for pods now: fixed replicas above zero, or autoscaled with
   * the live Deployment's count (a new one: the minimum) clamped above zero. What only pods need
   * (ConfigMap, PDB, the parser-stats table) waits for it.
   */
  asksForPods(spec: ResolvedSpec): boolean {
    const auto = spec.workers.autoscaling;
    if (!auto.enabled) return spec.workers.replicas > 0;
    const live = this.caches.deployments.get(spec.namespace, workerName(spec.name));
    return clampReplicas(live?.replicas ?? auto.minReplicas, auto.minReplicas, auto.maxReplicas) > 0;
  }

  /**
   * True when `Kind/namespace/name` at `resourceVersion` is exactly what our last apply stored: its
   * watch event tells the reconcile that sent it nothing new (issue 18: one reconcile fewer per new
   * pipeline). Any later change by anyone has another resourceVersion.
   */
  wrote(kind: string, namespace: string, name: string, resourceVersion: string): boolean {
    return this.memo.get(`${kind}/${namespace}/${name}`)?.resourceVersion === resourceVersion;
  }

  /** Drops the memos of a deleted pipeline. */
  forget(namespace: string, name: string): void {
    for (const key of [
      `ConfigMap/${namespace}/${configMapName(name)}`,
      `Deployment/${namespace}/${workerName(name)}`,
      `PodDisruptionBudget/${namespace}/${workerName(name)}`,
    ]) {
      this.memo.delete(key);
    }
  }

  private async ensureDeployment(spec: ResolvedSpec, config: RenderedConfig, secretsVersion?: string) {
    const live = this.caches.deployments.get(spec.namespace, workerName(spec.name));
    const auto = spec.workers.autoscaling;
    // Without autoscaling our manager sets spec.replicas: a scale by someone else (not in the
    // fingerprint, views.ts) is drift to repair.
    const scaledByOthers = !auto.enabled && live !== undefined && live.replicas !== spec.workers.replicas;
    // Hand spec.replicas to the autoscaler's manager before an apply that leaves it out: if we
    // simply stopped sending it, SSA would remove the field (its only owner let go) and the
    // Deployment would drop to 1. Only before a write: until then our count stands.
    const handOver =
      auto.enabled && live?.ownsReplicas
        ? () =>
            applyReplicasAsAutoscaler(
              this.client,
              spec.namespace,
              live.metadata.name,
              clampReplicas(live.replicas, auto.minReplicas, auto.maxReplicas),
            )
        : undefined;
    const r = await this.ensure(
      buildDeployment(spec, config, secretsVersion),
      scaledByOthers ? undefined : live,
      toDeploymentView,
      live,
      { replicas: this.firstReplicas(spec, live), beforeApply: handOver },
    );
    if (auto.enabled) {
      const target = clampReplicas(r.view.replicas, auto.minReplicas, auto.maxReplicas);
      if (target !== r.view.replicas) {
        await applyReplicasAsAutoscaler(this.client, spec.namespace, r.view.metadata.name, target);
        r.view = { ...r.view, replicas: target };
        r.wrote = true;
      }
    }
    return r;
  }

  /** True when the Deployment does not exist yet and is created with zero replicas (no pod). */
  private createdAtZero(spec: ResolvedSpec): boolean {
    const key = `Deployment/${spec.namespace}/${workerName(spec.name)}`;
    if (this.caches.deployments.get(spec.namespace, workerName(spec.name)) || this.memo.has(key))
      return false;
    const auto = spec.workers.autoscaling;
    return (
      (auto.enabled
        ? clampReplicas(auto.minReplicas, auto.minReplicas, auto.maxReplicas)
        : spec.workers.replicas) === 0
    );
  }

  /**
   * spec.replicas of an autoscaled Deployment we create: minReplicas (issue 18: no worker started
   * only to be stopped, no separate scale write in a creation storm). Our manager owns the field
   * until the autoscaler's first scale or our next apply (which hands it over first).
   */
  private firstReplicas(spec: ResolvedSpec, live: DeploymentView | undefined): number | undefined {
    const auto = spec.workers.autoscaling;
    // Applied before in this process and not yet in the cache: never reset the autoscaler's count.
    if (!auto.enabled || live || this.memo.has(`Deployment/${spec.namespace}/${workerName(spec.name)}`))
      return undefined;
    return clampReplicas(auto.minReplicas, auto.minReplicas, auto.maxReplicas);
  }

  /** Drops the memos of objects `Kind/namespace/name` (e.g. the receiver's, when removed). */
  forgetKeys(keys: string[]): void {
    for (const key of keys) this.memo.delete(key);
  }

  /**
   * Applies `desired` unless the memo says the cached `live` object is already what we applied;
   * returns the stored view, whether a request was sent, and whether someone else had changed it.
   * `write.replicas` is sent as spec.replicas but left out of the hash (the autoscaler takes it over);
   * `write.beforeApply` runs only when a request is sent.
   */
  async ensure<V extends ChildView>(
    desired: Applicable,
    live: V | undefined,
    toView: (raw: Record<string, unknown>) => V,
    stored: V | undefined = live,
    write: { replicas?: number; beforeApply?: () => Promise<unknown> } = {},
  ) {
    const key = `${desired.kind}/${desired.metadata.namespace}/${desired.metadata.name}`;
    const desiredHash = createHash('sha1').update(stableJson(desired)).digest('hex');
    const memo = this.memo.get(key);
    if (live && unchanged(memo, live, desiredHash)) {
      if (!memo)
        this.memo.set(key, {
          desiredHash,
          fingerprint: live.fingerprint,
          resourceVersion: live.metadata.resourceVersion,
        });
      return { view: live, wrote: false, repaired: false };
    }
    const body = withAppliedHash(desired, desiredHash) as Applicable & { spec?: Record<string, unknown> };
    if (write.replicas !== undefined) body.spec = { ...body.spec, replicas: write.replicas };
    await write.beforeApply?.();
    const view = toView(await applyObject(this.client, body));
    const rv = view.metadata.resourceVersion;
    // Our apply changed the object although the desired state did not change since our last
    // apply: someone else had modified or deleted it.
    const repaired =
      !!memo &&
      memo.desiredHash === desiredHash &&
      rv !== memo.resourceVersion &&
      rv !== stored?.metadata.resourceVersion;
    this.memo.set(key, { desiredHash, fingerprint: view.fingerprint, resourceVersion: rv });
    return { view, wrote: true, repaired };
  }
}
