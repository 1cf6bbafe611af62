/**
 * The manager's informers (split out of manager.ts): pipelines, owned children (label-selected),
 * Secret metadata and worker pods. Their handlers only enqueue keys, through the hooks given.
 */
import type { LogPipeline } from '../api/types';
import type { KubeClient } from '../apply/kube-rest';
import { MANAGED_BY, MANAGED_BY_LABEL, WORKER_APP_NAME, labelValue, workerName } from '../desired/labels';
import { onlyConfirmsNoPods } from '../status/conditions';
import { podChanged, toPodView, type PodView } from '../status/pod-view';
import {
  toConfigMapView,
  toDeploymentView,
  toPdbView,
  toPipelineView,
  toSecretView,
  toServiceView,
  type ChildView,
  type DeploymentView,
  type SecretView,
  type ServiceView,
} from '../status/views';
import type { CachedObject, InformerHandlers } from './informer';
import { InformerSet, type InformerSetOptions } from './informer-set';
import { ownerKey } from './mapping';

/** How the informers' events reach the manager. */
export interface InformerHooks {
  client: KubeClient;
  namespaces: string[];
  onError: InformerSetOptions<CachedObject>['onError'];
  /** Queues a key (nothing for undefined). */
  enqueue: (key: string | undefined) => void;
  /** A child `kind` was added or updated: queues its owner unless the event is our own write. */
  childChanged: (kind: string, ownerKey: string | undefined, child: ChildView) => void;
  pipelineHandlers: InformerHandlers<LogPipeline>;
  /** A Secret appeared, rotated or went away. */
  secretChanged: (s: CachedObject) => void;
  /** The pipeline key a worker pod belongs to. */
  podKey: (p: PodView) => string | undefined;
}

/** Every informer the manager runs. */
export interface ManagerInformers {
  pipelines: InformerSet<LogPipeline>;
  deployments: InformerSet<DeploymentView>;
  configMaps: InformerSet<ChildView>;
  pdbs: InformerSet<ChildView>;
  services: InformerSet<ServiceView>;
  hpas: InformerSet<ChildView>;
  secrets: InformerSet<SecretView>;
  pods: InformerSet<PodView>;
}

/** Builds the informers; their handlers only enqueue, through `hooks`. */
export function buildInformers(hooks: InformerHooks): ManagerInformers {
  const common = { client: hooks.client, namespaces: hooks.namespaces, onError: hooks.onError };
  const owned = (kind: string) => ({
    ...common,
    kind,
    labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}`,
    handlers: {
      add: (o: ChildView) => hooks.childChanged(kind, ownerKey(o.metadata), o),
      update: (_: ChildView, o: ChildView) => hooks.childChanged(kind, ownerKey(o.metadata), o),
      delete: (o: ChildView) => hooks.enqueue(ownerKey(o.metadata)),
    },
  });
  return {
    pipelines: new InformerSet<LogPipeline>({
      ...common,
      name: 'logpipelines',
      kind: 'LogPipeline',
      transform: toPipelineView,
      handlers: hooks.pipelineHandlers,
    }),
    deployments: new InformerSet<DeploymentView>({
      ...owned('Deployment'),
      name: 'deployments',
      transform: toDeploymentView,
      handlers: deploymentHandlers(hooks),
    }),
    configMaps: new InformerSet<ChildView>({
      ...owned('ConfigMap'),
      name: 'configmaps',
      transform: toConfigMapView,
    }),
    pdbs: new InformerSet<ChildView>({
      ...owned('PodDisruptionBudget'),
      name: 'poddisruptionbudgets',
      transform: toPdbView,
    }),
    services: new InformerSet<ServiceView>({
      ...owned('Service'),
      name: 'services',
      transform: toServiceView,
    }),
    hpas: new InformerSet<ChildView>({
      ...owned('HorizontalPodAutoscaler'),
      name: 'horizontalpodautoscalers',
      transform: toPdbView,
    }),
    ...buildWatchedInformers(hooks, common),
  };
}

/**
 * The owned-child handlers, except that a worker Deployment's update that only confirms it has
 * no pods (the Deployment controller's first answer to a scaled-to-zero Deployment) queues
 * nothing: the reconcile reads nothing of it (status/conditions.ts `onlyConfirmsNoPods`).
 */
function deploymentHandlers(hooks: InformerHooks): InformerHandlers<DeploymentView> {
  const changed = (o: DeploymentView) => hooks.childChanged('Deployment', ownerKey(o.metadata), o);
  return {
    add: changed,
    update: (old, o) => {
      const owner = ownerKey(o.metadata);
      const isWorker =
        owner !== undefined && o.metadata.name === workerName(owner.slice(owner.indexOf('/') + 1));
      if (isWorker && onlyConfirmsNoPods(old, o)) return;
      changed(o);
    },
    delete: (o) => hooks.enqueue(ownerKey(o.metadata)),
  };
}

/** The Secret-metadata and worker-pod informers: not owned children, each with its own filter. */
function buildWatchedInformers(
  hooks: InformerHooks,
  common: Pick<InformerSetOptions<CachedObject>, 'client' | 'namespaces' | 'onError'>,
): Pick<ManagerInformers, 'secrets' | 'pods'> {
  const onSecret = hooks.secretChanged;
  const secrets = new InformerSet<SecretView>({
    ...common,
    name: 'secrets',
    kind: 'Secret',
    metadataOnly: true,
    transform: toSecretView,
    // update: a rotated Secret (new resourceVersion) re-applies users/grants and rolls the workers.
    handlers: {
      add: onSecret,
      update: (old, s) => old.metadata.resourceVersion !== s.metadata.resourceVersion && onSecret(s),
      delete: onSecret,
    },
  });
  const onPod = (p: PodView) => hooks.enqueue(hooks.podKey(p));
  const pods = new InformerSet<PodView>({
    ...common,
    name: 'pods',
    kind: 'Pod',
    labelSelector: `app.kubernetes.io/name=${WORKER_APP_NAME},${MANAGED_BY_LABEL}=${MANAGED_BY}`,
    transform: toPodView,
    // A pod's status changes often (probes, restarts); only a change of what we keep matters.
    handlers: { add: onPod, update: (old, p) => podChanged(old, p) && onPod(p), delete: onPod },
  });
  return { secrets, pods };
}

/** The worker pods of pipeline `namespace/name`. */
export function podsOfPipeline(pods: InformerSet<PodView>, namespace: string, name: string): PodView[] {
  const label = labelValue(name);
  const out: PodView[] = [];
  for (const p of pods.list()) if (p.metadata.namespace === namespace && p.pipeline === label) out.push(p);
  return out;
}

/** The key of the pipeline a worker pod belongs to (its label may be a hashed long name). */
export function pipelineKeyOfPod(pipelines: InformerSet<LogPipeline>, p: PodView): string | undefined {
  const ns = p.metadata.namespace;
  if (pipelines.get(ns, p.pipeline)) return `${ns}/${p.pipeline}`;
  for (const lp of pipelines.list())
    if (lp.metadata.namespace === ns && labelValue(lp.metadata.name) === p.pipeline)
      return `${ns}/${lp.metadata.name}`;
  return undefined;
}
