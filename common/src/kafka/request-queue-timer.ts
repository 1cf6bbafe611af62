/**
 * A fix for kafkajs 2.2.4's request queue timer. `checkPendingRequests` always ends by calling
 * `scheduleCheckPendingRequests`, which — with nothing pending and no throttling — arms
 * `setTimeout(fn, throttledUntil - now)`: a negative delay that Node clamps to 1 ms (and, since
 * Node 24, reports as a TimeoutNegativeWarning). The timer calls `checkPendingRequests` again, so
 * every broker connection that ever got a response keeps a 1 ms timer running for its whole life:
 * about a thousand event-loop wake-ups per second per connection, busy or idle. The replacement
 * arms the timer only while requests wait in the queue, with kafkajs's own delays (until the
 * throttle ends, else its 10 ms re-check); with an empty queue there is nothing to check, and
 * `push` re-arms it as soon as a request has to wait.
 */
/* eslint-disable @typescript-eslint/no-require-imports */

const REQUEST_QUEUE = 'kafkajs/src/network/requestQueue';
/** kafkajs's CHECK_PENDING_REQUESTS_INTERVAL (not exported). */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;

/** The fields of kafkajs's RequestQueue the timer reads and writes. */
interface RequestQueueLike {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
}

/**
 * The delay of the next queue check: the time left of a broker's throttle, else kafkajs's 10 ms
 * re-check. Never negative: kafkajs starts `throttledUntil` at -1, so its own `throttledUntil - now`
 * is about minus the epoch in milliseconds (the −1.8e12 ms TimeoutNegativeWarning).
 */
export function pendingCheckDelayMs(throttledUntil: number, now: number): number {
  const untilThrottleEnds = throttledUntil - now;
  return untilThrottleEnds > 0 ? untilThrottleEnds : CHECK_PENDING_REQUESTS_INTERVAL_MS;
}

/** Arms the queue's re-check only while a request waits (see the module comment). */
export function scheduleCheckPendingRequests(this: RequestQueueLike): void {
  if (this.throttleCheckTimeoutId || this.pending.length === 0) return;
  this.throttleCheckTimeoutId = setTimeout(
    () => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    },
    pendingCheckDelayMs(this.throttledUntil, Date.now()),
  );
}

let original: unknown;

/**
 * Installs the fixed timer on kafkajs's RequestQueue (process-wide, idempotent); `enabled=false`
 * puts kafkajs's own back (A/B runs of bench/e2e-kafka.ts).
 */
export function fixKafkaRequestQueueTimer(enabled = true): void {
  const proto = (require(REQUEST_QUEUE) as { prototype: Record<string, unknown> }).prototype;
  original ??= proto.scheduleCheckPendingRequests;
  proto.scheduleCheckPendingRequests = enabled ? scheduleCheckPendingRequests : original;
}
