/**
 * reconcile(key) for one LogPipeline, with controller-runtime's contract: level-triggered (reads
 * the cached object, never the event that woke it), idempotent, never sleeps. A thrown error means
 * "retry with this key's backoff"; a TerminalError becomes a False condition and is not retried
 * until the spec changes; timed work is returned as `requeueAfterMs`.
 */
import type { ResolvedSpec } from '../api/defaults';
import type { LogPipeline } from '../api/types';
import { patchFinalizers, readSecretKey } from '../apply/kube';
import { KubeApiError } from '../apply/kube-rest';
import type { RenderedConfig } from '../desired/configmap';
import { INVALID_COLUMNS } from '../desired/worker-columns';
import { workerName } from '../desired/labels';
import { silentLogger, type Logger } from '../../../common/src/log';
import { UNGUARDED } from '../apply/guard';
import { readyCondition, type ConditionInput } from '../status/conditions';
import { computeStatus, conflictConditions } from '../status/compute';
import { progressConditions } from '../status/kstatus';
import { sanitizeMessage } from '../status/sanitize';
import { ChildApplier } from './children';
import { IngestApplier } from './ingest-children';
import type { ExternalPart, PartContext, PartName, ScalingPart, SealingPart } from './external';
import { FINALIZER, finalizePipeline } from './finalize';
import { applyIngest } from './ingest-step';
import { reportMissingSecrets } from './missing-secrets';
import { foldChangeEvents } from './parts/change-events';
import { preparePipeline, type PreparedPipeline } from './prepare';
import { TerminalError, type ReconcileResult, type ReconcilerOptions } from './reconcile-types';
import { runAutoscaler, runPart, type PartRun } from './run-parts';
import { referencedSecrets, secretsVersion } from './secrets';
import { timed } from '../apply/request-counts';
import { PartMemo } from './part-memo';
import { SecretValues } from './secret-values';
import { StatusWriter } from './status-writer';
import type { DeploymentView } from '../status/views';

export { TerminalError, type ReconcileResult, type ReconcilerOptions } from './reconcile-types';

/** Reconciles LogPipelines into Kubernetes children, external parts and status. */
export class Reconciler {
  private readonly parts = new Map<PartName, ExternalPart>();
  private autoscaler?: ScalingPart;
  private sealer?: SealingPart;
  private readonly childApplier: ChildApplier;
  private readonly ingestApplier: IngestApplier;
  private readonly status: StatusWriter;
  private readonly log: Logger;
  /** Clean external outcomes reused between rechecks (controller/part-memo.ts); off with recheckMs 0. */
  readonly partMemo?: PartMemo;
  /** Secret keys cached by resourceVersion (controller/secret-values.ts). */
  readonly secretValues: SecretValues;

  constructor(private readonly opts: ReconcilerOptions) {
    this.log = opts.log ?? silentLogger;
    const recheckMs = opts.externalRecheckMs ?? 300_000;
    if (recheckMs > 0) this.partMemo = new PartMemo({ recheckMs, onPeerChanged: opts.enqueue });
    this.secretValues = new SecretValues(
      (ns, name, key) => readSecretKey(opts.client, ns, name, key),
      opts.secrets,
    );
    this.childApplier = new ChildApplier(opts.client, opts.children);
    this.ingestApplier = new IngestApplier(opts.client, opts.children, this.childApplier);
    this.status = new StatusWriter(
      opts.client,
      opts.identity ?? 'logpipeline-operator',
      this.log,
      opts.observer,
      opts.now,
    );
  }

  /** Registers the Topic or Table manager (replaces an earlier one of the same name). */
  registerPart(part: ExternalPart): void {
    this.parts.set(part.name, part);
  }

  /** Sets the scheduled daily seal, evaluated for pipelines with spec.integrity.seal. */
  setSealer(sealer: SealingPart): void {
    this.sealer = sealer;
  }

  /** Registers the autoscaler evaluated for pipelines with autoscaling on. */
  setAutoscaler(autoscaler: ScalingPart): void {
    this.autoscaler = autoscaler;
  }

  /** resourceVersion our finalizer patch left on each pipeline (its watch event brings nothing new). */
  private readonly finalizerWrites = new Map<string, string>();

  /**
   * True when the watched object `kind` `namespace/name` at `resourceVersion` is what this
   * reconciler's own last write stored (a child it applied, the finalizer it added): the reconcile
   * that wrote it already acted on it, so its event need not queue another (issue 18).
   */
  ownWrite(kind: string, namespace: string, name: string, resourceVersion: string): boolean {
    if (kind === 'LogPipeline') return this.finalizerWrites.get(`${namespace}/${name}`) === resourceVersion;
    return this.childApplier.wrote(kind, namespace, name, resourceVersion);
  }

  /** Resolves once every Event queued so far was sent (they go out in the background). */
  flushEvents(): Promise<void> {
    return this.status.flushEvents();
  }

