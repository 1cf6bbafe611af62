/**
 * Closed-loop fixture of the autoscaler tests: the REAL apiserver, Kafka and ClickHouse of the
 * bed, the operator Manager with every external part (topic, table, autoscaler), the PodRunner
 * running the worker Deployments as real worker processes, a producer of firewall lines, and a
 * recorder sampling what the operator decided (Deployment spec.replicas, status.lag, Scaling).
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Registry } from 'prom-client';
import type { Producer } from 'kafkajs';
import type { LogPipeline, LogPipelineSpec } from '../operator/src/api/types';
import type { Manager } from '../operator/src/controller/manager';
import { registerExternalParts, type ExternalClients } from '../operator/src/controller/parts';
import { workerName } from '../operator/src/desired/labels';
import { PodRunner, type PodRunnerOptions } from './env/pod-runner';
import { readTestBed, type TestBed } from './env/testbed';
import {
  apis,
  condition,
  createNamespace,
  createPipeline,
  createSecret,
  deleteNamespace,
  deletePipeline,
  getPipeline,
  maybe,
  pipeline,
  startManager,
  waitFor,
} from './operator-harness';
import { generateSampleLines } from './fixtures/samples';
import { chClient, kafkaClient, produceLines, testProducer } from './worker-support';
import { createTopicsWithLeaders } from './env/kafka-topics';

/** One observation of a pipeline. */
export interface Sample {
  t: number;
  /** Deployment spec.replicas (what the autoscaler set). */
  replicas: number;
  /** Deployment status.replicas (pods the runner has). */
  running: number;
  lag?: NonNullable<LogPipeline['status']>['lag'];
  scaling?: { status: string; reason: string; message: string };
}

/** The whole loop for one test file. */
export interface Loop {
  bed: TestBed;
  namespace: string;
  database: string;
  manager: Manager;
  external: ExternalClients;
  registry: Registry;
  runner: PodRunner;
  producer: Producer;
}

/** Starts the loop in a fresh namespace with its own ClickHouse database. */
export async function startLoop(
  prefix: string,
  runnerEnv?: Record<string, string>,
  runnerOpts: Partial<PodRunnerOptions> = {},
): Promise<Loop> {
  const bed = readTestBed();
  const namespace = await createNamespace(prefix);
  const database = `as_${namespace.replace(/-/g, '_')}`;
  await createSecret(namespace, 'ch', {
    username: bed.clickhouse!.username,
    password: bed.clickhouse!.password,
  });
  const registry = new Registry();
  const manager = startManager(namespace);
  const external = registerExternalParts(manager, { registry });
  const runner = new PodRunner({
    kubeconfig: bed.kubernetes!.kubeconfig,
    // In the bed's directory, removed with it (not one more logpipeline-pods-* in /tmp per test).
    dir: fs.mkdtempSync(path.join(bed.dir, 'pods-')),
    intervalMs: 500,
    env: runnerEnv,
    ...runnerOpts,
  });
  runner.start();
  const producer = await testProducer(bed);
  return { bed, namespace, database, manager, external, registry, runner, producer };
}

/** Deletes the pipelines (Delete policy: the operator drops topics and tables), then stops everything. */
export async function stopLoop(loop: Loop | undefined): Promise<void> {
  if (!loop) return;
  const { custom } = apis();
  const list = (await custom.listNamespacedCustomObject({
    group: 'logpipeline.io',
    version: 'v1alpha1',
    plural: 'logpipelines',
    namespace: loop.namespace,
  })) as { items: LogPipeline[] };
  for (const lp of list.items) await deletePipeline(loop.namespace, lp.metadata.name);
  for (const lp of list.items) {
    await waitFor(
      `${lp.metadata.name} finalized`,
      async () => (await getPipeline(loop.namespace, lp.metadata.name)) === undefined,
      60_000,
    ).catch(() => undefined);
  }
  await loop.producer.disconnect();
  await loop.runner.stop();
  await loop.manager.stop();
  await loop.external.close();
  await deleteNamespace(loop.namespace);
  const ch = chClient(readTestBed());
  await ch.command({ query: `DROP DATABASE IF EXISTS ${loop.database}` }).catch(() => undefined);
  await ch.close();
}

