/**
 * reconcile(key) for one LogPipeline, with controller-runtime's contract: level-triggered (reads
 * the cached object, never the event that woke it), idempotent, never sleeps. A thrown error means
 * "retry with this key's backoff"; a TerminalError becomes a False condition and is not retried
 * until the spec changes; timed work is returned as `requeueAfterMs`.
 */
import type { WorkerColumn } from '../../../common/src/worker-config';
import { resolveSpec, workerImageAllowlist, type ResolvedSpec } from '../api/defaults';
import { checkWorkerPolicy } from '../api/worker-policy';
import type { LogPipeline } from '../api/types';
import { PIPELINE_RULES } from '../api/validate-rules';
import { applyReplicasAsAutoscaler, patchFinalizers, readSecretKey } from '../apply/kube';
import { KubeApiError, type KubeClient } from '../apply/kube-rest';
import { buildWorkerColumns, resolveTableSchema } from '../desired/clickhouse';
import { renderWorkerConfig, type RenderedConfig } from '../desired/configmap';
import { checkWorkerColumns, INVALID_COLUMNS } from '../desired/worker-columns';
import { workerName } from '../desired/labels';
import { silentLogger, type Logger } from '../../../common/src/log';
import { UNGUARDED, type DestructiveGuard } from '../apply/guard';
import { NOT_CONFIGURED, readyCondition, workersCondition, type ConditionInput } from '../status/conditions';
import { computeStatus, conflictConditions } from '../status/compute';
import { progressConditions } from '../status/kstatus';
import { sanitizeMessage } from '../status/sanitize';
import { ChildApplier, clampReplicas, type ChildCaches, type Lookup } from './children';
import { IngestApplier } from './ingest-children';
import { ingestCondition, ingestStatus, packingLimitCondition } from '../status/ingest';
import type { IngestSpec } from '../desired/ingest';
import type {
  ExternalPart,
  PartContext,
  PartName,
  PartOutcome,
  ScalingOutcome,
  ScalingPart,
  SealingPart,
} from './external';
import { FINALIZER, finalizePipeline } from './finalize';
import { foldChangeEvents } from './parts/change-events';
import { referencedSecrets, secretsVersion } from './secrets';
import { timed } from '../apply/request-counts';
import { PartMemo } from './part-memo';
import { SecretValues } from './secret-values';
import { StatusWriter, type StatusObserver } from './status-writer';
import type { DeploymentView, SecretView } from '../status/views';

/** What the work loop does after a reconcile. */
export interface ReconcileResult {
  /** Run again after this delay (timed work, periodic drift check). */
  requeueAfterMs?: number;
  /** Run again with the key's exponential backoff (a transient condition, e.g. a missing Secret). */
  requeue?: boolean;
}

/** An error that retrying cannot fix (an invalid spec): reported as a False condition. */
export class TerminalError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** Dependencies and tuning of the reconciler. */
export interface ReconcilerOptions {
  client: KubeClient;
  pipelines: Lookup<LogPipeline>;
  secrets: Lookup<SecretView>;
  children: ChildCaches;
  log?: Logger;
  /** Name of this operator instance (Event reportingInstance). */
  identity?: string;
  /** Periodic re-check of every pipeline (drift of external parts). Default 10 min. */
  resyncMs?: number;
  /** Columns the worker fills; default: the ClickHouse schema builder. */
  workerColumns?: (spec: ResolvedSpec) => WorkerColumn[];
  observer?: StatusObserver;
  now?: () => Date;
  /** Every cached pipeline (claims); default none. */
  allPipelines?: () => Iterable<LogPipeline>;
  /** The current leadership term's guard of destructive statements; default: never refuses. */
  guard?: () => DestructiveGuard;
  /** Reuse of clean Topic/Table outcomes (part-memo.ts); 0 turns it off. Default 5 min. */
  externalRecheckMs?: number;
  /** Queues a pipeline key (`namespace/name`): peers of a changed claim are judged again at once. */
  enqueue?: (key: string) => void;
  /** Bound on deletionPolicy Delete before it falls back to Retain (finalize.ts). */
  deleteTimeoutMs?: number;
}

const URL_RULE = PIPELINE_RULES.find((r) => r.id === 'no-credentials-in-url')!;

