/**
 * The lag autoscaler as the reconciler's scaling part. Every poll interval (the requeue it asks
 * for) it reads the group's committed offsets and the topic's start/end offsets through the
 * SHARED admin of the pipeline's Kafka cluster, checks the sink (stored TableReady, a cached
 * ClickHouse ping, the workers' journaled batches), and runs the pure `decide`. Reconciles that
 * arrive sooner (Deployment status updates, spec edits) reuse the last decision instead of asking
 * Kafka again, so the lag is sampled at a steady rate.
 *
 * Memory per pipeline is a few numbers: the EWMA trend, a history of at most maxReplicas + 1
 * samples, the watched journal batch and the last outcome, in a Map keyed by pipeline uid that is
 * swept against the pipeline cache (KEDA #7453: memory must not grow with churn).
 */
import os from 'node:os';
import type { ResolvedSpec } from '../../api/defaults';
import type { LogPipeline, LogPipelineStatus } from '../../api/types';
import { KafkaApplyError, errorMessage, type KafkaAdminPool } from '../../apply/kafka-client';
import { recordEvent } from '../../apply/kube';
import type { KubeClient } from '../../apply/kube-rest';
import { decide, type Decision, type ScalerState } from '../../autoscale/decide';
import { computeLag, type PartitionOffsets } from '../../autoscale/lag';
import type { AutoscalerMetrics } from '../../autoscale/metrics';
import { readGroupOffsets } from '../../autoscale/offsets';
import type { KafkaObservers } from '../../autoscale/kafka-observer';
import { trackPartitions, type PartitionMarks } from '../../autoscale/partition-stall';
import { sinkProblem, stallAfterMs, trackJournalStall, type StallMark } from '../../autoscale/sink-health';
import type { PartContext, ScalingOutcome, ScalingPart } from '../external';
import type { DeploymentView } from '../../status/views';
import { pollIntervalMs, stalledPartitionCause, WATCH_ONLY } from './progress-watch';
import type { ClickHousePool } from './table-part';
import { kafkaConnectionFor } from './topic-part';
import { sanitizeMessage } from '../../status/sanitize';

/** Collaborators of the scaling part. */
export interface ScalingPartDeps {
  kafka: KafkaAdminPool;
  clickhouse: ClickHousePool;
  /** For the ScaledUp/ScaledDown Events. */
  client: KubeClient;
  /** Every cached LogPipeline (to forget the state of deleted ones). */
  pipelines: () => Iterable<LogPipeline>;
  metrics?: AutoscalerMetrics;
  /** Shared per-cluster offset observation (autoscale/kafka-observer.ts); absent: one admin round per pipeline. */
  observers?: KafkaObservers;
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
  namespace: string;
  name: string;
  scaler: ScalerState;
  stall?: StallMark;
  /** Per-partition progress clocks (Stalled condition). */
  marks?: PartitionMarks;
  lastPollAt: number;
  last?: ScalingOutcome;
  /** status.lag.lastScale* as stored before this operator instance made any change. */
  recorded?: Pick<NonNullable<LogPipelineStatus['lag']>, 'lastScaleTime' | 'lastScaleReason'>;
}

/** Polls closer together than this fraction of the interval reuse the last decision. */
const MIN_POLL_FRACTION = 0.8;
const SWEEP_MS = 30_000;
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
  const pings = new Map<string, { at: number; error?: string; pending?: Promise<string | undefined> }>();
  let lastSweep = now();

  // Deleted pipelines are never evaluated again, so the sweep also runs on its own timer.
  const timer = setInterval(() => sweep(now()), SWEEP_MS);
  timer.unref();

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
        namespace: spec.namespace,
        name: spec.name,
        scaler: { history: [] },
        lastPollAt: 0,
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
    const conn = await kafkaConnectionFor(spec, ctx);
    const [group, pingError] = await Promise.all([
      deps.observers
        ? // Half an interval: a pipeline sees offsets at most pollMs/2 old, and all pipelines of
          // the cluster on this interval share two rounds per interval.
          deps.observers.for(conn).read(spec.kafka.topic.name, spec.kafka.consumerGroup, pollMs / 2)
        : deps.kafka.withAdmin(conn, (admin) =>
            readGroupOffsets(admin, spec.kafka.topic.name, spec.kafka.consumerGroup),
          ),
      ping(spec, ctx, t),
    ]);
    if (group.offsets.length === 0) throw new Error(`topic ${spec.kafka.topic.name} has no partitions`);
    const stall = trackJournalStall(e.stall, group.commits, t);
    e.stall = stall.mark;
    e.marks = trackPartitions(e.marks, group.offsets, t);
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
      return { ...WATCH_ONLY, stall: partitionStall, requeueAfterMs: pollMs };
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
    const lag = {
      ...decision.lag,
      ...(last
        ? { lastScaleTime: isoSeconds(last.at), lastScaleReason: last.summary.slice(0, 1024) }
        : (e.recorded ?? {})),
    };
    return {
      replicas: decision.replicas,
      status: decision.status,
      reason: decision.reason,
      message: decision.message,
      lag,
      requeueAfterMs: pollMs,
      stall: partitionStall,
    };
  }

  /** Events and metrics of one decision. */
  async function report(
    ctx: PartContext,
    e: Entry,
    d: Decision,
    sink: { kind: string } | undefined,
    dep: DeploymentView,
  ): Promise<void> {
    if (d.direction !== 'none') {
      deps.metrics?.scaled(e.namespace, e.name, d.direction);
      // The status writer turns a flip of the Scaling condition into an Event with this same reason
      // and message; write our own only when it will not, so every scale is recorded exactly once.
      const prev = ctx.pipeline.status?.conditions?.find((c) => c.type === 'Scaling');
      const flips = prev ? prev.status !== d.status : d.status === 'False';
      if (!flips) {
        const err = await recordEvent(
          deps.client,
          ctx.pipeline,
          { type: 'Normal', reason: d.reason, message: d.message },
          identity,
        );
        if (err) ctx.log.warn('event not recorded', { reason: d.reason, err: err.message });
      }
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
    close: () => clearInterval(timer),
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
      const sinceLast = t - e.lastPollAt;
      if (e.last && sinceLast < MIN_POLL_FRACTION * pollMs) {
        return { ...e.last, replicas: undefined, requeueAfterMs: Math.max(1, pollMs - sinceLast) };
      }
      e.lastPollAt = t;
      try {
        e.last = await poll(spec, dep, ctx, e, t);
      } catch (err) {
        // Kafka unreachable, topic missing, Secret missing: keep the replicas, say why, try next poll.
        const message = `lag unavailable, keeping ${dep.replicas} workers: ${sanitizeMessage(err instanceof KafkaApplyError ? err.message : errorMessage(err))}`;
        ctx.log.info('autoscaler poll failed', { err: errorMessage(err) });
        e.last = { status: 'Unknown', reason: 'LagUnavailable', message, requeueAfterMs: pollMs };
      }
      return e.last;
    },
  };
}