/** Autoscaling settings of a test pipeline. */
export type Autoscaling = NonNullable<NonNullable<LogPipelineSpec['workers']>['autoscaling']>;

/** Options of createAutoscaledPipeline. */
export interface PipelineOptions {
  partitions?: number;
  /** Bootstrap servers instead of the bed's broker (e.g. an unreachable one). */
  brokers?: string[];
  /** Wait for Ready (default true). */
  ready?: boolean;
  /** The topic was made ahead of the operator (createTopic): the pipeline adopts it explicitly. */
  adopt?: boolean;
}

/** Creates an autoscaled pipeline on the bed (3 partitions unless told) and waits until it is Ready. */
export async function createAutoscaledPipeline(
  loop: Loop,
  name: string,
  autoscaling: Autoscaling,
  opts: PipelineOptions = {},
): Promise<LogPipeline> {
  const spec: LogPipelineSpec = {
    kafka: {
      bootstrapServers: opts.brokers ?? [loop.bed.kafka!.bootstrap],
      topic: { name: `${loop.namespace}.${name}`, partitions: opts.partitions ?? 3 },
    },
    clickhouse: {
      url: loop.bed.clickhouse!.url,
      credentialsSecretRef: { name: 'ch' },
      database: loop.database,
      table: name.replace(/-/g, '_'),
    },
    workers: {
      batch: { maxDelay: '300ms' },
      autoscaling: { enabled: true, pollInterval: '1s', ...autoscaling },
    },
    deletionPolicy: 'Delete',
  };
  const lp = pipeline(loop.namespace, name);
  if (opts.adopt) lp.metadata.annotations = { 'logpipeline.io/adopt': 'true' };
  const created = await createPipeline({ ...lp, spec });
  if (opts.ready === false) return created;
  return waitFor(
    `${name} Ready`,
    async () => {
      const lp = await getPipeline(loop.namespace, name);
      return condition(lp, 'Ready')?.status === 'True' ? lp : undefined;
    },
    120_000,
  );
}

/**
 * Produces `count` valid firewall lines, one per Kafka message (lag counts messages). The lines are
 * dated now: the generator's default 2024 clock is older than the 730-day retention, so the TTL
 * would delete them from the table.
 */
export async function produce(
  loop: Loop,
  name: string,
  count: number,
  seed: number,
  partitions = 3,
): Promise<void> {
  const lines = generateSampleLines('mix', count, { seed, startMs: Date.now() - count });
  await produceLines(loop.producer, `${loop.namespace}.${name}`, partitions, lines, 1);
}

/** Creates the pipeline's topic ahead of the operator, e.g. to pre-load a backlog (the pipeline then needs `adopt`). */
export async function createTopic(loop: Loop, name: string, partitions: number): Promise<void> {
  const admin = kafkaClient(loop.bed, 'autoscale-test-admin').admin();
  await admin.connect();
  try {
    await createTopicsWithLeaders(admin, [{ topic: `${loop.namespace}.${name}`, numPartitions: partitions }]);
  } finally {
    await admin.disconnect();
  }
}

/**
 * A TCP forwarder the workers reach ClickHouse through, so a test can cut the workers (and only
 * them) off the database while the operator still reaches it directly.
 */
export class TcpProxy {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(private readonly target: URL) {}

