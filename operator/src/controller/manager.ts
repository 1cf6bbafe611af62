/**
 * Wires the operator: informers (pipelines, owned children, Secret metadata) that only enqueue
 * keys, the work queue, N workers running reconcile, and leader election. Informers run on every
 * instance (a standby has warm caches); only the leader runs workers. Losing leadership drains
 * the workers; `stop` releases the lease, drains, and stops the informers.
 */
import type { LogPipeline } from '../api/types';
import { leaderGuard } from '../apply/guard';
import { createKubeClient, type KubeClient } from '../apply/kube-rest';
import { withRequestScope } from '../apply/request-counts';
import { silentLogger, type Logger } from '../../../common/src/log';
import type { CachedObject } from './informer';
import type { InformerSet } from './informer-set';
import { LeaderElector } from './leader';
import { ClaimIndex } from './parts/claim-index';
import { buildInformers, pipelineKeyOfPod, podsOfPipeline } from './manager-informers';
import type { ManagerOptions } from './manager-options';
import { pipelineChanged, SecretIndex } from './mapping';
import { OwnWriteEvents } from './own-write-events';
import { DEFAULT_CONCURRENCY } from './concurrency';
import type { PodView } from '../status/pod-view';
import { Reconciler } from './reconciler';
import type { ChildView, ServiceView, DeploymentView, SecretView } from '../status/views';
import { WorkQueue, type WorkQueueOptions } from './workqueue';

export { DEFAULT_CONCURRENCY };
export type { LeaderElectionConfig, ManagerOptions } from './manager-options';

/** The running operator. */
export class Manager {
  readonly client: KubeClient;
  readonly reconciler: Reconciler;
  readonly pipelines: InformerSet<LogPipeline>;
  readonly deployments: InformerSet<DeploymentView>;
  readonly configMaps: InformerSet<ChildView>;
  readonly pdbs: InformerSet<ChildView>;
  /** The syslog receivers' Services and HorizontalPodAutoscalers (spec.ingest). */
  readonly services: InformerSet<ServiceView>;
  readonly hpas: InformerSet<ChildView>;
  readonly secrets: InformerSet<SecretView>;
  /** Worker pods (status only): why workers do not run. */
  readonly pods: InformerSet<PodView>;
  private queue: WorkQueue;
  private workers: Promise<void>[] = [];
  private leader?: LeaderElector;
  private leading = false;
  private term = Promise.resolve();
  private readonly secretIndex = new SecretIndex();
  /** Cached pipelines by claimed topic and table (parts/claim-index.ts), kept by the informer's handlers. */
  private readonly claimIndex = new ClaimIndex();

  /** Every cached pipeline, or only those claiming one of `naming` (PartContext.pipelines). */
  claimants(naming?: readonly string[]): Iterable<LogPipeline> {
    return naming ? this.claimIndex.naming(naming) : this.pipelines.list();
  }
  private readonly stopping = new AbortController();
  /** Aborted when this leadership term ends: cancels destructive statements in flight. */
  private termAbort = new AbortController();
  private readonly log: Logger;
  /** Reconciles run by this instance (for tests and metrics). */
  reconcileCount = 0;
  /** Events of pipelines whose reconcile runs: our own writes among them queue nothing. */
  readonly ownWriteEvents = new OwnWriteEvents();

  constructor(private readonly opts: ManagerOptions) {
    this.log = opts.log ?? silentLogger;
    this.client = createKubeClient(opts.kubeConfig);
    this.queue = new WorkQueue(this.queueOptions());
    const informers = this.buildInformers();
    this.pipelines = informers.pipelines;
    this.deployments = informers.deployments;
    this.configMaps = informers.configMaps;
    this.pdbs = informers.pdbs;
    this.services = informers.services;
    this.hpas = informers.hpas;
    this.secrets = informers.secrets;
    this.pods = informers.pods;
    const metrics = opts.metrics;
    this.reconciler = new Reconciler({
      client: this.client,
      pipelines: this.pipelines,
      secrets: this.secrets,
      children: {
        deployments: this.deployments,
        configMaps: this.configMaps,
        pdbs: this.pdbs,
        services: this.services,
        hpas: this.hpas,
        pods: { forPipeline: (ns, name) => this.podsOf(ns, name) },
      },
      log: this.log,
      identity: opts.identity,
      resyncMs: opts.resyncMs,
      externalRecheckMs: opts.externalRecheckMs,
      enqueue: (key) => this.queue.add(key),
      workerColumns: opts.workerColumns,
      allPipelines: (naming) => this.claimants(naming),
      guard: () => {
        const signal = this.termAbort.signal;
        return leaderGuard(signal, async () =>
          this.leader ? this.leader.confirmLeadership() : this.leading && !signal.aborted,
        );
      },
      observer: metrics && {
        conditions: (ns, n, c) => metrics.setConditions(ns, n, c),
        forget: (ns, n) => metrics.forgetPipeline(ns, n),
      },
    });
    metrics?.setSources({
      queueDepth: () => this.queue.len(),
      queueWaiting: () => this.queue.waitingLen(),
      queue: { lanes: () => this.queue.laneLens(), inFlight: () => this.queue.processingLen() },
      isLeader: () => this.leading,
      informerErrors: () =>
        Object.fromEntries(this.informerSets().map((s) => [s.opts.name, s.stats().errors])),
    });
  }

