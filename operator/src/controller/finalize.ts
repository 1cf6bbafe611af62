/**
 * The deletion half of reconcile: with deletionPolicy Delete every registered external part
 * deletes what the status recorded (the parts check the recorded identity, e.g. the Kafka cluster
 * id, before deleting); then the finalizer is released. Retain (the default) only releases.
 * Kubernetes children need nothing: their owner reference lets the garbage collector remove them.
 *
 * Deletion finishes in bounded time (a namespace deletion must never hang on us): when a Secret the
 * parts need is already gone (the namespace controller deletes Secrets and pipelines together), or
 * the deletion has been pending longer than `deleteTimeoutMs`, Delete falls back to Retain and a
 * Warning Event names what was left behind.
 */
import { resolveSpec, type ResolvedSpec } from '../api/defaults';
import type { LogPipeline } from '../api/types';
import { LeadershipLostError } from '../apply/guard';
import { patchFinalizers } from '../apply/kube';
import { sanitizeMessage } from '../status/sanitize';
import { isStatus, type KubeClient } from '../apply/kube-rest';
import type { Logger } from '../../../common/src/log';
import type { ExternalPart, PartContext, PartName } from './external';
import { referencedSecrets } from './secrets';
import type { SecretView } from '../status/views';
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
  /** Cached Secret metadata (what the parts will need to authenticate). */
  secrets: { get(namespace: string, name: string): SecretView | undefined };
  /** After this long in deletion, Delete falls back to Retain. Default 10 min. */
  deleteTimeoutMs?: number;
  now?: () => Date;
}

/** Default bound on how long deletionPolicy Delete may keep a pipeline (and its namespace) Terminating. */
export const DEFAULT_DELETE_TIMEOUT_MS = 10 * 60_000;

/** What a pipeline's status says exists outside Kubernetes, for the "left behind" message. */
export function leftBehind(lp: LogPipeline): string {
  const parts: string[] = [];
  const topic = lp.status?.topic;
  if (topic?.name)
    parts.push(`Kafka topic ${topic.name}${topic.clusterId ? ` (cluster ${topic.clusterId})` : ''}`);
  const table = lp.status?.table;
  if (table?.table)
    parts.push(`ClickHouse table ${table.database ?? 'default'}.${table.table} and its companion tables`);
  return parts.length > 0 ? parts.join(', ') : 'nothing recorded in status';
}

/** Why Delete cannot run now and must fall back to Retain; undefined when it can run. */
export function retainReason(deps: FinalizeDeps, lp: LogPipeline, spec: ResolvedSpec): string | undefined {
  const missing = referencedSecrets(spec).filter((r) => !deps.secrets.get(spec.namespace, r.name));
  if (missing.length > 0)
    return `${missing.map((m) => `Secret "${m.name}" (${m.purpose})`).join(', ')} already deleted`;
  const since = lp.metadata.deletionTimestamp ? Date.parse(lp.metadata.deletionTimestamp) : NaN;
  const timeout = deps.deleteTimeoutMs ?? DEFAULT_DELETE_TIMEOUT_MS;
  const now = (deps.now ?? (() => new Date()))().getTime();
  if (Number.isFinite(since) && now - since > timeout)
    return `deletion still failing after ${Math.round(timeout / 1000)}s`;
  return undefined;
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
  const fallback = retainReason(deps, lp, spec);
  if (fallback) {
    const message = `deletionPolicy Delete fell back to Retain: ${fallback}; left behind: ${leftBehind(lp)}`;
    deps.log.warn('external resources retained', { namespace: spec.namespace, name: spec.name, message });
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
  // What the deletion said is sent before the object can disappear (Events go out in the background).
  await deps.status.flushEvents();
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
