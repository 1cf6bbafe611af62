/* eslint-disable @typescript-eslint/no-require-imports */
import { fixKafkaRequestQueueTimer } from './request-queue-timer';

interface Queue {
  pending: unknown[];
  inflight: Map<number, unknown>;
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  maxInFlightRequests: number;
  checkPendingRequests(): void;
  destroy(): void;
}

type QueueClass = new (o: object) => Queue;
const RequestQueue = require('kafkajs/src/network/requestQueue') as QueueClass;
const original = (RequestQueue.prototype as unknown as Record<string, unknown>).scheduleCheckPendingRequests;
const logger = { debug: () => undefined, warn: () => undefined, error: () => undefined };

function queue(): Queue {
  const q = new RequestQueue({
    maxInFlightRequests: 1,
    requestTimeout: 30_000,
    clientId: 't',
    broker: 'b',
    logger,
  });
  return q;
}

/** A request the queue sends by calling `send` (and then holds in flight). */
function request(sent: number[], id: number) {
  return { correlationId: id, send: () => sent.push(id), expectResponse: true };
}

describe('kafkajs request-queue timer', () => {
  afterEach(() => jest.useRealTimers());

  it('shows the defect first: kafkajs’s own queue keeps a 1 ms timer armed with nothing pending', () => {
    jest.useFakeTimers();
    const q = queue();
    (q as unknown as Record<string, unknown>).scheduleCheckPendingRequests = original;
    q.checkPendingRequests();
    expect(q.pending).toHaveLength(0);
    expect(q.throttleCheckTimeoutId).not.toBeNull();
    const check = jest.spyOn(q, 'checkPendingRequests');
    jest.advanceTimersByTime(100);
    // Re-armed on every run: about one check per millisecond, forever.
    expect(check.mock.calls.length).toBeGreaterThanOrEqual(50);
    q.destroy();
  });

  it('arms no timer while the queue is empty', () => {
    fixKafkaRequestQueueTimer();
    jest.useFakeTimers();
    const q = queue();
    const check = jest.spyOn(q, 'checkPendingRequests');
    q.checkPendingRequests();
    expect(q.throttleCheckTimeoutId).toBeNull();
    jest.advanceTimersByTime(1_000);
    expect(check).toHaveBeenCalledTimes(1);
    q.destroy();
  });

  it('sends a throttled request when the throttle ends, then stops checking', () => {
    fixKafkaRequestQueueTimer();
    jest.useFakeTimers({ now: 1_000_000 });
    const q = queue();
    const sent: number[] = [];
    q.throttledUntil = Date.now() + 250;
    q.pending.push(request(sent, 7));
    q.checkPendingRequests();
    expect(sent).toEqual([]);
    jest.advanceTimersByTime(249);
    expect(sent).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(sent).toEqual([7]);
    expect(q.pending).toHaveLength(0);
    expect(q.throttleCheckTimeoutId).toBeNull();
    q.destroy();
  });

  it('re-checks every 10 ms (kafkajs’s interval) while the in-flight limit holds requests back', () => {
    fixKafkaRequestQueueTimer();
    jest.useFakeTimers();
    const q = queue();
    const sent: number[] = [];
    q.inflight.set(1, {});
    q.pending.push(request(sent, 2));
    q.checkPendingRequests();
    expect(q.throttleCheckTimeoutId).not.toBeNull();
    jest.advanceTimersByTime(30);
    expect(sent).toEqual([]);
    q.inflight.delete(1);
    jest.advanceTimersByTime(10);
    expect(sent).toEqual([2]);
    expect(q.throttleCheckTimeoutId).toBeNull();
    q.destroy();
  });
});
