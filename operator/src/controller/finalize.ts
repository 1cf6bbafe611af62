/**
 * The deletion half of reconcile: with deletionPolicy Delete every registered external part
 * deletes what the status recorded (the parts check the recorded identity, e.g. the Kafka cluster
 * id, before deleting); then the finalizer is released. Retain (the default) only releases.
 * Kubernetes children need nothing: their owner reference lets the garbage collector remove them.
 */
import { resolveSpec, type ResolvedSpec } from '../api/defaults';
import type { LogPipeline } from '../api/types';
import { LeadershipLostError } from '../apply/guard';
import { patchFinalizers } from '../apply/kube';
import { sanitizeMessage } from '../status/sanitize';
import { isStatus, type KubeClient } from '../apply/kube-rest';
import type { Logger } from '../observability/log';
import type { ExternalPart, PartContext, PartName } from './external';
import type { StatusWriter } from './status-writer';

/** Finalizer that guards the external resources (topic, tables) of a pipeline. */
export const FINALIZER = 'logpipeline.io/external-resources';

/** What finalizing needs from the reconciler. */
export interface FinalizeDeps {
  client: KubeClient;
  parts: Map<PartName, ExternalPart>;
  status: StatusWriter;
  partContext(lp: LogPipeline): PartContext;
  log: Logger;
}

async function deleteExternal(deps: FinalizeDeps, lp: LogPipeline): Promise<void> {
  let spec: ResolvedSpec;
  try {
    spec = resolveSpec(lp);
  } catch (err) {
    // Without a resolvable spec the identities cannot be checked: keeping the data is the safe side.
    const message = `external resources retained: the spec cannot be resolved (${sanitizeMessage(err)})`;
    await deps.status.event(lp, { type: 'Warning', reason: 'ExternalResourcesRetained', message });
    return;
  }
  const ctx = deps.partContext(lp);
  for (const part of deps.parts.values()) {
    // A throw leaves the finalizer in place: the key is retried with backoff.
    let ev;
    try {
      ev = await part.delete(spec, lp.status, ctx);
    } catch (err) {
      if (err instanceof LeadershipLostError || ctx.guard.signal.aborted) {
        const message = `${part.name.toLowerCase()} deletion ${sanitizeMessage(err)}; the next leader retries it`;
        await deps.status.event(lp, { type: 'Warning', reason: 'LeadershipLost', message });
      }
      throw err;
    }
    const message = `${part.name.toLowerCase()} deleted (deletionPolicy Delete)`;
    await deps.status.event(lp, ev ?? { type: 'Normal', reason: `${part.name}Deleted`, message });
  }
}

/** Runs the deletion policy and releases our finalizer; true when it was released now. */
export async function finalizePipeline(deps: FinalizeDeps, lp: LogPipeline): Promise<boolean> {
  const finalizers = lp.metadata.finalizers ?? [];
  if (!finalizers.includes(FINALIZER)) return false;
  const policy = lp.spec?.deletionPolicy ?? 'Retain';
  if (policy === 'Delete' && deps.parts.size > 0) await deleteExternal(deps, lp);
  try {
    await patchFinalizers(
      deps.client,
      lp,
      finalizers.filter((f) => f !== FINALIZER),
    );
  } catch (err) {
    if (!isStatus(err, 404)) throw err;
  }
  deps.log.info('finalizer released', {
    namespace: lp.metadata.namespace,
    name: lp.metadata.name,
    deletionPolicy: policy,
  });
  return true;
}
