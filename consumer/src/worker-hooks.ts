/**
 * Small adapters between the worker's parts and kafkajs/metrics/logs: a commit sender that only
 * reports success when kafkajs really committed (kafkajs' commitOffsets silently returns when its
 * runner is not running), and the delivery observer that feeds metrics and rate-limited logs.
 */
import type { Consumer } from 'kafkajs';
import type { Logger } from '../../common/src/log';
import type { CommitSender } from './delivery/offset-committer';
import type { WorkerMetrics } from './observability/metrics';
import type { DeliveryObserver } from './sink/batch-delivery';
import { errorReason } from './sink/retry';

/** A CommitSender over consumer.commitOffsets that throws unless kafkajs emitted COMMIT_OFFSETS for it. */
export function makeCommitSender(consumer: Consumer): CommitSender {
  let committed = 0;
  consumer.on(consumer.events.COMMIT_OFFSETS, () => {
    committed++;
  });
  return async (offsets) => {
    const before = committed;
    await consumer.commitOffsets(offsets);
    // The event is emitted synchronously inside kafkajs right after the broker accepted the commit.
    if (committed === before)
      throw Object.assign(new Error('offset commit skipped: consumer not running'), { type: 'NOT_RUNNING' });
  };
}

/** Logs at most one line per `intervalMs` per key, with the count of suppressed ones. */
export function rateLimited(log: Logger, intervalMs = 10_000) {
  const last = new Map<string, { at: number; suppressed: number }>();
  return (key: string, msg: string, fields: Record<string, unknown>) => {
    const now = Date.now();
    const entry = last.get(key);
    if (entry && now - entry.at < intervalMs) {
      entry.suppressed++;
      return;
    }
    log.warn(msg, { ...fields, suppressed: entry?.suppressed ?? 0 });
    last.set(key, { at: now, suppressed: 0 });
  };
}

/** Metrics and logs for batch deliveries; `onSuccess` marks ClickHouse as reachable. */
export function observeDelivery(
  metrics: WorkerMetrics,
  log: Logger,
  onSuccess: () => void,
): DeliveryObserver {
  const warn = rateLimited(log);
  return {
    insertDone(target, seconds) {
      metrics.insertDuration.observe({ target }, seconds);
      onSuccess();
    },
    insertFailed(kind, err, job, attempt) {
      metrics.insertFailures.inc({ kind });
      warn(kind, `insert failed (${kind})`, {
        partition: job.partition,
        first: job.firstOffset,
        last: job.lastOffset,
        attempt,
        err: errorReason(err, 300),
      });
    },
  };
}

/** Counts offset commits by outcome and warns on a failed one. */
export function observeCommits(metrics: WorkerMetrics, log: Logger): (ok: boolean, err?: unknown) => void {
  return (ok, err) => {
    metrics.commits.inc({ outcome: ok ? 'ok' : 'failed' });
    if (!ok) log.warn('offset commit failed', { err: errorReason(err) });
  };
}
