/**
 * Waiting for the operator to make the pipeline Ready (topic, tables, workers), reporting each
 * change of its conditions, with a bound and a way out for Ctrl-C.
 */
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import type { LogPipeline } from '../../operator/src/api/types';
import { readPipeline } from './stack';

/** One line describing the conditions: "TopicReady=True(TopicCreated) TableReady=False(…)". */
export function describeConditions(lp: LogPipeline | undefined): string {
  const conditions = lp?.status?.conditions ?? [];
  if (conditions.length === 0) return 'no status yet (is the operator running?)';
  return conditions.map((c) => `${c.type}=${c.status}(${c.reason})`).join(' ');
}

/** True when the Ready condition is True for the current generation. */
export function isReady(lp: LogPipeline | undefined): boolean {
  const ready = lp?.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status !== 'True') return false;
  const gen = lp?.metadata.generation;
  return ready.observedGeneration === undefined || gen === undefined || ready.observedGeneration >= gen;
}

/** Polls the pipeline until Ready; throws with its conditions after `timeoutMs` or when aborted. */
export async function waitForReady(opts: {
  kubeconfig: string;
  namespace: string;
  name: string;
  timeoutMs: number;
  say: (msg: string) => void;
  aborted: () => boolean;
}): Promise<LogPipeline> {
  const kc = new KubeConfig();
  kc.loadFromFile(opts.kubeconfig);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const started = Date.now();
  let last = '';
  let lp: LogPipeline | undefined;
  while (Date.now() - started < opts.timeoutMs) {
    if (opts.aborted()) throw new Error('interrupted while waiting for the pipeline to become Ready');
    lp = await readPipeline(custom, opts.namespace, opts.name).catch(() => lp);
    const now = describeConditions(lp);
    if (now !== last) {
      opts.say(`  [${((Date.now() - started) / 1000).toFixed(1)}s] ${now}`);
      last = now;
    }
    if (isReady(lp)) return lp!;
    await new Promise((r) => setTimeout(r, 500));
  }
  const messages = (lp?.status?.conditions ?? [])
    .filter((c) => c.status !== 'True')
    .map((c) => `${c.type}: ${c.message}`);
  throw new Error(
    `the pipeline did not become Ready within ${opts.timeoutMs / 1000}s: ${last}\n  ${messages.join('\n  ')}`,
  );
}
