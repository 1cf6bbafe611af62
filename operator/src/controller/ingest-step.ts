/**
 * The syslog receiver step of a reconcile: applies (or removes) the ingest children and reports
 * their condition (split out of reconciler.ts).
 */
import type { ResolvedSpec } from '../api/defaults';
import type { LogPipeline } from '../api/types';
import { KubeApiError } from '../apply/kube-rest';
import type { IngestSpec } from '../desired/ingest';
import type { ConditionInput } from '../status/conditions';
import { ingestCondition, ingestStatus, packingLimitCondition } from '../status/ingest';
import { sanitizeMessage } from '../status/sanitize';
import type { SecretView } from '../status/views';
import type { Lookup } from './children';
import type { IngestApplier } from './ingest-children';
import type { StatusWriter } from './status-writer';

/** What the ingest step needs from the reconciler. */
export interface IngestStepDeps {
  ingestApplier: IngestApplier;
  status: StatusWriter;
  secrets: Lookup<SecretView>;
}

/** Applies (or removes) the syslog receiver; its condition and status when spec.ingest is set. */
export async function applyIngest(
  deps: IngestStepDeps,
  lp: LogPipeline,
  spec: ResolvedSpec,
  topicMaxMessageBytes?: number,
) {
  if (!spec.ingest) {
    const deleted = await deps.ingestApplier.remove(spec);
    if (deleted > 0)
      await deps.status.event(lp, {
        type: 'Normal',
        reason: 'IngestRemoved',
        message: `spec.ingest was removed: deleted ${deleted} receiver objects`,
      });
    return undefined;
  }
  // Terminal until the spec or the topic changes: said once per reconcile, nothing rolled out.
  const tooBig = packingLimitCondition(spec.ingest, spec.kafka.topic.name, topicMaxMessageBytes);
  if (tooBig) {
    await deps.status.event(lp, { type: 'Warning', reason: tooBig.reason, message: tooBig.message });
    return { condition: tooBig, stall: { reason: tooBig.reason, message: tooBig.message }, status: {} };
  }
  let applied;
  try {
    applied = await deps.ingestApplier.apply(spec as IngestSpec, deps.secrets);
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
  for (const child of applied.repaired) {
    const message = `${child} was changed or deleted outside the operator; restored`;
    await deps.status.event(lp, { type: 'Warning', reason: 'ChildRepaired', message });
  }
  return { ...ingestCondition(applied.observation), status: ingestStatus(applied.observation) };
}
