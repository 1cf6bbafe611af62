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
import type { LogPipeline, LogPipelineStatus } from '../../api/types';
import {
  KafkaApplyError,
  errorMessage,
  kafkaConnectionKey,
  sameKafkaConnection,
  type KafkaConnection,
} from '../../apply/kafka-client';
import { recordEvent } from '../../apply/kube';
import type { KubeClient } from '../../apply/kube-rest';
import { decide, type Decision, type ScalerState } from '../../autoscale/decide';
import { computeLag, type PartitionOffsets } from '../../autoscale/lag';
import type { AutoscalerMetrics } from '../../autoscale/metrics';
import type { KafkaConnectionUse } from '../../apply/kafka-connection-use';
import { KafkaObservers } from '../../autoscale/kafka-observer';
import { trackPartitions, type PartitionMarks } from '../../autoscale/partition-stall';
import {
  describeRetentionLoss,
  expiredUnconsumed,
  trackRetentionLoss,
  type ReportedLoss,
} from '../../autoscale/retention-loss';
import { sinkProblem, stallAfterMs, trackJournalStall, type StallMark } from '../../autoscale/sink-health';
import type { PartContext, ScalingOutcome, ScalingPart } from '../external';
import type { DeploymentView } from '../../status/views';
import { pollIntervalMs, stalledPartitionCause, WATCH_ONLY } from './progress-watch';
import type { ClickHousePool } from './clickhouse-pool';
import { kafkaConnectionFor } from './topic-part';
import { sanitizeMessage } from '../../status/sanitize';
import { dueForSampling, outcomeChanged } from './scaling-schedule';

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

interface Entry {
  uid: string;
  namespace: string;
  name: string;
  scaler: ScalerState;
  stall?: StallMark;
  /** Per-partition progress clocks (Stalled condition). */
  marks?: PartitionMarks;
  /** Retention losses already recorded as an Event, and the condition message describing them. */
  lossReported?: ReportedLoss;
  lossMessage?: string;
  lastPollAt: number;
  last?: ScalingOutcome;
  /** Inputs of the background samples, from the last reconcile (spec, Secret access, log). */
  spec?: ResolvedSpec;
  /** Without the pipeline: samples use the informer's current one (a stale copy per pipeline otherwise). */
  ctx?: Omit<PartContext, 'pipeline'>;
  /** Observer key of the pipeline's Kafka cluster and the connection it was computed from; pollMs of its spec. */
  cluster?: string;
  conn?: KafkaConnection;
  pollMs: number;
  polling?: boolean;
  /** `last` changed in the background and its reconcile has not consumed it yet. */
  pending?: boolean;
  /** Replicas handed to the reconciler, until the Deployment cache shows them (our write in flight). */
  scaledTo?: { replicas: number; at: number };
  /** status.lag.lastScale* as stored before this operator instance made any change. */
  recorded?: LastScaleText;
  /** status.lag.lastScale* of `scaler.lastScale`, rendered once per scale (not per poll). */
  lastScaleText?: LastScaleText & { at: number };
}

type LastScaleText = Pick<NonNullable<LogPipelineStatus['lag']>, 'lastScaleTime' | 'lastScaleReason'>;

/** Polls closer together than this fraction of the interval reuse the last decision. */
const MIN_POLL_FRACTION = 0.8;
const SWEEP_MS = 30_000;
/** Longest wait for the Deployment cache to show our replica write (at least two poll intervals). */
const SCALE_IN_FLIGHT_MS = 10_000;
const PING_TTL_MS = 2_000;
const PING_TIMEOUT_MS = 3_000;

/** True when the group's committed position moved since the previous poll (no previous poll: false). */
function progressed(state: ScalerState, offsets: PartitionOffsets[]): boolean {
  const before = state.trend?.consumedPosition;
  return before !== undefined && computeLag(offsets).consumedPosition > before;
}

