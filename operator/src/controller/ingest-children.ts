/**
 * Applies the syslog receiver's children (ConfigMap, Deployment, Service, PDB, HPA when asked) with
 * the workers' no-op-skipping applier, and deletes them (ours only, by owner uid) once spec.ingest
 * is removed or autoscaling turned off. A pipeline without ingest and nothing cached costs nothing.
 */
import type { ResolvedSpec } from '../api/defaults';
import { applyReplicasAsAutoscaler, objectPath } from '../apply/kube';
import { isStatus, type KubeClient } from '../apply/kube-rest';
import { secretsHash } from '../desired/deployment';
import {
  buildIngestConfigMap,
  buildIngestDeployment,
  buildIngestHpa,
  buildIngestPdb,
  buildIngestService,
  renderIngestConfig,
  type IngestSpec,
} from '../desired/ingest';
import { ingestConfigMapName, ingestName } from '../desired/labels';
import type { IngestObservation } from '../status/ingest';
import {
  toConfigMapView,
  toDeploymentView,
  toPdbView,
  toServiceView,
  type ChildView,
  type SecretView,
} from '../status/views';
import { clampReplicas, type ChildApplier, type ChildCaches, type Lookup } from './children';

/** What applying the receiver did. */
export interface IngestApplyResult {
  observation: IngestObservation;
  /** "Kind/name" of receiver children someone else had changed or deleted (restored). */
  repaired: string[];
}

/** The Secrets the receiver mounts or reads, with why (for SecretNotFound and the rollout hash). */
export function ingestSecrets(spec: IngestSpec): Array<{ name: string; purpose: string }> {
  const refs: Array<{ name: string; purpose: string }> = [];
  const add = (name: string | undefined, purpose: string) => {
    if (name && !refs.some((r) => r.name === name)) refs.push({ name, purpose });
  };
  add(spec.ingest.tls?.secretName, 'syslog TLS certificate');
  add(spec.ingest.tls?.clientCA?.secretName, 'syslog client CA');
  add(spec.kafka.sasl?.secretName, 'Kafka SASL credentials');
  if (spec.kafka.tls?.enabled) add(spec.kafka.tls.caSecretName, 'Kafka CA bundle');
  return refs;
}

const KINDS = [
  'ConfigMap',
  'Deployment',
  'Service',
  'PodDisruptionBudget',
  'HorizontalPodAutoscaler',
] as const;

/** Applies and removes the receiver of each pipeline. */
export class IngestApplier {
  constructor(
    private readonly client: KubeClient,
    private readonly caches: ChildCaches,
    private readonly applier: ChildApplier,
  ) {}

  /** Ensures the receiver of `spec` (which has ingest); returns what the status needs. */
  async apply(spec: IngestSpec, secrets: Lookup<SecretView>): Promise<IngestApplyResult> {
    const { namespace } = spec;
    const name = ingestName(spec.name);
    const refs = ingestSecrets(spec);
    const missing = refs.filter((r) => !secrets.get(namespace, r.name));
    const desired = (live?: { replicas: number }) =>
      spec.ingest.autoscaling.enabled
        ? (live?.replicas ?? spec.ingest.autoscaling.minReplicas)
        : spec.ingest.replicas;
    if (missing.length > 0) {
      const deployment = this.caches.deployments.get(namespace, name);
      const missingSecrets = missing.map((m) => `Secret "${m.name}" (${m.purpose})`).join(', ');
      const observation = {
        ingest: spec.ingest,
        name,
        deployment,
        service: this.caches.services?.get(namespace, name),
        desired: desired(deployment),
        missingSecrets,
      };
      return { observation, repaired: [] };
    }
    const version = secretsHash(
      refs.map((r) => ({
        name: r.name,
        resourceVersion: secrets.get(namespace, r.name)?.metadata.resourceVersion ?? '',
      })),
    );
    const repaired: string[] = [];
    const track = <V>(r: { view: V; repaired: boolean }, label: string): V => {
      if (r.repaired) repaired.push(label);
      return r.view;
    };
    const config = renderIngestConfig(spec);
    const cmName = ingestConfigMapName(spec.name);
    track(
      await this.applier.ensure(
        buildIngestConfigMap(spec, config),
        this.caches.configMaps.get(namespace, cmName),
        toConfigMapView,
      ),
      `ConfigMap/${cmName}`,
    );
    const liveDeployment = this.caches.deployments.get(namespace, name);
    const auto = spec.ingest.autoscaling;
    if (auto.enabled && liveDeployment?.ownsReplicas) {
      // Hand spec.replicas over before we stop sending it (else SSA resets it to 1), as for workers.
      const replicas = clampReplicas(liveDeployment.replicas, auto.minReplicas, auto.maxReplicas);
      await applyReplicasAsAutoscaler(this.client, namespace, name, replicas);
    }
    const deployment = track(
      await this.applier.ensure(
        buildIngestDeployment(spec, config, version),
        liveDeployment,
        toDeploymentView,
      ),
      `Deployment/${name}`,
    );
    const service = track(
      await this.applier.ensure(
        buildIngestService(spec),
        this.caches.services?.get(namespace, name),
        toServiceView,
      ),
      `Service/${name}`,
    );
    track(
      await this.applier.ensure(buildIngestPdb(spec), this.caches.pdbs.get(namespace, name), toPdbView),
      `PodDisruptionBudget/${name}`,
    );
    if (auto.enabled)
      track(
        await this.applier.ensure(buildIngestHpa(spec), this.caches.hpas?.get(namespace, name), toPdbView),
        `HorizontalPodAutoscaler/${name}`,
      );
    else await this.deleteOwned(spec, 'HorizontalPodAutoscaler', name, this.caches.hpas);
    return {
      observation: { ingest: spec.ingest, name, deployment, service, desired: desired(deployment) },
      repaired,
    };
  }

  /** Deletes the receiver children of `spec` that exist in the caches (ingest removed). */
  async remove(spec: ResolvedSpec): Promise<number> {
    const name = ingestName(spec.name);
    let deleted = 0;
    const targets: Array<[string, string, Lookup<ChildView> | undefined]> = [
      ['HorizontalPodAutoscaler', name, this.caches.hpas],
      ['PodDisruptionBudget', name, this.caches.pdbs],
      ['Service', name, this.caches.services],
      ['Deployment', name, this.caches.deployments],
      ['ConfigMap', ingestConfigMapName(spec.name), this.caches.configMaps],
    ];
    for (const [kind, objName, cache] of targets)
      if (await this.deleteOwned(spec, kind, objName, cache)) deleted++;
    return deleted;
  }

  /** Drops the applier's memos of the receiver of pipeline `namespace/name`. */
  forget(namespace: string, pipeline: string): void {
    const keys = KINDS.map(
      (k) => `${k}/${namespace}/${k === 'ConfigMap' ? ingestConfigMapName(pipeline) : ingestName(pipeline)}`,
    );
    this.applier.forgetKeys(keys);
  }

  private async deleteOwned(
    spec: ResolvedSpec,
    kind: string,
    name: string,
    cache: Lookup<ChildView> | undefined,
  ): Promise<boolean> {
    const live = cache?.get(spec.namespace, name);
    // Own what you touch: only an object whose controller is this very pipeline is deleted.
    if (!live || !live.metadata.ownerReferences.some((o) => o.controller && o.uid === spec.uid)) return false;
    try {
      await this.client.request('DELETE', objectPath(kind, spec.namespace, name), {
        body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' },
      });
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
    }
    this.applier.forgetKeys([`${kind}/${spec.namespace}/${name}`]);
    return true;
  }
}
