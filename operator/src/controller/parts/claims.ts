/**
 * Topic claims (pure): two LogPipelines naming the same topic on the same brokers would fight over
 * its partitions and configs. The older claim wins (creation time, then namespace/name), the newer
 * one gets a conflict condition instead of a tug of war.
 */
import { resolveSpec } from '../../api/defaults';
import type { LogPipeline } from '../../api/types';

function claimKey(lp: LogPipeline): string {
  const spec = resolveSpec(lp);
  return `${[...spec.kafka.bootstrapServers].sort().join(',')}|${spec.kafka.topic.name}`;
}

function older(a: LogPipeline, b: LogPipeline): boolean {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb;
  return `${a.metadata.namespace}/${a.metadata.name}` < `${b.metadata.namespace}/${b.metadata.name}`;
}

/** The pipeline that owns `lp`'s topic when it is not `lp` itself, else undefined. */
export function olderClaimant(lp: LogPipeline, all: Iterable<LogPipeline>): LogPipeline | undefined {
  let key: string;
  try {
    key = claimKey(lp);
  } catch {
    return undefined; // an unresolvable spec fails elsewhere with its own condition
  }
  let winner: LogPipeline | undefined;
  for (const other of all) {
    if (other.metadata.uid === lp.metadata.uid || other.metadata.deletionTimestamp) continue;
    if (other.metadata.namespace === lp.metadata.namespace && other.metadata.name === lp.metadata.name)
      continue;
    try {
      if (claimKey(other) !== key) continue;
    } catch {
      continue;
    }
    if (older(other, lp) && (!winner || older(other, winner))) winner = other;
  }
  return winner;
}
