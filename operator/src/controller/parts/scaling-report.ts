/**
 * What the autoscaler tells about its decisions (scaling-part.ts): the ScaledUp/ScaledDown and
 * RecordsExpiredUnconsumed Events and the autoscaler metrics, never for a pipeline swept while
 * its sample was in flight.
 */
import type { ResolvedSpec } from '../../api/defaults';
import { recordEvent } from '../../apply/kube';
import type { KubeClient } from '../../apply/kube-rest';
import type { Decision } from '../../autoscale/decide';
import type { PartitionOffsets } from '../../autoscale/lag';
import type { AutoscalerMetrics } from '../../autoscale/metrics';
import { describeRetentionLoss, expiredUnconsumed, trackRetentionLoss } from '../../autoscale/retention-loss';
import type { PartContext } from '../external';
import type { DeploymentView } from '../../status/views';
import type { Entry } from './scaling-entry';

/** Where the reports go, and whether an entry is still the live one of its pipeline. */
export interface ScalingReporter {
  client: KubeClient;
  metrics?: AutoscalerMetrics;
  /** Event reportingInstance. */
  identity: string;
  live(e: Entry): boolean;
}

/**
 * Records lost to retention before they were consumed: a Warning Event once per occurrence, and
 * the message for WorkersReady while the committed offset stays below the log start (computed
 * when the occurrences change, so a steady loss does not rewrite the status per poll).
 */
export async function watchRetention(
  r: ScalingReporter,
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
  if (fresh.length > 0 && r.live(e)) {
    const message = describeRetentionLoss(spec.kafka.topic.name, fresh);
    await emit(r, ctx, { type: 'Warning', reason: 'RecordsExpiredUnconsumed', message });
  }
  return e.lossMessage;
}

/** Through the reconciler's deduplicating recorder when it gives one (apply/event-recorder.ts). */
export async function emit(
  r: ScalingReporter,
  ctx: PartContext,
  ev: { type: 'Normal' | 'Warning'; reason: string; message: string },
): Promise<void> {
  const err = ctx.event ? await ctx.event(ev) : await recordEvent(r.client, ctx.pipeline, ev, r.identity);
  if (err) ctx.log.warn('event not recorded', { reason: ev.reason, err: err.message });
}

/** Events and metrics of one decision. */
export async function report(
  r: ScalingReporter,
  ctx: PartContext,
  e: Entry,
  d: Decision,
  sink: { kind: string } | undefined,
  dep: DeploymentView,
): Promise<void> {
  // Swept while its sample was in flight (pipeline deleted): no Event, no metric series again.
  if (!r.live(e)) return;
  if (d.direction !== 'none') {
    r.metrics?.scaled(e.namespace, e.name, d.direction);
    // Every scale is recorded exactly once, here, when it is decided: the status writer leaves
    // Scaling flips with a scale reason to us (status/conditions.ts conditionFlips). Deciding from
    // the stored condition instead raced with status writes still on their way to the cache.
    await emit(r, ctx, { type: 'Normal', reason: d.reason, message: d.message });
  }
  if (sink) r.metrics?.held(e.namespace, e.name, sink.kind);
  r.metrics?.observe(e.namespace, e.name, {
    ...d.lag,
    desired: d.replicas,
    current: dep.status.replicas ?? 0,
  });
}
