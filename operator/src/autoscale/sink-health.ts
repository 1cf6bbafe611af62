/**
 * Is the sink (ClickHouse) the bottleneck? (pure). Adding consumers while the database cannot
 * take more inserts only adds load and retries (KEDA #7092), so the autoscaler holds scale-ups
 * while any of these says so:
 *
 * - the pipeline's TableReady condition is False (the table part could not reach or set up the table);
 * - the operator's own ping of the pipeline's ClickHouse fails;
 * - the WORKERS report stalled inserts, with no extra channel and no pod scraping: a worker
 *   journals each batch in its Kafka offset-commit metadata BEFORE inserting it and drops it from
 *   the journal once stored (common/src/cut-journal.ts). The operator already fetches
 *   that metadata with the committed offsets, so a journaled batch that stays outstanding across
 *   polls for `stallAfterMs` while the group's committed position does not move is an insert that
 *   keeps failing or hanging. Progress elsewhere releases the hold at once: after an outage the
 *   stuck batch may sit in its retry backoff while newer batches are already being stored.
 *
 * The stall clock is the operator's own (first time it saw that batch outstanding), not the
 * batch's ingest time: a batch re-cut by a new owner after a rebalance keeps its old ingest time
 * but is not stalled, and the clocks of workers and operator need not agree.
 */
import { decodeJournal } from '../../../common/src/cut-journal';

/** One partition's committed offset and its commit metadata, as fetched for the group. */
export interface CommitRecord {
  partition: number;
  /** Committed offset, -1 when none. */
  committed: number;
  metadata: string | null;
}

/** The journaled batch being watched and since when the operator has seen it outstanding. */
export interface StallMark {
  key: string;
  since: number;
}

/** The oldest outstanding journaled batch of the group, and for how long it has been outstanding. */
export function trackJournalStall(
  prev: StallMark | undefined,
  commits: readonly CommitRecord[],
  now: number,
): { mark?: StallMark; stalledMs: number } {
  let oldest: { key: string; ingestMs: number } | undefined;
  for (const c of commits) {
    if (c.committed < 0 || !c.metadata) continue;
    const entries = decodeJournal(c.metadata, c.committed);
    if (entries.length === 0) continue;
    const first = entries[0]; // journals are oldest first
    if (!oldest || first.ingestMs < oldest.ingestMs)
      oldest = { key: `${c.partition}:${first.firstOffset}`, ingestMs: first.ingestMs };
  }
  if (!oldest) return { stalledMs: 0 };
  // While the watched batch is still outstanding it is still stuck: keep the first time we saw it.
  const outstanding = prev ? commits.some((c) => isOutstanding(c, prev.key)) : false;
  const mark = prev && outstanding ? prev : { key: oldest.key, since: now };
  return { mark, stalledMs: now - mark.since };
}

function isOutstanding(c: CommitRecord, key: string): boolean {
  const colon = key.indexOf(':');
  if (Number(key.slice(0, colon)) !== c.partition) return false;
  const first = Number(key.slice(colon + 1));
  return decodeJournal(c.metadata, c.committed).some((e) => e.firstOffset === first);
}

/** How long a journaled batch may stay outstanding before the sink counts as stalled. */
export function stallAfterMs(pollIntervalMs: number): number {
  return Math.max(10_000, 2 * pollIntervalMs);
}

/** What the autoscaler knows about the sink in one poll. */
export interface SinkSignals {
  /** Status of the stored TableReady condition, when there is one. */
  tableReady?: 'True' | 'False' | 'Unknown';
  tableMessage?: string;
  /** Error of the ClickHouse ping; undefined when it answered. */
  pingError?: string;
  /** How long the oldest journaled batch has been outstanding. */
  stalledMs: number;
  stallAfterMs: number;
  /** The group committed something since the previous poll. */
  progressed: boolean;
}

/** Why the sink is unhealthy (a metrics label and a sentence), or undefined when it is healthy. */
export function sinkProblem(
  s: SinkSignals,
): { kind: 'table_not_ready' | 'clickhouse_unreachable' | 'inserts_stalled'; message: string } | undefined {
  if (s.pingError)
    return { kind: 'clickhouse_unreachable', message: `ClickHouse does not answer: ${s.pingError}` };
  if (s.tableReady === 'False')
    return {
      kind: 'table_not_ready',
      message: `TableReady is False${s.tableMessage ? `: ${s.tableMessage}` : ''}`,
    };
  if (s.stalledMs >= s.stallAfterMs && !s.progressed) {
    return {
      kind: 'inserts_stalled',
      message: `a journaled batch has waited ${Math.round(s.stalledMs / 1000)}s for its insert (workers report ClickHouse failing or too slow)`,
    };
  }
  return undefined;
}