const defaultColumns = (spec: ResolvedSpec) => buildWorkerColumns(resolveTableSchema(spec));

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
    };
  }

  private prepare(lp: LogPipeline): { spec: ResolvedSpec; config: RenderedConfig } {
    try {
      const spec = resolveSpec(lp);
      // Stored before admission refused it (an older CRD): never render it into the ConfigMap.
      if (!URL_RULE.holds(spec.clickhouse.url, undefined))
        throw new TerminalError('CredentialsInURL', URL_RULE.explain(spec.clickhouse.url, undefined));
      checkWorkerPolicy(spec, workerImageAllowlist());
      const columns = (this.opts.workerColumns ?? defaultColumns)(spec);
      // The worker would refuse these columns at startup: say so before deploying it.
      checkWorkerColumns(spec, columns);
      return { spec, config: renderWorkerConfig(spec, columns) };
    } catch (err) {
      const reason = (err as { reason?: unknown }).reason;
      throw new TerminalError(typeof reason === 'string' ? reason : 'InvalidSpec', sanitizeMessage(err));
    }
  }

  private async sync(lp: LogPipeline): Promise<ReconcileResult> {
    let prepared: { spec: ResolvedSpec; config: RenderedConfig };
    try {
      prepared = this.prepare(lp);
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
    if (missing.length > 0) return this.reportMissingSecrets(lp, spec, missing);

    // Claims first: workers are deployed only once the topic and tables are known to be ours.
    const ctx = this.partContext(lp);
    const sv = secretsVersion(spec, this.opts.secrets);
    // The two claims do not depend on each other (Kafka and ClickHouse): checked at once, so a new
    // pipeline waits for the slower of the two, not their sum (issue 18).
    const [topic, table] = await Promise.all([
      timed('topic', () => this.runPart('Topic', spec, ctx, sv)),
      timed('table', () => this.runPart('Table', spec, ctx, sv)),
    ]);
    // What the parts did or refused (TopicChanged, DestructiveChangeRefused, ...), deduplicated.
    for (const ev of foldChangeEvents(topic.events, table.events)) await this.status.event(lp, ev);
    if (topic.conflict || table.conflict) return this.reportConflict(lp, spec, config, topic, table);
    let deployment = await timed('children', () =>
      this.applyChildren(lp, spec, config, secretsVersion(spec, this.opts.secrets)),
    );
    if (!deployment) return {};
    const ingest = await this.applyIngest(lp, spec, topic.observed?.maxMessageBytes as number | undefined);
    const live = deployment;
    const scaling = await timed('autoscaler', () => this.runAutoscaler(spec, live, ctx));
    deployment = scaling.deployment;
    const seal = await this.sealer?.evaluate(spec, ctx);
    for (const ev of seal?.events ?? []) await this.status.event(lp, ev);
    const { conditions, extra } = computeStatus(
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
      },
    );
    // spec.ingest removed: its condition and status fields go too (null deletes in a merge patch).
    if (!spec.ingest && lp.status?.ingest) extra.ingest = null;
    await timed('status', () => this.status.write(lp, conditions, extra, spec.ingest ? [] : ['IngestReady']));
    if (topic.retry || table.retry) return { requeue: true };
    const delays = [
      this.opts.resyncMs ?? 600_000,
      topic.requeueAfterMs,
      table.requeueAfterMs,
      scaling.outcome?.requeueAfterMs,
      seal?.requeueAfterMs,
    ];
    return { requeueAfterMs: Math.min(...delays.filter((d): d is number => typeof d === 'number' && d > 0)) };
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

  /** Applies (or removes) the syslog receiver; its condition and status when spec.ingest is set. */
  private async applyIngest(lp: LogPipeline, spec: ResolvedSpec, topicMaxMessageBytes?: number) {
    if (!spec.ingest) {
      const deleted = await this.ingestApplier.remove(spec);
      if (deleted > 0)
        await this.status.event(lp, {
          type: 'Normal',
          reason: 'IngestRemoved',
          message: `spec.ingest was removed: deleted ${deleted} receiver objects`,
        });
      return undefined;
    }
    // Terminal until the spec or the topic changes: said once per reconcile, nothing rolled out.
    const tooBig = packingLimitCondition(spec.ingest, spec.kafka.topic.name, topicMaxMessageBytes);
    if (tooBig) {
      await this.status.event(lp, { type: 'Warning', reason: tooBig.reason, message: tooBig.message });
      return { condition: tooBig, stall: { reason: tooBig.reason, message: tooBig.message }, status: {} };
    }
    let applied;
    try {
      applied = await this.ingestApplier.apply(spec as IngestSpec, this.opts.secrets);
    } catch (err) {
      // 400/422: the apiserver refuses what spec.ingest asks for (e.g. a Service the cluster cannot make).
      if (!(err instanceof KubeApiError) || (err.status !== 400 && err.status !== 422)) throw err;
      const condition: ConditionInput = {
        type: 'IngestReady',
        status: 'False',
        reason: 'InvalidIngestSpec',
        message: sanitizeMessage(err),
      };
      return { condition, stall: { reason: condition.reason, message: condition.message }, status: {} };
    }
    const { observation, repaired } = applied;
    for (const child of repaired) {
      const message = `${child} was changed or deleted outside the operator; restored`;
      await this.status.event(lp, { type: 'Warning', reason: 'ChildRepaired', message });
    }
    return { ...ingestCondition(observation), status: ingestStatus(observation) };
  }

  private async runPart(name: PartName, spec: ResolvedSpec, ctx: PartContext, sv?: string) {
    const part = this.parts.get(name);
    const type = `${name}Ready` as const;
    if (!part) {
      const condition: ConditionInput = {
        type,
        status: 'Unknown',
        reason: NOT_CONFIGURED,
        message: `no ${name.toLowerCase()} manager is registered in this operator`,
      };
      return { condition };
    }
    let outcome: PartOutcome;
    try {
      outcome = this.partMemo
        ? await this.partMemo.ensure(part, spec, ctx, sv)
        : await part.ensure(spec, ctx);
    } catch (err) {
      this.log.warn('external part failed', {
        namespace: spec.namespace,
        name: spec.name,
        part: name,
        err: (err as Error).message,
      });
      outcome = { status: 'False', reason: 'EnsureFailed', message: sanitizeMessage(err), retry: true };
    }
    const condition: ConditionInput = {
      type,
      status: outcome.status,
      reason: outcome.reason,
      message: outcome.message,
    };
    return {
      condition,
      observed: outcome.observed,
      retry: outcome.retry,
      requeueAfterMs: outcome.requeueAfterMs,
      conflict: outcome.conflict === true,
      events: outcome.events,
    };
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

  private async runAutoscaler(
    spec: ResolvedSpec,
    deployment: DeploymentView,
    ctx: PartContext,
  ): Promise<{ outcome?: ScalingOutcome; deployment: DeploymentView }> {
    const auto = spec.workers.autoscaling;
    if (!this.autoscaler) return { deployment };
    // Without autoscaling the part only watches for stalled partitions and never sets replicas.
    const outcome = await this.autoscaler.evaluate(spec, deployment, ctx);
    if (!auto.enabled || outcome.replicas === undefined) return { outcome, deployment };
    const replicas = clampReplicas(outcome.replicas, auto.minReplicas, auto.maxReplicas);
    if (replicas !== deployment.replicas) {
      await applyReplicasAsAutoscaler(this.opts.client, spec.namespace, deployment.metadata.name, replicas);
    }
    return { outcome: { ...outcome, replicas }, deployment: { ...deployment, replicas } };
  }

  private async reportMissingSecrets(
    lp: LogPipeline,
    spec: ResolvedSpec,
    missing: Array<{ name: string; purpose: string }>,
  ): Promise<ReconcileResult> {
    const list = missing.map((m) => `Secret "${m.name}" (${m.purpose})`).join(', ');
    const message = `${list} not found in namespace ${spec.namespace}`;
    const deployment = this.opts.children.deployments.get(spec.namespace, workerName(spec.name));
    const desired = spec.workers.autoscaling.enabled ? (deployment?.replicas ?? 0) : spec.workers.replicas;
    const ready: ConditionInput = { type: 'Ready', status: 'False', reason: 'SecretNotFound', message };
    await this.status.write(
      lp,
      [ready, workersCondition(deployment, desired, workerName(spec.name)), ...progressConditions(ready)],
      {},
    );
    this.log.info('waiting for secrets', {
      namespace: spec.namespace,
      name: spec.name,
      secrets: missing.map((m) => m.name),
    });
    // The Secret informer enqueues this pipeline when one of them appears; the backoff is the fallback.
    return { requeue: true };
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
