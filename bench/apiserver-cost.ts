/**
 * kube-apiserver CPU per request kind, for the writes a new pipeline costs (issue 18):
 * `node dist/bench/apiserver-cost.js [--pipelines 200] [--concurrency 8]`. Starts only etcd and
 * kube-apiserver (the bed's, with the CRDs), opens the watches the operator keeps (LogPipelines;
 * its children by label), then sends each kind of request `pipelines` times and reads the
 * apiserver's CPU (its process group, /proc) before and after: CPU milliseconds per request by
 * kind, with etcd's beside it. The objects are the operator's own (resolveSpec + the desired
 * builders) and the status bodies are a new pipeline's two status writes, so the table says which
 * of the operator's writes the apiserver pays most for, and what a plain POST would save over a
 * server-side apply that creates the object.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveSpec } from '../operator/src/api/defaults';
import { API_VERSION, type LogPipeline, type LogPipelineStatus } from '../operator/src/api/types';
import {
  applyObject,
  collectionPath,
  eventBody,
  patchFinalizers,
  patchPipelineStatus,
  type Applicable,
} from '../operator/src/apply/kube';
import { KubeConfig } from '../operator/src/apply/kube-lib';
import { createKubeClient, type KubeClient } from '../operator/src/apply/kube-rest';
import { buildWorkerColumns, resolveTableSchema } from '../operator/src/desired/clickhouse';
import { buildConfigMap, renderWorkerConfig } from '../operator/src/desired/configmap';
import { buildDeployment } from '../operator/src/desired/deployment';
import { FIELD_MANAGER, MANAGED_BY, MANAGED_BY_LABEL } from '../operator/src/desired/labels';
import { buildPodDisruptionBudget } from '../operator/src/desired/pdb';
import { applyCrds } from '../test/env/kube-crds';
import { startKubernetes, stopKubernetes } from '../test/env/kubernetes';
import { groupCpuSeconds } from './autoscale-support';

const NS = 'apiserver-cost';
const METADATA_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

/** A new pipeline's spec as the scale benchmark writes it (bench/autoscale-support.ts benchSpec). */
function pipeline(name: string): LogPipeline {
  return {
    apiVersion: API_VERSION,
    kind: 'LogPipeline',
    metadata: { name, namespace: NS },
    spec: {
      kafka: { bootstrapServers: ['127.0.0.1:9092'], topic: { name: `${NS}.${name}`, partitions: 1 } },
      clickhouse: {
        url: 'http://127.0.0.1:8123',
        credentialsSecretRef: { name: 'ch' },
        database: 'bench',
        table: name,
      },
      workers: {
        batch: { maxDelay: '300ms' },
        autoscaling: { enabled: true, minReplicas: 0, maxReplicas: 1, lagPerReplica: 10_000 },
      },
      deadLetter: { enabled: false },
    },
  } as LogPipeline;
}

const condition = (type: string, status: string, reason: string, message: string) => ({
  type,
  status,
  reason,
  message,
  observedGeneration: 1,
  lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
});

/** The first status write of a new pipeline (parts known, workers not yet) and the Ready one. */
function statuses(name: string): [LogPipelineStatus, LogPipelineStatus] {
  const owner = `${NS}/${name}/00000000-0000-0000-0000-000000000000`;
  const common = {
    observedGeneration: 1,
    topic: {
      name: `${NS}.${name}`,
      partitions: 1,
      clusterId: 'MWj69w9CaPP35X_nm7ECbg',
      owner,
      maxMessageBytes: 1048588,
    },
    table: { database: 'bench', table: name, owner, serverIdentity: 'host:vm', serverVersion: '26.7.2.1' },
  };
  const parts = [
    condition(
      'TopicReady',
      'True',
      'TopicReady',
      `topic ${NS}.${name} has 1 partitions and the managed configs`,
    ),
    condition('TableReady', 'True', 'TableReady', `bench: ${name}, ${name}_parser_stats match the spec`),
    condition('Stalled', 'False', 'NoStall', 'no worker crash loop and no stalled partition detected'),
    condition('ParserCoverage', 'Unknown', 'NoRecentRows', 'no rows parsed in the last 15m'),
  ];
  const first = {
    ...common,
    conditions: [
      condition('Ready', 'False', 'WorkersNotReady', 'the worker Deployment does not exist yet'),
      ...parts,
      condition('Reconciling', 'True', 'WorkersNotReady', 'the worker Deployment does not exist yet'),
    ],
  };
  const ready = {
    ...common,
    conditions: [
      condition('Ready', 'True', 'PipelineReady', 'all parts of the pipeline are ready'),
      ...parts,
      condition('WorkersReady', 'True', 'ScaledToZero', 'no workers requested (scaled to zero)'),
      condition(
        'Scaling',
        'True',
        'BelowActivation',
        '0 workers (minReplicas); lag 0 is at or below activationLag 0',
      ),
      condition('Reconciling', 'False', 'PipelineReady', 'all parts of the pipeline are ready'),
    ],
    lag: { total: 0, maxPartition: 0, smoothed: 0, ratePerSecond: 0 },
    workers: {
      desired: 0,
      current: 0,
      ready: 0,
      selector: `app.kubernetes.io/name=logpipeline-worker,logpipeline.io/pipeline=${name}`,
    },
  };
  return [first as LogPipelineStatus, ready as LogPipelineStatus];
}

