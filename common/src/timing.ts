/**
 * Waiting, shared by the controller loops and the worker: abortable sleeps and capped exponential
 * backoff. One definition, so every retry loop in the project jitters and stops the same way.
 */

/** Thrown by `sleepOrAbort` (and the delivery loops) when work stopped because it was abandoned. */
export class AbortError extends Error {
  constructor(message = 'batch delivery aborted') {
    super(message);
    this.name = 'AbortError';
  }
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Resolves after `ms`; rejects with AbortError when `signal` is or becomes aborted first. */
export function sleepOrAbort(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new AbortError());
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbortError());
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Capped exponential backoff policy. */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  factor: number;
}

/** Default: 200 ms doubling up to 10 s — quick recovery from blips, gentle on a down server. */
export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 200, maxMs: 10_000, factor: 2 };

/**
 * Delay before retry number `attempt` (0-based): capped exponential with "equal jitter" (half
 * fixed, half random) so many workers do not hammer a recovering server in lockstep.
 * `random` is injectable for tests.
 */
export function backoffMs(
  attempt: number,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): number {
  const exp = Math.min(policy.maxMs, policy.initialMs * Math.pow(policy.factor, Math.max(0, attempt)));
  return Math.round(exp / 2 + (random() * exp) / 2);
}
