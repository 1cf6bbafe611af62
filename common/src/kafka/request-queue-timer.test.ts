/* eslint-disable @typescript-eslint/no-require-imports */
import fs from 'node:fs';
import path from 'node:path';
import { fixKafkaRequestQueueTimer, pendingCheckDelayMs } from './request-queue-timer';

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

describe('pendingCheckDelayMs', () => {
  const now = Date.parse('2026-12-04T05:00:00Z');

  it('is never negative for kafkajs’s unset throttle (-1), the source of the −1.8e12 ms warning', () => {
    // kafkajs's own delay for the same queue: minus the epoch in milliseconds.
    expect(-1 - now).toBeLessThan(-1.7e12);
    expect(pendingCheckDelayMs(-1, now)).toBe(10);
    expect(pendingCheckDelayMs(0, now)).toBe(10);
  });

  it('waits out a throttle still running, and re-checks in 10 ms once it ended', () => {
    expect(pendingCheckDelayMs(now + 250, now)).toBe(250);
    expect(pendingCheckDelayMs(now, now)).toBe(10);
    expect(pendingCheckDelayMs(now - 5, now)).toBe(10);
  });
});

describe('every kafkajs client of the repository runs with the fixed timer', () => {
  const root = path.resolve(__dirname, '../../..');
  const dirs = ['operator', 'consumer', 'common', 'scripts', 'test', 'bench'];
  const sources = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'dist' ? [] : sources(p);
      return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [p] : [];
    });

  it('installs the fix in each module that constructs a Kafka client (no TimeoutNegativeWarning)', () => {
    const files = dirs.flatMap((d) => sources(path.join(root, d)));
    const constructing = files.filter((f) => /new Kafka\(/.test(fs.readFileSync(f, 'utf8')));
    expect(constructing.length).toBeGreaterThan(5);
    const unfixed = constructing.filter((f) => {
      const text = fs.readFileSync(f, 'utf8');
      // buildKafkaConfig (operator/src/apply/kafka-client.ts) installs it for every config it builds.
      return !/registerKafkaCodecs\(\)|fixKafkaRequestQueueTimer\(|buildKafkaConfig\(/.test(text);
    });
    expect(unfixed.map((f) => path.relative(root, f))).toEqual([]);
  });

  it('has buildKafkaConfig install it', () => {
    const text = fs.readFileSync(path.join(root, 'operator/src/apply/kafka-client.ts'), 'utf8');
    const body = text.slice(text.indexOf('export function buildKafkaConfig'));
    expect(body.slice(0, body.indexOf('\n}\n'))).toMatch(/registerKafkaCodecs\(\)/);
  });
});
