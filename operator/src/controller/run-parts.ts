/**
 * Runs the external parts of one reconcile - the Topic/Table claims and the autoscaler - and turns
 * their outcomes into what the reconciler reports (split out of reconciler.ts).
 */
import type { Logger } from '../../../common/src/log';
import type { ResolvedSpec } from '../api/defaults';
import { applyReplicasAsAutoscaler } from '../apply/kube';
import type { KubeClient } from '../apply/kube-rest';
import { NOT_CONFIGURED, type ConditionInput } from '../status/conditions';
import { sanitizeMessage } from '../status/sanitize';
import type { DeploymentView } from '../status/views';
import { clampReplicas } from './children';
import type {
  ExternalPart,
  PartContext,
  PartName,
  PartOutcome,
  ScalingOutcome,
  ScalingPart,
} from './external';
import type { PartMemo } from './part-memo';

/** What runPart needs from the reconciler. */
export interface PartRunner {
  parts: ReadonlyMap<PartName, ExternalPart>;
  partMemo?: PartMemo;
  log: Logger;
}

/** What one claim (Topic or Table) came to: its condition plus what the reconcile acts on. */
export interface PartRun {
  condition: ConditionInput;
  observed?: PartOutcome['observed'];
  retry?: boolean;
  requeueAfterMs?: number;
  conflict?: boolean;
  events?: PartOutcome['events'];
}

/** Ensures the part `name` (through the memo when on); a throw becomes a retried EnsureFailed. */
export async function runPart(
  runner: PartRunner,
  name: PartName,
  spec: ResolvedSpec,
  ctx: PartContext,
  sv?: string,
): Promise<PartRun> {
  const part = runner.parts.get(name);
  const type = `${name}Ready` as const;
  if (!part) {
    const message = `no ${name.toLowerCase()} manager is registered in this operator`;
    return { condition: { type, status: 'Unknown', reason: NOT_CONFIGURED, message } };
  }
  let outcome: PartOutcome;
  try {
    outcome = runner.partMemo
      ? await runner.partMemo.ensure(part, spec, ctx, sv)
      : await part.ensure(spec, ctx);
  } catch (err) {
    runner.log.warn('external part failed', {
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

/** What pods of the workers need before there are any: applied with a scale to one or more. */
export interface ForPods {
  /** The workers' ConfigMap: awaited before the scale (a pod must never start without it). */
  configMap(): Promise<unknown>;
  /** The workers' PodDisruptionBudget: sent with the scale. */
  pdb(): Promise<unknown>;
}

const NOTHING_FOR_PODS: ForPods = { configMap: async () => undefined, pdb: async () => undefined };

/**
 * Evaluates the autoscaler and applies its clamped replica count when autoscaling is on; a scale
 * to one or more workers applies the ConfigMap first and the PDB with it (`forPods`: a Deployment
 * created with zero replicas gets both only with its first scale-up).
 */
export async function runAutoscaler(
  autoscaler: ScalingPart | undefined,
  client: KubeClient,
  spec: ResolvedSpec,
  deployment: DeploymentView,
  ctx: PartContext,
  forPods: ForPods = NOTHING_FOR_PODS,
): Promise<{ outcome?: ScalingOutcome; deployment: DeploymentView }> {
  const auto = spec.workers.autoscaling;
  if (!autoscaler) return { deployment };
  // Without autoscaling the part only watches for stalled partitions and never sets replicas.
  const outcome = await autoscaler.evaluate(spec, deployment, ctx);
  if (!auto.enabled || outcome.replicas === undefined) return { outcome, deployment };
  const replicas = clampReplicas(outcome.replicas, auto.minReplicas, auto.maxReplicas);
  if (replicas !== deployment.replicas) {
    // No-ops (no request) when they exist as desired: only the first scale-up sends them.
    if (replicas > 0) await forPods.configMap();
    await Promise.all([
      applyReplicasAsAutoscaler(client, spec.namespace, deployment.metadata.name, replicas),
      replicas > 0 ? forPods.pdb() : undefined,
    ]);
  }
  return { outcome: { ...outcome, replicas }, deployment: { ...deployment, replicas } };
}
