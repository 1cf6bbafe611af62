/**
 * The checkpoint chain checks of `verify` (checkpoint format v2): every trusted checkpoint names
 * its predecessor by id, so a deleted checkpoint leaves its successor pointing at nothing; and
 * checkpoints come at least every `interval_ms`, so a stretch longer than twice the signed interval
 * during which links were inserted means checkpoints are missing (deleted, or never written).
 */
import { GENESIS_CHECKPOINT } from '../../../common/src/integrity/checkpoint';
import type { CheckpointPassResult } from './verify-checkpoints';
import type { FindingSink } from './verify-report';

/** I/O the chain checks need (queries live in verify.ts). */
export interface CheckpointChainSource {
  /** Which of these checkpoint ids are stored (any creation time). */
  existing(ids: readonly string[]): Promise<Set<string>>;
  /** Links inserted strictly between two times: how many, and the first/last inserted_at. */
  insertedBetween(
    afterMs: number,
    beforeMs: number,
  ): Promise<{ count: number; firstMs: number; lastMs: number }>;
}

const LOOKUP_BATCH = 200;
/** Allowance on top of two intervals: a checkpoint's own TSA round trip and insert (a slow TSA delays the next). */
export const GAP_SLACK_MS = 60_000;

/** Reports checkpoints whose predecessor is not stored (`checkpoint-missing`). */
export async function checkCheckpointPrevs(
  cp: CheckpointPassResult,
  src: CheckpointChainSource,
  sink: FindingSink,
): Promise<void> {
  const wanted = cp.prevs.filter((p) => p.prev !== GENESIS_CHECKPOINT && !cp.ids.has(p.prev));
  const unique = [...new Set(wanted.map((p) => p.prev))];
  const found = new Set<string>();
  for (let i = 0; i < unique.length; i += LOOKUP_BATCH)
    for (const id of await src.existing(unique.slice(i, i + LOOKUP_BATCH))) found.add(id);
  for (const p of wanted) {
    if (found.has(p.prev)) continue;
    sink.finding({
      kind: 'checkpoint-missing',
      checkpointAtMs: p.createdAtMs,
      detail: `the checkpoint before this one (id ${p.prev.slice(0, 16)}…) is not stored: checkpoints were deleted or altered`,
    });
  }
}

/**
 * Reports stretches without a trusted checkpoint longer than twice the signed interval (plus
 * GAP_SLACK_MS) during which links were inserted (`checkpoint-gap`), including the stretch from
 * the newest checkpoint to `nowMs`. Links inserted within that allowance of the stretch's end are
 * due in a later checkpoint and do not count. `tail` false (a time window: later checkpoints are
 * outside it) checks only the stretches between the checkpoints seen.
 */
export async function checkCheckpointGaps(
  cp: CheckpointPassResult,
  src: CheckpointChainSource,
  sink: FindingSink,
  nowMs: number,
  tail = true,
): Promise<void> {
  const interval = cp.intervalMs;
  if (!interval || cp.times.length === 0) return;
  const allowed = 2 * interval + GAP_SLACK_MS;
  const times = [...cp.times].sort((a, b) => a - b);
  const stretches: Array<[number, number]> = [];
  for (let i = 1; i < times.length; i++)
    if (times[i] - times[i - 1] > allowed) stretches.push([times[i - 1], times[i]]);
  if (tail && nowMs - times[times.length - 1] > allowed) stretches.push([times[times.length - 1], nowMs]);
  for (const [from, to] of stretches) {
    const links = await src.insertedBetween(from, to - allowed);
    if (links.count === 0) continue;
    const iso = (ms: number) => new Date(ms).toISOString();
    sink.finding({
      kind: 'checkpoint-gap',
      checkpointAtMs: from,
      detail:
        `no checkpoint from ${iso(from)} to ${to === nowMs ? 'now' : iso(to)} (longer than twice the ` +
        `${Math.round(interval / 1000)} s interval + ${GAP_SLACK_MS / 1000} s) while ${links.count} batches were inserted ` +
        `(${iso(links.firstMs)} .. ${iso(links.lastMs)}): checkpoints are missing`,
    });
  }
}
