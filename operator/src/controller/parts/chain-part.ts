/**
 * The ChainLinked condition beside the scheduled seal (operator/src/compliance/chain-watch.ts): both
 * are evidence checks read from the pipeline's integrity tables through the shared ClickHouse
 * client, and neither gates Ready. The watch's own rounds queue a reconcile when the condition
 * changes, so it adds no requeue of its own.
 */
import type { ChainWatch } from '../../compliance/chain-watch';
import type { PartContext, SealingPart, SealOutcome } from '../external';
import type { ResolvedSpec } from '../../api/defaults';
import type { ClickHousePool } from './clickhouse-pool';

/** `sealer` with `watch`'s ChainLinked condition added to its outcome. */
export function withChainWatch(
  sealer: SealingPart,
  watch: ChainWatch,
  pool: Pick<ClickHousePool, 'client'>,
): SealingPart {
  return {
    async evaluate(spec: ResolvedSpec, ctx: PartContext): Promise<SealOutcome | undefined> {
      const [seal, chainLinked] = await Promise.all([
        sealer.evaluate(spec, ctx),
        watch.evaluate(spec, () => pool.client(spec, ctx)),
      ]);
      if (!chainLinked) return seal;
      return { events: [], requeueAfterMs: 0, ...seal, chainLinked };
    },
  };
}
