/**
 * The autoscaler's memory of one pipeline (scaling-part.ts) and the small pure steps on it: a new
 * entry from the pipeline's stored status, the replica write in flight, and the lag status of a
 * decision.
 */
import type { ResolvedSpec } from '../../api/defaults';
import type { LogPipelineStatus } from '../../api/types';
import type { KafkaConnection } from '../../apply/kafka-client';
import type { Decision, ScalerState } from '../../autoscale/decide';
import { computeLag, type PartitionOffsets } from '../../autoscale/lag';
import type { PartitionMarks } from '../../autoscale/partition-stall';
import type { ReportedLoss } from '../../autoscale/retention-loss';
import type { StallMark } from '../../autoscale/sink-health';
import type { PartContext, ScalingOutcome } from '../external';
import type { DeploymentView } from '../../status/views';
import { pollIntervalMs } from './progress-watch';

/** What the autoscaler remembers of one pipeline. */
export interface Entry {
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

/** status.lag.lastScale* as written. */
export type LastScaleText = Pick<NonNullable<LogPipelineStatus['lag']>, 'lastScaleTime' | 'lastScaleReason'>;

/** Polls closer together than this fraction of the interval reuse the last decision. */
export const MIN_POLL_FRACTION = 0.8;
/** Period of the sweep that forgets deleted pipelines and idle pings. */
export const SWEEP_MS = 30_000;
/** Longest wait for the Deployment cache to show our replica write (at least two poll intervals). */
const SCALE_IN_FLIGHT_MS = 10_000;

/** True when the group's committed position moved since the previous poll (no previous poll: false). */
export function progressed(state: ScalerState, offsets: PartitionOffsets[]): boolean {
  const before = state.trend?.consumedPosition;
  return before !== undefined && computeLag(offsets).consumedPosition > before;
}

/** An ISO time without milliseconds. */
function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A new entry; status.lag.lastScale* as stored are kept until this instance scales. */
export function newEntry(spec: ResolvedSpec, ctx: PartContext): Entry {
  const lag = ctx.pipeline.status?.lag;
  const recorded = lag?.lastScaleTime
    ? { lastScaleTime: lag.lastScaleTime, lastScaleReason: lag.lastScaleReason }
    : undefined;
  return {
    uid: spec.uid,
    namespace: spec.namespace,
    name: spec.name,
    scaler: { history: [] },
    lastPollAt: 0,
    pollMs: pollIntervalMs(spec),
    recorded,
  };
}

/**
 * The Deployment as the decision must see it: the cache lags behind our own replica write by a
 * watch event, and deciding on the old count would scale (and report) the same step again.
 */
export function withScaleInFlight(e: Entry, dep: DeploymentView, t: number): DeploymentView {
  const s = e.scaledTo;
  if (!s || dep.replicas === s.replicas || t - s.at > Math.max(2 * e.pollMs, SCALE_IN_FLIGHT_MS)) {
    e.scaledTo = undefined;
    return dep;
  }
  return { ...dep, replicas: s.replicas };
}

/** Remembers a replica count the reconciler is about to write. */
export function handOut(e: Entry, out: ScalingOutcome, dep: DeploymentView, t: number): ScalingOutcome {
  if (out.replicas !== undefined && out.replicas !== dep.replicas)
    e.scaledTo = { replicas: out.replicas, at: t };
  return out;
}

/** status.lag of a decision: its lag figures and the last scale (ours, else as stored). */
export function decidedLag(e: Entry, decision: Decision, state: ScalerState): ScalingOutcome['lag'] {
  const last = state.lastScale;
  if (last && e.lastScaleText?.at !== last.at)
    e.lastScaleText = {
      at: last.at,
      lastScaleTime: isoSeconds(last.at),
      lastScaleReason: last.summary.slice(0, 1024),
    };
  const scaled = last ? e.lastScaleText! : e.recorded;
  return {
    ...decision.lag,
    ...(scaled ? { lastScaleTime: scaled.lastScaleTime, lastScaleReason: scaled.lastScaleReason } : {}),
  };
}

/** Without autoscaling there is no decision to make; the position is kept so the next poll's `progressed` is right. */
export function keepPosition(e: Entry, offsets: PartitionOffsets[], t: number): void {
  e.scaler = {
    ...e.scaler,
    trend: { at: t, smoothedLag: 0, rate: 0, consumedPosition: computeLag(offsets).consumedPosition },
  };
}