/** The operator's three children of pipeline `name`, renamed with `suffix` (POST and SSA sets apart). */
function children(name: string, suffix = ''): Applicable[] {
  const spec = resolveSpec({
    ...pipeline(name),
    metadata: { name, namespace: NS, uid: `uid-${name}` },
  } as LogPipeline);
  const config = renderWorkerConfig(spec, buildWorkerColumns(resolveTableSchema(spec)));
  const rename = (o: Applicable) => ({ ...o, metadata: { ...o.metadata, name: o.metadata.name + suffix } });
  return [buildConfigMap(spec, config), buildDeployment(spec, config), buildPodDisruptionBudget(spec)].map(
    (o) => rename(o as Applicable),
  );
}

/** Runs `fn` over `items` with at most `limit` in flight. */
async function pool<T>(items: T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

type Measure = (kind: string, fn: (name: string) => Promise<unknown>) => Promise<void>;

/** Opens the operator's watches (every LogPipeline, its children by label): their fan-out is paid per write. */
function watchLikeTheOperator(client: KubeClient, signal: AbortSignal): void {
  const owned = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;
  for (const [kind, labelSelector] of [
    ['LogPipeline', undefined],
    ['ConfigMap', owned],
    ['Deployment', owned],
    ['PodDisruptionBudget', owned],
  ] as const)
    void client
      .watch(collectionPath(kind, NS), { watch: true, labelSelector }, () => undefined, { signal })
      .catch(() => undefined);
}

/** The user's create, then the operator's writes on the pipeline: finalizer, two status writes, an Event. */
async function pipelineWrites(client: KubeClient, measure: Measure): Promise<void> {
  const stored = new Map<string, LogPipeline>();
  const keep = (name: string) => (lp: LogPipeline) => stored.set(name, lp);
  await measure('POST logpipelines (the user)', (name) =>
    client
      .request<LogPipeline>('POST', collectionPath('LogPipeline', NS), { body: pipeline(name) })
      .then(keep(name)),
  );
  await measure('PATCH logpipelines finalizer (merge)', (name) =>
    patchFinalizers(client, stored.get(name)!, ['logpipeline.io/finalizer']).then(keep(name)),
  );
  await measure('PATCH logpipelines/status 1st (merge)', (name) =>
    patchPipelineStatus(client, stored.get(name)!, statuses(name)[0]).then(keep(name)),
  );
  await measure('PATCH logpipelines/status Ready (merge)', (name) =>
    patchPipelineStatus(client, stored.get(name)!, statuses(name)[1]).then(keep(name)),
  );
  // The Ready status again with a changed message, answered in full or as metadata only.
  const again = (name: string, tag: string) => {
    const s = statuses(name)[1];
    const conditions = s.conditions!.map((c) =>
      c.type === 'Stalled' ? { ...c, message: `${c.message} ${tag}` } : c,
    );
    return { ...s, conditions };
  };
  await measure('PATCH logpipelines/status (full answer)', (name) =>
    patchPipelineStatus(client, stored.get(name)!, again(name, 'a')),
  );
  await measure('PATCH logpipelines/status (metadata-only answer)', (name) =>
    client.request('PATCH', `${collectionPath('LogPipeline', NS)}/${name}/status`, {
      body: { status: again(name, 'b') },
      contentType: 'application/merge-patch+json',
      accept: METADATA_ACCEPT,
    }),
  );
  const ev = {
    type: 'Normal' as const,
    reason: 'PipelineReady',
    message: 'all parts of the pipeline are ready',
  };
  await measure('POST events', (name) =>
    client.request('POST', collectionPath('Event', NS), {
      body: eventBody(stored.get(name)!, ev, 'bench', new Date().toISOString()),
    }),
  );
}

/** Each child created by server-side apply, by POST, applied again unchanged, and created with a metadata-only answer. */
async function childWrites(client: KubeClient, measure: Measure): Promise<void> {
  for (const [i, kind] of ['ConfigMap', 'Deployment', 'PodDisruptionBudget'].entries()) {
    await measure(`SSA apply ${kind} (creates it)`, (name) => applyObject(client, children(name)[i]));
    await measure(`POST ${kind} (fieldManager)`, (name) =>
      client.request('POST', collectionPath(kind, NS), {
        body: children(name, '-post')[i],
        query: { fieldManager: FIELD_MANAGER },
      }),
    );
    await measure(`SSA apply ${kind} unchanged`, (name) => applyObject(client, children(name)[i]));
    await measure(`SSA apply ${kind} (creates it, metadata-only answer)`, (name) => {
      const body = children(name, '-meta')[i];
      return client.request('PATCH', `${collectionPath(kind, NS)}/${body.metadata.name}`, {
        body,
        contentType: 'application/apply-patch+yaml',
        query: { fieldManager: FIELD_MANAGER, force: true },
        accept: METADATA_ACCEPT,
      });
    });
  }
}

/**
 * Semantics: whether a key dropped from the applied ConfigMap is removed, for the ConfigMap the
 * apply created and the one POST created (our manager's Update entry keeps owning its fields).
 */
async function droppedKeyRemoved(client: KubeClient, name: string): Promise<Record<string, boolean>> {
  const out: Record<string, boolean> = {};
  for (const [how, suffix] of [
    ['createdByApply', ''],
    ['createdByPost', '-post'],
  ] as const) {
    const cm = children(name, suffix)[0] as Applicable & { data: Record<string, string> };
    const { 'config.json': _gone, ...rest } = cm.data;
    const after = await applyObject<{ data?: Record<string, string> }>(client, {
      ...cm,
      data: { ...rest, other: 'x' },
    } as Applicable);
    out[how] = !after.data || !('config.json' in after.data);
  }
  return out;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const opt = (name: string, dflt: number) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? Number(args[i + 1]) : dflt;
  };
  const n = opt('pipelines', 200);
  const concurrency = opt('concurrency', 8);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lp-bench-apicost-'));
  const bed = await startKubernetes(path.join(dir, 'kubernetes'), process.pid);
  const abort = new AbortController();
  try {
    await applyCrds(bed);
    const kc = new KubeConfig();
    kc.loadFromFile(bed.kubeconfig);
    const client = createKubeClient(kc);
    await client.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } });
    watchLikeTheOperator(client, abort.signal);
    await new Promise((r) => setTimeout(r, 1000));
    const names = Array.from({ length: n }, (_, i) => `p${String(i).padStart(4, '0')}`);
    const rows: Array<{ kind: string; apiMsPerRequest: number; etcdMsPerRequest: number }> = [];
    const perRequest = (cpu0: number, cpu1: number) => Math.round(((cpu1 - cpu0) * 1e4) / n) / 10;
    const measure: Measure = async (kind, fn) => {
      const a = groupCpuSeconds(bed.apiserver.pid!);
      const e = groupCpuSeconds(bed.etcd.pid!);
      await pool(names, concurrency, fn);
      // Watch fan-out and audit run after the answer: let them finish inside the window.
      await new Promise((r) => setTimeout(r, 500));
      const row = {
        kind,
        apiMsPerRequest: perRequest(a, groupCpuSeconds(bed.apiserver.pid!)),
        etcdMsPerRequest: perRequest(e, groupCpuSeconds(bed.etcd.pid!)),
      };
      rows.push(row);
      process.stderr.write(`${JSON.stringify(row)}\n`);
    };
    await pipelineWrites(client, measure);
    await childWrites(client, measure);
    const dropped = await droppedKeyRemoved(client, names[0]);
    const load = os.loadavg();
    process.stdout.write(
      `${JSON.stringify({ pipelines: n, concurrency, load, rows, droppedKeyRemoved: dropped }, null, 2)}\n`,
    );
  } finally {
    abort.abort();
    await stopKubernetes(bed);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().catch((err: Error) => {
    process.stderr.write(`${err.stack ?? err.message}\n`);
    process.exit(1);
  });
}