  /** Keys reconciled by this instance at least once: their later work skips the bulk of new keys. */
  private readonly reconciled = new Set<string>();

  private queueOptions(): WorkQueueOptions {
    return {
      laneOf: (key) => (this.reconciled.has(key) ? 'fast' : 'bulk'),
      onHandOut: (ms, lane) => this.opts.metrics?.fleet.observeQueueWait(lane, ms / 1000),
      ...this.opts.queue,
    };
  }

  /** Informers of pipelines, owned children (label-selected) and Secret metadata; handlers only enqueue. */
  private buildInformers() {
    return buildInformers({
      client: this.client,
      namespaces: this.opts.namespaces,
      onError: this.informerError,
      enqueue: (key) => key && this.queue.add(key),
      // A child exactly as our own apply stored it brings nothing new to the reconcile that wrote it.
      childChanged: (kind, owner, o) => {
        const { namespace, name, resourceVersion } = o.metadata;
        this.enqueueUnlessOwn(owner, () => this.reconciler?.ownWrite(kind, namespace, name, resourceVersion));
      },
      pipelineHandlers: this.pipelineHandlers(),
      secretChanged: (s: CachedObject) => {
        this.reconciler?.secretValues.forget(s.metadata.namespace ?? '', s.metadata.name);
        for (const key of this.secretIndex.pipelinesFor(s.metadata.namespace ?? '', s.metadata.name))
          this.queue.add(key);
      },
      podKey: (p) => pipelineKeyOfPod(this.pipelines, p),
    });
  }

  /** The worker pods of pipeline `namespace/name`. */
  private podsOf(namespace: string, name: string): PodView[] {
    return podsOfPipeline(this.pods, namespace, name);
  }

  private informerError = (err: Error, attempt: number, retryInMs: number) => {
    this.log.warn('informer restarting', { err: err.message, attempt, retryInMs });
  };

  private pipelineHandlers() {
    const key = (lp: LogPipeline) => `${lp.metadata.namespace}/${lp.metadata.name}`;
    return {
      add: (lp: LogPipeline) => {
        this.secretIndex.set(lp);
        this.claimIndex.set(lp);
        this.queue.add(key(lp));
      },
      update: (old: LogPipeline, lp: LogPipeline) => {
        this.secretIndex.set(lp);
        this.claimIndex.set(lp);
        const { namespace, name, resourceVersion } = lp.metadata;
        if (!pipelineChanged(old, lp)) return;
        // Our own finalizer patch: the reconcile that sent it went on with the patched object.
        this.enqueueUnlessOwn(key(lp), () =>
          this.reconciler?.ownWrite('LogPipeline', namespace, name, resourceVersion ?? ''),
        );
      },
      delete: (lp: LogPipeline) => {
        this.secretIndex.remove(key(lp));
        this.claimIndex.remove(key(lp));
        this.queue.add(key(lp));
      },
    };
  }

  /**
   * Queues `key` unless the event is exactly our own write; while the key's reconcile runs that is
   * judged when it ends (its write's answer may not be read yet: own-write-events.ts).
   */
  private enqueueUnlessOwn(key: string | undefined, isOwn: () => boolean): void {
    if (!key || this.ownWriteEvents.defer(key, isOwn) || isOwn()) return;
    this.queue.add(key);
  }

  private informerSets(): Array<InformerSet<CachedObject & { metadata: { namespace?: string } }>> {
    return [
      this.pipelines,
      this.deployments,
      this.configMaps,
      this.pdbs,
      this.services,
      this.hpas,
      this.secrets,
      this.pods,
    ] as never;
  }

  /** Queues a reconcile of `namespace/name` (the autoscaler's background decisions call this on a change). */
  enqueue(key: string): void {
    this.queue.add(key);
  }