function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Creates the lag autoscaler. */
export function createScalingPart(deps: ScalingPartDeps): LagScaler {
  const now = deps.now ?? (() => Date.now());
  const identity = deps.identity ?? process.env.POD_NAME ?? os.hostname();
  const entries = new Map<string, Entry>();
  const observers = deps.observers ?? new KafkaObservers();
  const background = deps.current !== undefined && deps.onChange !== undefined;
  const pings = new Map<string, { at: number; error?: string; pending?: Promise<string | undefined> }>();
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

  /**
   * The Deployment as the decision must see it: the cache lags behind our own replica write by a
   * watch event, and deciding on the old count would scale (and report) the same step again.
   */
  function withScaleInFlight(e: Entry, dep: DeploymentView, t: number): DeploymentView {
    const s = e.scaledTo;
    if (!s || dep.replicas === s.replicas || t - s.at > Math.max(2 * e.pollMs, SCALE_IN_FLIGHT_MS)) {
      e.scaledTo = undefined;
      return dep;
    }
    return { ...dep, replicas: s.replicas };
  }

  /** Remembers a replica count the reconciler is about to write. */
  function handOut(e: Entry, out: ScalingOutcome, dep: DeploymentView, t: number): ScalingOutcome {
    if (out.replicas !== undefined && out.replicas !== dep.replicas)
      e.scaledTo = { replicas: out.replicas, at: t };
    return out;
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
    for (const [url, p] of pings) if (t - p.at > SWEEP_MS && !p.pending) pings.delete(url);
  }

  /** Pings the pipeline's ClickHouse, at most once per PING_TTL_MS per URL; the error or undefined. */
  async function ping(spec: ResolvedSpec, ctx: PartContext, t: number): Promise<string | undefined> {
    const url = spec.clickhouse.url;
    const cached = pings.get(url);
    if (cached?.pending) return cached.pending;
    if (cached && t - cached.at < PING_TTL_MS) return cached.error;
    const pending = (async () => {
      try {
        const client = await deps.clickhouse.client(spec, ctx);
        const r = await client.ping({ select: false, abort_signal: AbortSignal.timeout(PING_TIMEOUT_MS) });
        return r.success ? undefined : errorMessage(r.error);
      } catch (err) {
        return errorMessage(err);
      }
    })();
    pings.set(url, { at: t, pending });
    const error = await pending;
    pings.set(url, { at: now(), error });
    return error;
  }

  function entryFor(spec: ResolvedSpec, ctx: PartContext): Entry {
    let e = entries.get(spec.uid);
    if (!e) {
      const lag = ctx.pipeline.status?.lag;
      const recorded = lag?.lastScaleTime
        ? { lastScaleTime: lag.lastScaleTime, lastScaleReason: lag.lastScaleReason }
        : undefined;
      e = {
        uid: spec.uid,
        namespace: spec.namespace,
        name: spec.name,
        scaler: { history: [] },
        lastPollAt: 0,
        pollMs: pollIntervalMs(spec),
        recorded,
      };
      entries.set(spec.uid, e);
    }
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
      ping(spec, ctx, t),
    ]);
    if (group.offsets.length === 0) throw new Error(`topic ${spec.kafka.topic.name} has no partitions`);
    const stall = trackJournalStall(e.stall, group.commits, t);
    e.stall = stall.mark;
    e.marks = trackPartitions(e.marks, group.offsets, t);
    const retentionLoss = await watchRetention(spec, ctx, e, group.offsets);
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
      // No decision to make; keep the position so the next poll's `progressed` is right.
      e.scaler = {
        ...e.scaler,
        trend: {
          at: t,
          smoothedLag: 0,
          rate: 0,
          consumedPosition: computeLag(group.offsets).consumedPosition,
        },
      };
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
    await report(ctx, e, decision, sink, dep);
    const last = state.lastScale;
    if (last && e.lastScaleText?.at !== last.at)
      e.lastScaleText = {
        at: last.at,
        lastScaleTime: isoSeconds(last.at),
        lastScaleReason: last.summary.slice(0, 1024),
      };
    const scaled = last ? e.lastScaleText! : e.recorded;
    const lag = {
      ...decision.lag,
      ...(scaled ? { lastScaleTime: scaled.lastScaleTime, lastScaleReason: scaled.lastScaleReason } : {}),
    };
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

  /**
   * Records lost to retention before they were consumed: a Warning Event once per occurrence, and
   * the message for WorkersReady while the committed offset stays below the log start (computed
   * when the occurrences change, so a steady loss does not rewrite the status per poll).
   */
  async function watchRetention(
    spec: ResolvedSpec,
    ctx: PartContext,
    e: Entry,
    offsets: readonly PartitionOffsets[],
  ): Promise<string | undefined> {
    const expired = expiredUnconsumed(offsets);
    const { reported, fresh } = trackRetentionLoss(e.lossReported, expired);
    if (reported !== e.lossReported)
      e.lossMessage = reported ? describeRetentionLoss(spec.kafka.topic.name, expired) : undefined;
    e.lossReported = reported;
    if (fresh.length > 0 && entries.get(e.uid) === e) {
      const message = describeRetentionLoss(spec.kafka.topic.name, fresh);
      await emit(ctx, { type: 'Warning', reason: 'RecordsExpiredUnconsumed', message });
    }
    return e.lossMessage;
  }

  /** Through the reconciler's deduplicating recorder when it gives one (apply/event-recorder.ts). */
  async function emit(
    ctx: PartContext,
    ev: { type: 'Normal' | 'Warning'; reason: string; message: string },
  ): Promise<void> {
    const err = ctx.event ? await ctx.event(ev) : await recordEvent(deps.client, ctx.pipeline, ev, identity);
    if (err) ctx.log.warn('event not recorded', { reason: ev.reason, err: err.message });
  }

  /** Events and metrics of one decision. */
  async function report(
    ctx: PartContext,
    e: Entry,
    d: Decision,
    sink: { kind: string } | undefined,
    dep: DeploymentView,
  ): Promise<void> {
    // Swept while its sample was in flight (pipeline deleted): no Event, no metric series again.
    if (entries.get(e.uid) !== e) return;
    if (d.direction !== 'none') {
      deps.metrics?.scaled(e.namespace, e.name, d.direction);
      // Every scale is recorded exactly once, here, when it is decided: the status writer leaves
      // Scaling flips with a scale reason to us (status/conditions.ts conditionFlips). Deciding from
      // the stored condition instead raced with status writes still on their way to the cache.
      await emit(ctx, { type: 'Normal', reason: d.reason, message: d.message });
    }
    if (sink) deps.metrics?.held(e.namespace, e.name, sink.kind);
    deps.metrics?.observe(e.namespace, e.name, {
      ...d.lag,
      desired: d.replicas,
      current: dep.status.replicas ?? 0,
    });
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
