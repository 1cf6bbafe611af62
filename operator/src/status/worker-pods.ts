/**
 * Why the workers do not run, from their Pods (pure). A pod that is not ready and has crashed
 * (waiting in CrashLoopBackOff, or restarted after a failed exit) makes WorkersReady False with
 * reason WorkerCrashLoop and the pod's own words: "worker pod X: CrashLoopBackOff, last exit 1:
 * KafkaJSNotImplemented: Snappy compression not implemented". Progress has stopped, so the
 * pipeline is also Stalled (kstatus: Failed) until the pod runs again.
 */
import type { PodView } from './pod-view';
import type { ConditionInput } from './conditions';

/** Reason of WorkersReady (and Stalled) while a worker pod crash-loops. */
export const WORKER_CRASH_LOOP = 'WorkerCrashLoop';

/** True when the pod is not ready because its worker keeps exiting. */
export function isCrashLooping(p: PodView): boolean {
  if (p.ready) return false;
  if (p.waitingReason === 'CrashLoopBackOff') return true;
  return p.restartCount > 0 && p.lastExit !== undefined && p.lastExit.exitCode !== 0;
}

/** One sentence about a crash-looping pod. */
export function describeCrash(p: PodView): string {
  const parts = [`worker pod ${p.metadata.name}: ${p.waitingReason ?? 'restarting'}`];
  if (p.lastExit) {
    const why = p.lastExit.message ?? p.lastExit.reason;
    parts.push(`last exit ${p.lastExit.exitCode}${why ? `: ${why}` : ''}`);
  }
  parts.push(`${p.restartCount} restart${p.restartCount === 1 ? '' : 's'}`);
  return parts.join(', ');
}

/** WorkersReady False (WorkerCrashLoop) naming the first crash-looping pod, or undefined. */
export function crashLoopCondition(pods: readonly PodView[]): ConditionInput | undefined {
  const crashing = pods.filter(isCrashLooping).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  if (crashing.length === 0) return undefined;
  const more = crashing.length > 1 ? ` (and ${crashing.length - 1} more pods)` : '';
  return {
    type: 'WorkersReady',
    status: 'False',
    reason: WORKER_CRASH_LOOP,
    message: `${describeCrash(crashing[0])}${more}`,
  };
}
