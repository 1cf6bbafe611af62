/**
 * The ChainLinked condition beside the scheduled seal (operator/src/compliance/chain-watch.ts): both
 * are evidence checks read from the pipeline's integrity tables on the reconcile's schedule, through
 * the shared ClickHouse client, and neither gates Ready.
 */
import type { ChainWatch } from '../../compliance/chain-watch';
import type { PartContext, SealingPart, SealOutcome } from '../external';
import type { ResolvedSpec } from '../../api/defaults';
import type { ClickHousePool } from './clickhouse-pool';

/** `sealer` with `watch`'s ChainLinked condition added to its outcome, and the sooner of both requeues. */
export function withChainWatch(
  sealer: SealingPart,
  watch: ChainWatch,
  pool: Pick<ClickHousePool, 'client'>,
): SealingPart {
  return {
    async evaluate(spec: ResolvedSpec, ctx: PartContext): Promise<SealOutcome | undefined> {
      const key = ctx.pipeline.metadata.uid ?? `${spec.namespace}/${spec.name}`;
      const [seal, chain] = await Promise.all([
        sealer.evaluate(spec, ctx),
        watch.evaluate(spec, key, () => pool.client(spec, ctx)),
      ]);
      if (!chain) return seal;
      const requeueAfterMs = Math.min(chain.requeueAfterMs, seal?.requeueAfterMs ?? Infinity);
      return { events: [], ...seal, chainLinked: chain.condition, requeueAfterMs };
    },
  };
}