  /** True once every cache has listed (readiness). */
  isReady(): boolean {
    return this.informerSets().every((s) => s.hasSynced());
  }

  /** True while this instance runs the workers. */
  isLeader(): boolean {
    return this.leading;
  }

  /** Starts the informers and the campaign for leadership (or the workers directly). */
  start(): void {
    for (const s of this.informerSets()) s.start();
    const le = this.opts.leaderElection;
    if (!le) {
      this.term = this.startLeading();
      return;
    }
    this.leader = new LeaderElector({
      client: this.client,
      namespace: le.namespace,
      name: le.name,
      identity: this.opts.identity,
      leaseDurationMs: le.leaseDurationMs,
      renewDeadlineMs: le.renewDeadlineMs,
      retryPeriodMs: le.retryPeriodMs,
      onStartedLeading: () => (this.term = this.term.then(() => this.startLeading())),
      onStoppedLeading: () => (this.term = this.term.then(() => this.stopLeading())),
      onError: (err) => this.log.warn('leader election request failed', { err: err.message }),
    });
    this.leader.start();
  }

  /** Graceful stop: release the lease, finish in-flight reconciles, stop the informers. */
  async stop(): Promise<void> {
    this.stopping.abort();
    if (this.leader) await this.leader.stop();
    else this.term = this.term.then(() => this.stopLeading());
    await this.term;
    await Promise.all(this.informerSets().map((s) => s.stop()));
  }

  private async startLeading(): Promise<void> {
    this.log.info('started leading', { identity: this.opts.identity });
    this.termAbort = new AbortController();
    this.leading = true;
    const aborted = new Promise<void>((resolve) =>
      this.stopping.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    await Promise.race([Promise.all(this.informerSets().map((s) => s.waitForSync())), aborted]);
    if (!this.leading || this.stopping.signal.aborted) return;
    for (const lp of this.pipelines.list()) this.queue.add(`${lp.metadata.namespace}/${lp.metadata.name}`);
    const n = this.opts.concurrency ?? DEFAULT_CONCURRENCY;
    this.workers = Array.from({ length: n }, () => this.runWorker(this.queue));
  }

  private async stopLeading(): Promise<void> {
    if (!this.leading) return;
    this.leading = false;
    // Cancel destructive statements in flight before draining: a lost lease must not finish a DROP.
    this.termAbort.abort();
    this.log.info('stopped leading', { identity: this.opts.identity });
    const old = this.queue;
    // Events keep arriving into a fresh queue; a next term starts from a full resync anyway.
    this.queue = new WorkQueue(this.queueOptions());
    await old.shutDownWithDrain();
    await Promise.all(this.workers);
    this.workers = [];
    // Events still queued by the last reconciles are sent, not lost with the process.
    await this.reconciler.flushEvents();
  }

  private async runWorker(queue: WorkQueue): Promise<void> {
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
      const started = process.hrtime.bigint();
      let result: 'success' | 'requeue' | 'error' = 'success';
      this.ownWriteEvents.begin(key);
      try {
        this.reconcileCount++;
        // The requests this reconcile sends, for the per-reconcile histograms (request-counts.ts).
        const run = await withRequestScope(() => this.reconciler.reconcile(key));
        this.opts.metrics?.observeReconcileRequests(run.scope);
        if (!run.ok) throw run.error;
        const r = run.value;
        if (r.requeue) {
          result = 'requeue';
          queue.addRateLimited(key);
        } else {
          queue.forget(key);
          if (r.requeueAfterMs) queue.addAfter(key, r.requeueAfterMs);
        }
      } catch (err) {
        result = 'error';
        queue.addRateLimited(key);
        this.log.warn('reconcile failed', {
          key,
          attempt: queue.numRequeues(key),
          err: (err as Error).message,
        });
      } finally {
        // Started is started, even when it threw: its retry is not sent behind every untouched
        // key of a storm (depth-first: a pipeline half made is finished before new ones start).
        if (this.pipelines.get(...splitKey(key))) this.reconciled.add(key);
        else this.reconciled.delete(key);
        // Before `done`: an event of someone else that came meanwhile queues the key again.
        if (this.ownWriteEvents.end(key)) queue.add(key);
        queue.done(key);
        this.opts.metrics?.observeReconcile(result, Number(process.hrtime.bigint() - started) / 1e9);
      }
    }
  }
}

function splitKey(key: string): [string, string] {
  const i = key.indexOf('/');
  return [key.slice(0, i), key.slice(i + 1)];
}
