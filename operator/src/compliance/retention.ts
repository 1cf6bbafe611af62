/**
 * Law 5651 retention check: traffic logs must be kept at least six months (the operator's default
 * plan is two years). The table part (controller/parts/table-part.ts) reports a shorter
 * `retention.deleteAfter` as the reason of the table's condition, which stays True: the operator
 * still applies it (shorter retention can be a deliberate test setup), but says so.
 */
import { MIN_COMPLIANT_RETENTION_MS, type ResolvedSpec } from '../api/defaults';

/** Reason of the warning condition. */
export const RETENTION_BELOW_MINIMUM = 'RetentionBelowMinimum';

/** A warning to surface in the LogPipeline's status. */
export interface RetentionWarning {
  reason: typeof RETENTION_BELOW_MINIMUM;
  message: string;
  deleteAfterMs: number;
  minimumMs: number;
}

const days = (ms: number): string => `${+(ms / 86_400_000).toFixed(2)}d`;

/** Returns a warning when retention.deleteAfter is shorter than the legal minimum (180 days), else null. */
export function checkRetention(
  spec: ResolvedSpec,
  minimumMs = MIN_COMPLIANT_RETENTION_MS,
): RetentionWarning | null {
  const { deleteAfterMs, deleteAfter } = spec.clickhouse.retention;
  if (deleteAfterMs >= minimumMs) return null;
  return {
    reason: RETENTION_BELOW_MINIMUM,
    message:
      `clickhouse.retention.deleteAfter is ${deleteAfter} (${days(deleteAfterMs)}); Law 5651 requires keeping traffic logs ` +
      `at least ${days(minimumMs)}: rows (and their integrity links) will be deleted before that`,
    deleteAfterMs,
    minimumMs,
  };
}
