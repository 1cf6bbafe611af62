/**
 * What the scale benchmark watches instead of polling (issue 18): a per-pipeline Ready clock and
 * a stand-in for the Deployment controller, both fed by one watch each, as a cluster's own
 * controllers and a GitOps tool's health check are. The earlier bench listed every LogPipeline and
 * every Deployment of the namespace once a second: at 1000 pipelines that is two 1000-object reads
 * per second which the apiserver pays during the very storm being measured.
 */
import { KubeConfig, Watch, type V1Deployment } from '@kubernetes/client-node';
import { createKubeClient } from '../operator/src/apply/kube-rest';
import { GROUP, PLURAL, VERSION, type LogPipeline } from '../operator/src/api/types';

interface Meta {
  metadata?: { name?: string; resourceVersion?: string };
}

/** Runs a watch of `path` until `stop`, resuming from the last resourceVersion when it ends. */
function watchLoop<T extends Meta>(
  kc: KubeConfig,
  path: string,
  onEvent: (type: string, obj: T) => void,
): { stop(): void } {
  const watch = new Watch(kc);
  let stopped = false;
  let rv: string | undefined;
  let abort: AbortController | undefined;
  const start = (): void => {
    if (stopped) return;
    const params = { allowWatchBookmarks: true, ...(rv ? { resourceVersion: rv } : {}) };
    watch
      .watch(
        path,
        params,
        (type, obj: T) => {
          rv = obj.metadata?.resourceVersion ?? rv;
          if (type !== 'BOOKMARK' && type !== 'ERROR') onEvent(type, obj);
          // 410 Gone: start over (every object comes again as ADDED; the handlers are idempotent).
          if (type === 'ERROR') rv = undefined;
        },
        () => setTimeout(start, stopped ? 0 : 200),
      )
      .then(
        (a) => (abort = a),
        () => setTimeout(start, 500),
      );
  };
  start();
  return {
    stop: () => {
      stopped = true;
      abort?.abort();
    },
  };
}

/** When each pipeline of a namespace was first seen and first Ready (ms, this process's clock). */
export interface ReadyClock {
  /** Pipelines seen so far, and how many of them are Ready. */
  counts(): { total: number; ready: number };
  /** Per pipeline: from its first watch event (its creation) to its first Ready=True. */
  latenciesMs(): number[];
  /** When each pipeline first turned Ready (ms since the epoch). */
  readyTimes(): number[];
  stop(): void;
}

/** Watches the LogPipelines of `namespace` and clocks each one's first Ready=True. */
export function readyClock(kc: KubeConfig, namespace: string): ReadyClock {
  const seen = new Map<string, number>();
  const ready = new Map<string, number>();
  const w = watchLoop<LogPipeline>(
    kc,
    `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${PLURAL}`,
    (type, lp) => {
      const name = lp.metadata.name;
      const now = Date.now();
      if (type === 'DELETED') return;
      if (!seen.has(name)) seen.set(name, now);
      const isReady = lp.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      if (isReady && !ready.has(name)) ready.set(name, now);
    },
  );
  return {
    counts: () => ({ total: seen.size, ready: ready.size }),
    latenciesMs: () => [...ready].map(([name, at]) => at - (seen.get(name) ?? at)),
    readyTimes: () => [...ready.values()],
    stop: () => w.stop(),
  };
}

/**
 * Plays the Deployment controller for zero-replica Deployments of `namespace`: on every watch
 * event of one whose status lags its generation, writes observedGeneration and zero pods, with
 * `workers` writes at once (kube-controller-manager's --concurrent-deployment-syncs is 5). It
 * never claims a pod that does not exist; Deployments asking for pods are the pod runner's. Its
 * writes go over kept-alive connections, as client-go's do.
 */
export function zeroReplicaController(
  kc: KubeConfig,
  namespace: string,
  workers = 5,
): { stop(): Promise<void> } {
  const client = createKubeClient(kc);
  const due = new Map<string, V1Deployment>();
  let running = 0;
  let idle: (() => void) | undefined;
  const pump = (): void => {
    while (running < workers && due.size > 0) {
      const [name, d] = due.entries().next().value as [string, V1Deployment];
      due.delete(name);
      running++;
      client
        .request('PUT', `/apis/apps/v1/namespaces/${namespace}/deployments/${name}/status`, {
          body: {
            ...d,
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            status: {
              observedGeneration: d.metadata!.generation,
              replicas: 0,
              readyReplicas: 0,
              updatedReplicas: 0,
              availableReplicas: 0,
            },
          },
        })
        // A conflict means a newer version exists: its own watch event brings it here again.
        .catch(() => undefined)
        .finally(() => {
          running--;
          pump();
          if (running === 0 && due.size === 0) idle?.();
        });
    }
  };
  const w = watchLoop<V1Deployment>(kc, `/apis/apps/v1/namespaces/${namespace}/deployments`, (type, d) => {
    const name = d.metadata?.name;
    if (!name) return;
    if (type === 'DELETED') return void due.delete(name);
    if (d.spec?.replicas !== 0 || d.status?.observedGeneration === d.metadata?.generation) {
      due.delete(name);
      return;
    }
    due.set(name, d);
    pump();
  });
  return {
    stop: async () => {
      w.stop();
      due.clear();
      if (running > 0) await new Promise<void>((r) => (idle = r));
    },
  };
}