  /** Brings the pipeline `namespace/name` to its desired state; see the module comment. */
  async reconcile(key: string): Promise<ReconcileResult> {
    const slash = key.indexOf('/');
    const namespace = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const lp = this.opts.pipelines.get(namespace, name);
    if (!lp) {
      // Gone: children go with their owner reference; only our memory needs cleaning.
      this.finalizerWrites.delete(key);
      this.childApplier.forget(namespace, name);
      this.ingestApplier.forget(namespace, name);
      this.status.forget(namespace, name);
      return {};
    }
    if (lp.metadata.deletionTimestamp) {
      this.partMemo?.forget(lp.metadata.uid ?? '');
      return this.finalize(lp);
    }
    let current = lp;
    if (!(lp.metadata.finalizers ?? []).includes(FINALIZER)) {
      current = await patchFinalizers(this.opts.client, lp, [...(lp.metadata.finalizers ?? []), FINALIZER]);
      this.finalizerWrites.set(key, current.metadata.resourceVersion ?? '');
    }
    return this.sync(current);
  }

  private partContext(lp: LogPipeline): PartContext {
    const { namespace, name, uid, resourceVersion } = lp.metadata;
    // The closures keep only what names the object: the autoscaler holds a context per pipeline
    // between reconciles, and a captured `lp` would keep a stale copy of every pipeline alive.
    const involved = {
      apiVersion: lp.apiVersion,
      kind: lp.kind,
      metadata: { namespace, name, uid, resourceVersion },
    } as LogPipeline;
    return {
      pipeline: lp,
      readSecretKey: (secret, key) => this.secretValues.get(namespace, secret, key),
      log: this.log.child({ namespace, name }),
      guard: this.opts.guard?.() ?? UNGUARDED,
      pipelines: this.opts.allPipelines ?? (() => []),
      event: (ev) => this.status.event(involved, ev),
      workersAskForPods: (spec) => this.childApplier.asksForPods(spec),
    };
  }

  private async sync(lp: LogPipeline): Promise<ReconcileResult> {
    let prepared: PreparedPipeline;
    try {
      prepared = preparePipeline(lp, this.opts.workerColumns);
    } catch (err) {
      const e = err as TerminalError;
      const ready: ConditionInput = { type: 'Ready', status: 'False', reason: e.reason, message: e.message };
      // A column the worker cannot write is the table's problem: TableReady names it too.
      const table: ConditionInput[] = e.reason === INVALID_COLUMNS ? [{ ...ready, type: 'TableReady' }] : [];
      // Terminal: nothing will happen until the spec changes, so GitOps tools must see a failure.
      await this.status.write(lp, [ready, ...table, ...progressConditions(ready, e)], {});
      return {};
    }
    const { spec, config } = prepared;
    const missing = referencedSecrets(spec).filter((r) => !this.opts.secrets.get(spec.namespace, r.name));
    if (missing.length > 0) return reportMissingSecrets(this.reportDeps(), lp, spec, missing);

    // Claims first: workers are deployed only once the topic and tables are known to be ours.
    const ctx = this.partContext(lp);
    const sv = secretsVersion(spec, this.opts.secrets);
    // The two claims do not depend on each other (Kafka and ClickHouse): checked at once, so a new
    // pipeline waits for the slower of the two, not their sum (issue 18).
    const [topic, table] = await Promise.all([
      timed('topic', () => runPart(this.partRunner(), 'Topic', spec, ctx, sv)),
      timed('table', () => runPart(this.partRunner(), 'Table', spec, ctx, sv)),
    ]);
    // What the parts did or refused (TopicChanged, DestructiveChangeRefused, ...), deduplicated.
    for (const ev of foldChangeEvents(topic.events, table.events)) await this.status.event(lp, ev);
    if (topic.conflict || table.conflict) return this.reportConflict(lp, spec, config, topic, table);
    const deployment = await timed('children', () =>
      this.applyChildren(lp, spec, config, secretsVersion(spec, this.opts.secrets)),
    );
    if (!deployment) return {};
    return this.syncRunning(lp, { spec, config }, ctx, topic, table, deployment);
  }

