/**
 * Reports a pipeline whose referenced Secrets are missing: Ready False with SecretNotFound and a
 * requeue (split out of reconciler.ts).
 */
import type { Logger } from '../../../common/src/log';
import type { ResolvedSpec } from '../api/defaults';
import type { LogPipeline } from '../api/types';
import { workerName } from '../desired/labels';
import { workersCondition, type ConditionInput } from '../status/conditions';
import { progressConditions } from '../status/kstatus';
import type { ChildCaches } from './children';
import type { ReconcileResult } from './reconcile-types';
import type { StatusWriter } from './status-writer';

/** What the missing-Secrets report needs from the reconciler. */
export interface MissingSecretsDeps {
  status: StatusWriter;
  children: ChildCaches;
  log: Logger;
}

/** Writes the SecretNotFound status naming every missing Secret and asks for a backoff retry. */
export async function reportMissingSecrets(
  deps: MissingSecretsDeps,
  lp: LogPipeline,
  spec: ResolvedSpec,
  missing: Array<{ name: string; purpose: string }>,
): Promise<ReconcileResult> {
  const list = missing.map((m) => `Secret "${m.name}" (${m.purpose})`).join(', ');
  const message = `${list} not found in namespace ${spec.namespace}`;
  const deployment = deps.children.deployments.get(spec.namespace, workerName(spec.name));
  const desired = spec.workers.autoscaling.enabled ? (deployment?.replicas ?? 0) : spec.workers.replicas;
  const ready: ConditionInput = { type: 'Ready', status: 'False', reason: 'SecretNotFound', message };
  await deps.status.write(
    lp,
    [ready, workersCondition(deployment, desired, workerName(spec.name)), ...progressConditions(ready)],
    {},
  );
  deps.log.info('waiting for secrets', {
    namespace: spec.namespace,
    name: spec.name,
    secrets: missing.map((m) => m.name),
  });
  // The Secret informer enqueues this pipeline when one of them appears; the backoff is the fallback.
  return { requeue: true };
}