  /** Listens (again, on the same port after `cut`). */
  async open(): Promise<number> {
    const server = net.createServer((client) => {
      const upstream = net.connect(Number(this.target.port), this.target.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as net.AddressInfo).port;
    return this.port;
  }

  /** Refuses new connections and resets the open ones. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Reads one sample of the pipeline and its Deployment. */
export async function sample(loop: Loop, name: string): Promise<Sample> {
  const [lp, dep] = await Promise.all([
    getPipeline(loop.namespace, name),
    maybe(apis().apps.readNamespacedDeployment({ namespace: loop.namespace, name: workerName(name) })),
  ]);
  const sc = condition(lp, 'Scaling');
  return {
    t: Date.now(),
    replicas: dep?.spec?.replicas ?? 0,
    running: dep?.status?.replicas ?? 0,
    lag: lp?.status?.lag,
    scaling: sc && { status: sc.status, reason: sc.reason, message: sc.message },
  };
}

/** Samples a pipeline in the background every `everyMs` until stopped. */
export class Recorder {
  readonly samples: Sample[] = [];
  private running = true;
  private readonly done: Promise<void>;

  constructor(
    private readonly loop: Loop,
    private readonly name: string,
    everyMs = 250,
  ) {
    this.done = (async () => {
      while (this.running) {
        try {
          this.samples.push(await sample(this.loop, this.name));
        } catch {
          // the apiserver is busy: the next sample will do
        }
        await new Promise((r) => setTimeout(r, everyMs));
      }
    })();
  }

  /** Resolves with the first sample (from now on) for which `pred` holds; fails after `timeoutMs`. */
  async until(what: string, pred: (s: Sample, all: Sample[]) => boolean, timeoutMs: number): Promise<Sample> {
    const deadline = Date.now() + timeoutMs;
    let seen = this.samples.length;
    for (;;) {
      for (; seen < this.samples.length; seen++) {
        if (pred(this.samples[seen], this.samples.slice(0, seen + 1))) return this.samples[seen];
      }
      if (Date.now() > deadline) {
        throw new Error(
          `timed out after ${timeoutMs} ms waiting for ${what}; last sample ${JSON.stringify(this.samples[this.samples.length - 1])}`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Stops sampling. */
  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  /** One line per sample, relative to `t0` (for debugging with LP_AUTOSCALE_DEBUG=1). */
  dump(t0: number): string {
    return this.samples
      .map(
        (s) =>
          `${s.t - t0} r=${s.replicas}/${s.running} lag=${s.lag?.total}/${s.lag?.smoothed} rate=${s.lag?.ratePerSecond} ${s.scaling?.reason}${s.scaling?.reason === 'LagUnavailable' ? ` ${s.scaling.message}` : ''}`,
      )
      .join('\n');
  }
}

/** Rows stored in the pipeline's table. */
export async function storedRows(loop: Loop, name: string): Promise<{ rows: number; distinct: number }> {
  const ch = chClient(loop.bed);
  try {
    const rs = await ch.query({
      query: `SELECT count() AS c, uniqExact(kafka_partition, kafka_offset) AS u FROM ${loop.database}.${name.replace(/-/g, '_')}`,
      format: 'JSONEachRow',
    });
    const [r] = await rs.json<{ c: string; u: string }>();
    return { rows: Number(r.c), distinct: Number(r.u) };
  } finally {
    await ch.close();
  }
}

/** Names of the pipeline `name`'s tables in the loop's database (its own and its companions). */
export async function pipelineTables(loop: Loop, name: string): Promise<string[]> {
  const ch = chClient(loop.bed);
  try {
    const rs = await ch.query({
      query:
        'SELECT name FROM system.tables WHERE database = {db:String} AND startsWith(name, {t:String}) ORDER BY name',
      query_params: { db: loop.database, t: name.replace(/-/g, '_') },
      format: 'JSONEachRow',
    });
    return (await rs.json<{ name: string }>()).map((r) => r.name);
  } finally {
    await ch.close();
  }
}

/** ScaledUp/ScaledDown (and other) Events of the pipeline, oldest first. */
export async function scaleEvents(
  loop: Loop,
  name: string,
): Promise<Array<{ reason: string; message: string; type: string }>> {
  const list = await apis().core.listNamespacedEvent({ namespace: loop.namespace });
  return list.items
    .filter((e) => e.involvedObject.name === name && e.involvedObject.kind === 'LogPipeline')
    .sort((a, b) => String(a.metadata.creationTimestamp).localeCompare(String(b.metadata.creationTimestamp)))
    .map((e) => ({ reason: e.reason ?? '', message: e.message ?? '', type: e.type ?? '' }));
}

/** The times at which spec.replicas changed, with the new value. */
export function replicaChanges(samples: Sample[]): Array<{ t: number; from: number; to: number }> {
  const out: Array<{ t: number; from: number; to: number }> = [];
  for (let i = 1; i < samples.length; i++) {
    if (samples[i].replicas !== samples[i - 1].replicas)
      out.push({ t: samples[i].t, from: samples[i - 1].replicas, to: samples[i].replicas });
  }
  return out;
}
