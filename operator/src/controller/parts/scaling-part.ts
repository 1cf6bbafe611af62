/**
 * The lag autoscaler as the reconciler's scaling part. A pipeline's first reconcile with a
 * Deployment samples it; after that a background tick samples every pipeline once per poll
 * interval, outside of any reconcile: the group's committed offsets and the topic's start/end
 * offsets come from the per-cluster observer round (autoscale/kafka-observer.ts: O(clusters)
 * requests, not O(pipelines)), the sink is checked (stored TableReady, a cached ClickHouse ping,
 * the workers' journaled batches) and the pure `decide` runs in memory. Only a pipeline whose
 * outcome changed (replicas, Scaling condition, status.lag, partition stall) is queued for a
 * reconcile, which applies the replicas and writes the status; a steady fleet costs no reconcile
 * per poll (scaling-schedule.ts). Reconciles for other reasons reuse the last outcome.
 *
 * Memory per pipeline is a few numbers: the EWMA trend, a history of at most maxReplicas + 1
 * samples, the watched journal batch and the last outcome, in a Map keyed by pipeline uid that is
 * swept against the pipeline cache (KEDA #7453: memory must not grow with churn).
 */
import os from 'node:os';
import type { ResolvedSpec } from '../../api/defaults';
import type { LogPipeline } from '../../api/types';
import {
  KafkaApplyError,
  errorMessage,
  kafkaConnectionKey,
  sameKafkaConnection,
} from '../../apply/kafka-client';
import type { KubeClient } from '../../apply/kube-rest';
import { decide } from '../../autoscale/decide';
import type { AutoscalerMetrics } from '../../autoscale/metrics';
import type { KafkaConnectionUse } from '../../apply/kafka-connection-use';
import { KafkaObservers } from '../../autoscale/kafka-observers';
import { trackPartitions } from '../../autoscale/partition-stall';
import { sinkProblem, stallAfterMs, trackJournalStall } from '../../autoscale/sink-health';
import type { PartContext, ScalingOutcome, ScalingPart } from '../external';
import type { DeploymentView } from '../../status/views';
import { pollIntervalMs, stalledPartitionCause, WATCH_ONLY } from './progress-watch';
import type { ClickHousePool } from './clickhouse-pool';
import { kafkaConnectionFor } from './topic-part';
import { sanitizeMessage } from '../../status/sanitize';
import { dueForSampling, outcomeChanged } from './scaling-schedule';
import {
  decidedLag,
  handOut,
  keepPosition,
  MIN_POLL_FRACTION,
  newEntry,
  progressed,
  SWEEP_MS,
  withScaleInFlight,
  type Entry,
} from './scaling-entry';
import { report, watchRetention, type ScalingReporter } from './scaling-report';
import { SinkPings } from './sink-ping';

/** Collaborators of the scaling part. */
export interface ScalingPartDeps {
  clickhouse: ClickHousePool;
  /** For the ScaledUp/ScaledDown Events. */
  client: KubeClient;
  /** Every cached LogPipeline (to forget the state of deleted ones). */
  pipelines: () => Iterable<LogPipeline>;
  metrics?: AutoscalerMetrics;
  /** Shared per-cluster offset observation (autoscale/kafka-observer.ts); default: its own. */
  observers?: KafkaObservers;
  /** Learns which Kafka connection each pipeline polls through (clients of rotated credentials are closed). */
  connections?: KafkaConnectionUse;
  /**
   * The cached pipeline and worker Deployment (informers). With it (and `onChange`) pipelines are
   * sampled in the background; without it every reconcile past the interval samples (tests).
   */
  current?: (namespace: string, name: string) => { pipeline?: LogPipeline; deployment?: DeploymentView };
  /** Queues the reconcile of `namespace/name` whose outcome changed. */
  onChange?: (key: string) => void;
  /** Background tick. Default 250 ms (a due check over the in-memory entries). */
  tickMs?: number;
  now?: () => number;
  /** Event reportingInstance; default POD_NAME or the host name. */
  identity?: string;
}

/** The scaling part plus introspection for tests and the benchmark. */
export interface LagScaler extends ScalingPart {
  /** Pipelines with state in memory. */
  stateSize(): number;
  /** Stops the periodic sweep (operator shutdown). */
  close(): void;
}