  /** The rest of sync once the children are applied: ingest, autoscaler, seal, status, next run. */
  private async syncRunning(
    lp: LogPipeline,
    { spec, config }: PreparedPipeline,
    ctx: PartContext,
    topic: PartRun,
    table: PartRun,
    live: DeploymentView,
  ): Promise<ReconcileResult> {
    const ingestDeps = { ingestApplier: this.ingestApplier, status: this.status, secrets: this.opts.secrets };
    const ingest = await applyIngest(
      ingestDeps,
      lp,
      spec,
      topic.observed?.maxMessageBytes as number | undefined,
    );
    const scaling = await timed('autoscaler', () =>
      runAutoscaler(this.autoscaler, this.opts.client, spec, live, ctx, {
        configMap: () => this.childApplier.ensureConfigMap(spec, config),
        pdb: () => this.childApplier.ensurePdb(spec),
      }),
    );
    const deployment = scaling.deployment;
    const seal = await this.sealer?.evaluate(spec, ctx);
    for (const ev of seal?.events ?? []) await this.status.event(lp, ev);
    const { conditions, extra, requeueAfterMs } = computeStatus(
      spec,
      deployment,
      topic,
      table,
      spec.workers.autoscaling.enabled ? scaling.outcome : undefined,
      seal,
      {
        pods: this.opts.children.pods?.forPipeline(spec.namespace, spec.name),
        partitionStall: scaling.outcome?.stall,
        kafkaUnreachable: scaling.outcome?.kafkaUnreachable,
        retentionLoss: scaling.outcome?.retentionLoss,
        ingest,
        nowMs: (this.opts.now?.() ?? new Date()).getTime(),
        // As last written: the cache may not show this writer's own last write yet.
        startingSince: this.status.latest(lp).status?.workers?.startingSince,
      },
    );
    // A removed spec.ingest or seal schedule takes its condition and status fields along (null
    // deletes in a merge patch); the seals already stored stay, they are evidence.
    const sealed = spec.integrity.enabled && spec.integrity.seal !== undefined;
    if (!spec.ingest && lp.status?.ingest) extra.ingest = null;
    if (!sealed && lp.status?.seal) extra.seal = null;
    const gone = [
      ...(spec.ingest ? [] : ['IngestReady']),
      ...(spec.integrity.enabled ? [] : ['ChainLinked']),
      ...(sealed ? [] : ['Sealed']),
    ];
    await timed('status', () => this.status.write(lp, conditions, extra, gone));
    if (topic.retry || table.retry) return { requeue: true };
    const delays = [
      this.opts.resyncMs ?? 600_000,
      topic.requeueAfterMs,
      table.requeueAfterMs,
      scaling.outcome?.requeueAfterMs,
      seal?.requeueAfterMs,
      // A scale-up's starting workers are judged again when their start-up budget runs out.
      requeueAfterMs,
    ];
    return { requeueAfterMs: Math.min(...delays.filter((d): d is number => typeof d === 'number' && d > 0)) };
  }

  private partRunner() {
    return { parts: this.parts, partMemo: this.partMemo, log: this.log };
  }

  private reportDeps() {
    return { status: this.status, children: this.opts.children, log: this.log };
  }

  /** Applies the children; undefined when the apiserver refused them (reported as a condition). */
  private async applyChildren(
    lp: LogPipeline,
    spec: ResolvedSpec,
    config: RenderedConfig,
    secretsVersion: string | undefined,
  ): Promise<DeploymentView | undefined> {
    try {
      const children = await this.childApplier.apply(spec, config, secretsVersion);
      for (const child of children.repaired) {
        this.log.info('child repaired', { namespace: spec.namespace, name: spec.name, child });
        const message = `${child} was changed or deleted outside the operator; restored`;
        await this.status.event(lp, { type: 'Warning', reason: 'ChildRepaired', message });
      }
      return children.deployment;
    } catch (err) {
      // 400/422: the apiserver refuses what the spec asks for (e.g. a bad resource quantity).
      if (!(err instanceof KubeApiError) || (err.status !== 400 && err.status !== 422)) throw err;
      const failed: ConditionInput = {
        type: 'WorkersReady',
        status: 'False',
        reason: 'InvalidWorkerSpec',
        message: sanitizeMessage(err),
      };
      const ready = readyCondition([failed]);
      await this.status.write(lp, [ready, failed, ...progressConditions(ready, failed)], {});
      return undefined;
    }
  }

  /**
   * A claim failed: no workers. A Deployment that already exists (the spec was changed to name
   * another pipeline's table or topic) is scaled to 0; none is created. Re-checked periodically,
   * since the conflict ends when the owner goes away.
   */
  private async reportConflict(
    lp: LogPipeline,
    spec: ResolvedSpec,
    config: RenderedConfig,
    topic: { condition: ConditionInput },
    table: { condition: ConditionInput },
  ): Promise<ReconcileResult> {
    const name = workerName(spec.name);
    let deployment = this.opts.children.deployments.get(spec.namespace, name);
    if (deployment && deployment.replicas !== 0) {
      const stopped = {
        ...spec,
        workers: {
          ...spec.workers,
          replicas: 0,
          autoscaling: { ...spec.workers.autoscaling, enabled: false },
        },
      };
      deployment = await this.applyChildren(lp, stopped, config, secretsVersion(spec, this.opts.secrets));
    }
    const conditions = conflictConditions(topic.condition, table.condition, deployment, name);
    await this.status.write(lp, conditions, {});
    return { requeueAfterMs: Math.min(this.opts.resyncMs ?? 600_000, 60_000) };
  }

  private async finalize(lp: LogPipeline): Promise<ReconcileResult> {
    const deps = {
      client: this.opts.client,
      parts: this.parts,
      status: this.status,
      log: this.log,
      partContext: (p: LogPipeline) => this.partContext(p),
      secrets: this.opts.secrets,
      deleteTimeoutMs: this.opts.deleteTimeoutMs,
      now: this.opts.now,
    };
    if (await finalizePipeline(deps, lp)) {
      this.childApplier.forget(lp.metadata.namespace, lp.metadata.name);
      this.ingestApplier.forget(lp.metadata.namespace, lp.metadata.name);
      this.status.forget(lp.metadata.namespace, lp.metadata.name);
    }
    return {};
  }
}
