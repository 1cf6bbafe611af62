/**
 * What the status tests read from the real bed: every version of a LogPipeline the apiserver
 * stored (a watch, not samples), the folded trail of one condition across them, and the
 * pipeline's Events.
 */
import { Watch } from '@kubernetes/client-node';
import type { LogPipeline } from '../operator/src/api/types';
import { apis, condition, kubeConfig, waitFor } from './operator-harness';

/** Every version of one LogPipeline the apiserver stores from `resourceVersion` on (a watch). */
export class Versions {
  readonly seen: LogPipeline[] = [];
  private ended?: unknown;
  private abort?: AbortController;

  static async from(namespace: string, lp: LogPipeline): Promise<Versions> {
    const v = new Versions();
    v.abort = await new Watch(kubeConfig()).watch(
      `/apis/logpipeline.io/v1alpha1/namespaces/${namespace}/logpipelines`,
      {
        fieldSelector: `metadata.name=${lp.metadata.name}`,
        resourceVersion: lp.metadata.resourceVersion,
        timeoutSeconds: 600,
      },
      (type, obj: LogPipeline) => {
        if (type === 'MODIFIED' || type === 'ADDED') v.seen.push(obj);
      },
      (err) => (v.ended = err ?? 'closed'),
    );
    return v;
  }

  /** Waits until the watch delivered `rv` (so nothing stored before it was missed), then stops. */
  async through(rv: string | undefined): Promise<LogPipeline[]> {
    await waitFor(`the watch to deliver resourceVersion ${rv}`, async () => {
      if (this.ended !== undefined && !this.seen.some((lp) => lp.metadata.resourceVersion === rv))
        throw new Error(`watch ended early: ${String(this.ended)}`);
      return this.seen.some((lp) => lp.metadata.resourceVersion === rv);
    });
    this.abort?.abort();
    return this.seen;
  }
}

/** The Events of LogPipeline `name` (to tell the new ones by name). */
export async function pipelineEvents(namespace: string, name: string) {
  const list = await apis().core.listNamespacedEvent({ namespace });
  return list.items.filter((e) => e.involvedObject.kind === 'LogPipeline' && e.involvedObject.name === name);
}

/** The (status, reason) of `type` in each version, consecutive repeats folded. */
export function trail(versions: LogPipeline[], type: string): string[] {
  const out: string[] = [];
  for (const lp of versions) {
    const c = condition(lp, type);
    const step = c ? `${c.status} ${c.reason}` : 'absent';
    if (out[out.length - 1] !== step) out.push(step);
  }
  return out;
}

/** One line per stored version: Ready, Reconciling and WorkersReady (status, reason, message) and the worker counts. */
export function describeVersions(versions: LogPipeline[]): string {
  const c = (lp: LogPipeline, type: string) => {
    const x = condition(lp, type);
    return x ? `${type}=${x.status} ${x.reason}` : `${type}=absent`;
  };
  return versions
    .map((lp) => {
      const w = lp.status?.workers;
      const workers = condition(lp, 'WorkersReady');
      return `rv ${lp.metadata.resourceVersion} gen ${lp.metadata.generation}/${lp.status?.observedGeneration}: ${c(lp, 'Ready')}, ${c(lp, 'Reconciling')}, ${c(lp, 'WorkersReady')} "${workers?.message}" (pods ${w?.current}, ready ${w?.ready})`;
    })
    .join('\n');
}