/** Creates the lag autoscaler. */
export function createScalingPart(deps: ScalingPartDeps): LagScaler {
  const now = deps.now ?? (() => Date.now());
  const identity = deps.identity ?? process.env.POD_NAME ?? os.hostname();
  const entries = new Map<string, Entry>();
  const observers = deps.observers ?? new KafkaObservers();
  const background = deps.current !== undefined && deps.onChange !== undefined;
  const pings = new SinkPings(deps.clickhouse, now);
  const reporter: ScalingReporter = {
    client: deps.client,
    metrics: deps.metrics,
    identity,
    live: (e) => entries.get(e.uid) === e,
  };
  let lastSweep = now();

  // Deleted pipelines are never evaluated again, so the sweep also runs on its own timer.
  const timer = setInterval(() => sweep(now()), SWEEP_MS);
  timer.unref();
  const ticker = background ? setInterval(() => tick(now()), deps.tickMs ?? 250) : undefined;
  ticker?.unref();

  /** Samples the due pipelines (one observer round per cluster) and queues the changed ones. */
  function tick(t: number): void {
    for (const e of dueForSampling(entries.values(), t))
      sampleInBackground(e, t).catch((err: unknown) =>
        e.ctx?.log.warn('autoscaler background sample failed', { err: errorMessage(err) }),
      );
  }

  async function sampleInBackground(e: Entry, t: number): Promise<void> {
    const cur = deps.current!(e.namespace, e.name);
    if (!cur.pipeline || cur.pipeline.metadata.deletionTimestamp || !cur.deployment || !e.spec || !e.ctx)
      return;
    const dep = withScaleInFlight(e, cur.deployment, t);
    e.polling = true;
    e.lastPollAt = t;
    let next: ScalingOutcome;
    try {
      next = await sample(e.spec, dep, { ...e.ctx, pipeline: cur.pipeline }, e, t);
    } finally {
      e.polling = false;
    }
    if (entries.get(e.uid) !== e) return;
    if (outcomeChanged(e.last, next, dep.replicas)) {
      e.last = next;
      e.pending = true;
      deps.onChange!(`${e.namespace}/${e.name}`);
    }
    // Unchanged: the last outcome stays (an equal new one would only be promoted and collected
    // later by the old generation's GC, once per pipeline and poll).
  }

  /** One poll; a failure becomes the LagUnavailable outcome (replicas kept, retried next interval). */
  async function sample(
    spec: ResolvedSpec,
    dep: DeploymentView,
    ctx: PartContext,
    e: Entry,
    t: number,
  ): Promise<ScalingOutcome> {
    try {
      return await poll(spec, dep, ctx, e, t);
    } catch (err) {
      // Kafka unreachable, topic missing, Secret missing: keep the replicas, say why, try next poll.
      const cause = sanitizeMessage(err instanceof KafkaApplyError ? err.message : errorMessage(err));
      ctx.log.info('autoscaler poll failed', { err: errorMessage(err) });
      const unreachable = err instanceof KafkaApplyError && err.reason === 'KafkaUnreachable';
      return {
        status: 'Unknown',
        reason: 'LagUnavailable',
        message: `lag unavailable, keeping ${dep.replicas} workers: ${cause}`,
        requeueAfterMs: requeueMs(pollIntervalMs(spec)),
        ...(unreachable ? { kafkaUnreachable: cause } : {}),
      };
    }
  }

  /** Background sampling needs no requeue; without it the reconcile is the poll. */
  const requeueMs = (pollMs: number) => (background ? undefined : pollMs);

  function sweep(t: number): void {
    if (t - lastSweep < SWEEP_MS / 2) return;
    lastSweep = t;
    const live = new Set<string>();
    for (const lp of deps.pipelines()) {
      // Pipelines without autoscaling are watched for stalled partitions too.
      if (lp.metadata.uid && !lp.metadata.deletionTimestamp) live.add(lp.metadata.uid);
    }
    for (const [uid, e] of entries) {
      if (live.has(uid)) continue;
      entries.delete(uid);
      deps.metrics?.forget(e.namespace, e.name);
    }
    pings.sweep(t, SWEEP_MS);
  }

  function entryFor(spec: ResolvedSpec, ctx: PartContext): Entry {
    let e = entries.get(spec.uid);
    if (!e) entries.set(spec.uid, (e = newEntry(spec, ctx)));
    return e;
  }

  async function poll(
    spec: ResolvedSpec,
    dep: DeploymentView,
    ctx: PartContext,
    e: Entry,
    t: number,
  ): Promise<ScalingOutcome> {
    const pollMs = pollIntervalMs(spec);
    // The same connection object while nothing changed: its key is hashed once, not per poll.
    const fresh = await kafkaConnectionFor(spec, ctx);
    const conn = e.conn && sameKafkaConnection(e.conn, fresh) ? e.conn : (e.conn = fresh);
    e.cluster = kafkaConnectionKey(conn);
    deps.connections?.record(e.uid, e.cluster);
    const [group, pingError] = await Promise.all([
      // Half an interval: the due pipelines of a cluster all join one round per interval.
      observers.for(conn).read(spec.kafka.topic.name, spec.kafka.consumerGroup, pollMs / 2),
      pings.ping(spec, ctx, t),
    ]);
    if (group.offsets.length === 0) throw new Error(`topic ${spec.kafka.topic.name} has no partitions`);
    const stall = trackJournalStall(e.stall, group.commits, t);
    e.stall = stall.mark;
    e.marks = trackPartitions(e.marks, group.offsets, t);
    const retentionLoss = await watchRetention(reporter, spec, ctx, e, group.offsets);
    const stored = ctx.pipeline.status?.conditions?.find((c) => c.type === 'TableReady');
    // The stored condition is one reconcile old: when it only said "unreachable", our fresh ping wins.
    const table = stored?.reason === 'ClickHouseUnreachable' && !pingError ? undefined : stored;
    const sink = sinkProblem({
      tableReady: table?.status,
      tableMessage: table?.message,
      pingError,
      stalledMs: stall.stalledMs,
      progressed: progressed(e.scaler, group.offsets),
      stallAfterMs: stallAfterMs(pollMs),
    });
    const partitionStall = stalledPartitionCause(
      spec,
      dep,
      e.marks,
      group.offsets,
      t,
      sink?.message,
      stall.stalledMs,
    );
    if (!spec.workers.autoscaling.enabled) {
      keepPosition(e, group.offsets, t);
      return { ...WATCH_ONLY, stall: partitionStall, retentionLoss, requeueAfterMs: requeueMs(pollMs) };
    }
    const { decision, state } = decide(e.scaler, {
      settings: spec.workers.autoscaling,
      offsets: group.offsets,
      current: dep.replicas,
      running: dep.status.replicas ?? 0,
      ready: dep.status.readyReplicas ?? 0,
      sink,
      now: t,
    });
    e.scaler = state;
    await report(reporter, ctx, e, decision, sink, dep);
    const lag = decidedLag(e, decision, state);
    const condition = decision.settled ?? decision;
    return {
      replicas: decision.replicas,
      status: condition.status,
      reason: condition.reason,
      message: condition.message,
      lag,
      requeueAfterMs: requeueMs(pollMs),
      stall: partitionStall,
      retentionLoss,
    };
  }

  return {
    stateSize: () => entries.size,
    close: () => {
      clearInterval(timer);
      if (ticker) clearInterval(ticker);
    },
    async evaluate(spec, dep, ctx): Promise<ScalingOutcome> {
      const t = now();
      sweep(t);
      const pollMs = pollIntervalMs(spec);
      if (!dep)
        return {
          status: 'Unknown',
          reason: 'LagUnavailable',
          message: 'the worker Deployment does not exist yet',
          requeueAfterMs: pollMs,
        };
      const e = entryFor(spec, ctx);
      e.spec = spec;
      const { pipeline: _stale, ...rest } = ctx;
      e.ctx = rest;
      e.pollMs = pollMs;
      if (e.last && e.pending) {
        // The background decision this reconcile was queued for: apply it once.
        e.pending = false;
        return handOut(e, e.last, dep, t);
      }
      const sinceLast = t - e.lastPollAt;
      // In the background a pipeline is sampled every interval; a reconcile samples only when that
      // has not happened for two intervals (or it never has: the first reconcile with a Deployment).
      const reuse = background ? (e.last ? 2 * pollMs : 0) : MIN_POLL_FRACTION * pollMs;
      if (e.last && (sinceLast < reuse || e.polling)) {
        const requeue = background ? undefined : Math.max(1, pollMs - sinceLast);
        return { ...e.last, replicas: undefined, requeueAfterMs: requeue };
      }
      e.lastPollAt = t;
      e.polling = true;
      try {
        e.last = await sample(spec, withScaleInFlight(e, dep, t), ctx, e, t);
      } finally {
        e.polling = false;
      }
      return handOut(e, e.last, dep, t);
    },
  };
}
