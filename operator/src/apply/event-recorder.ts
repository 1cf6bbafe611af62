/**
 * Records Events on LogPipelines the way client-go's EventCorrelator does, so a pipeline that
 * keeps failing the same way writes one Event whose count grows instead of a new object per
 * reconcile:
 *  - dedup: the same (object, type, reason, message) seen within 10 min PATCHes the existing
 *    Event's count and lastTimestamp;
 *  - aggregation: 10 or more distinct messages of the same (object, type, reason) within 10 min
 *    become one "(combined from similar events)" Event, deduplicated as above;
 *  - spam filter: a token bucket per (object, reason) (burst 25, one token per 10 s) drops the
 *    rest. client-go keys it by object alone and refills one per 5 min, but one LogPipeline stands
 *    for a whole pipeline (every condition flip and every scale is an Event): a busy, healthy
 *    pipeline would lose its scale Events to its own rollout Events. Per reason, a flapping cause
 *    is still bounded (6 per minute) without silencing the others.
 * Events are best effort: failures are returned, never thrown.
 */
import { PatchStrategy } from './kube-lib';
import type { LogPipeline } from '../api/types';
import { collectionPath, eventBody, objectPath, type PipelineEvent } from './kube';
import { isStatus, type KubeClient } from './kube-rest';
import { CountMap } from './request-counts';
import { BoundedObjectMap } from './bounded-object-map';

/** Tuning of the correlator; the defaults are client-go's. */
export interface EventRecorderOptions {
  /** Window of dedup and aggregation. Default 10 min. */
  windowMs?: number;
  /** Distinct messages of one reason within the window before they are combined. Default 10. */
  aggregateAfter?: number;
  /** Token bucket per object: burst and refill interval. Defaults 25 and 10 s. */
  burst?: number;
  refillMs?: number;
  /** Most remembered keys (oldest dropped first). Default 4096. */
  maxKeys?: number;
  now?: () => number;
}

/** What became of one Event. */
export type EventResult = 'created' | 'aggregated' | 'dropped' | 'failed';

/** Prefix of a combined Event's message, as client-go writes it. */
export const COMBINED_PREFIX = '(combined from similar events): ';

interface Logged {
  name: string;
  count: number;
  firstTimestamp: string;
  lastSeen: number;
}
interface Similar {
  messages: Set<string>;
  since: number;
}
interface Bucket {
  tokens: number;
  at: number;
}

/** Events recorded by every recorder of this process, by result (exported as metrics). */
export const eventResults = new CountMap();

/** Deduplicating, aggregating, rate-limited Event writer; one per operator instance. */
export class EventRecorder {
  private readonly logged: BoundedObjectMap<Logged>;
  private readonly similar: BoundedObjectMap<Similar>;
  private readonly buckets: BoundedObjectMap<Bucket>;
  private readonly counts: Record<EventResult, number> = { created: 0, aggregated: 0, dropped: 0, failed: 0 };
  private readonly windowMs: number;
  private readonly aggregateAfter: number;
  private readonly burst: number;
  private readonly refillMs: number;
  private readonly maxKeys: number;
  private readonly now: () => number;

  constructor(
    private readonly client: KubeClient,
    private readonly instance: string,
    opts: EventRecorderOptions = {},
  ) {
    this.windowMs = opts.windowMs ?? 600_000;
    this.aggregateAfter = opts.aggregateAfter ?? 10;
    this.burst = opts.burst ?? 25;
    this.refillMs = opts.refillMs ?? 10_000;
    this.maxKeys = opts.maxKeys ?? 4096;
    this.logged = new BoundedObjectMap(this.maxKeys);
    this.similar = new BoundedObjectMap(this.maxKeys);
    this.buckets = new BoundedObjectMap(this.maxKeys);
    this.now = opts.now ?? Date.now;
  }

  /** Events by result since start (for metrics and tests). */
  stats(): Readonly<Record<EventResult, number>> {
    return { ...this.counts };
  }

  /** An Event dropped before it reached the recorder (the background queue was full). */
  countDropped(): void {
    this.done('dropped');
  }

  /**
   * Records `ev` on `lp` as seen at `at` (default now; the background queue passes the time it was
   * queued); see the module comment. Returns what happened and the error, if any.
   */
  async record(
    lp: LogPipeline,
    ev: PipelineEvent,
    at?: number,
  ): Promise<{ result: EventResult; error?: Error }> {
    const t = at ?? this.now();
    const object = `${lp.metadata.namespace}/${lp.metadata.name}/${lp.metadata.uid ?? ''}`;
    if (!this.takeToken(`${object}\u0000${ev.reason}`, t)) return this.done('dropped');
    const combined = this.aggregate(object, ev, t);
    const message = combined ? `${COMBINED_PREFIX}${ev.message}` : ev.message;
    // A combined Event is one object per reason, whatever the latest message says (client-go).
    const key = `${object}\u0000${ev.type}\u0000${ev.reason}\u0000${combined ? COMBINED_PREFIX : ev.message}`;
    const prev = this.logged.get(key);
    try {
      if (prev && prev.name && t - prev.lastSeen < this.windowMs) {
        const patched = await this.patch(lp, prev, t);
        if (patched) {
          this.logged.set(key, { ...prev, count: prev.count + 1, lastSeen: t });
          return this.done('aggregated');
        }
      }
      const name = await this.create(lp, { ...ev, message }, t);
      this.logged.set(key, { name, count: 1, firstTimestamp: iso(t), lastSeen: t });
      return this.done('created');
    } catch (err) {
      return { ...this.done('failed'), error: err as Error };
    }
  }

  /** Forgets a deleted pipeline's keys. */
  forget(namespace: string, name: string): void {
    for (const map of [this.logged, this.similar, this.buckets]) map.forget(namespace, name);
  }

  private done(result: EventResult): { result: EventResult } {
    this.counts[result]++;
    eventResults.inc(result);
    return { result };
  }

  private takeToken(object: string, t: number): boolean {
    const b = this.buckets.get(object) ?? { tokens: this.burst, at: t };
    const refilled = Math.floor((t - b.at) / this.refillMs);
    const next = refilled > 0 ? { tokens: Math.min(this.burst, b.tokens + refilled), at: t } : b;
    if (next.tokens < 1) {
      this.buckets.set(object, next);
      return false;
    }
    this.buckets.set(object, { ...next, tokens: next.tokens - 1 });
    return true;
  }

  /** True once this reason got noisy on this object (too many distinct messages in the window). */
  private aggregate(object: string, ev: PipelineEvent, t: number): boolean {
    const key = `${object}\u0000${ev.type}\u0000${ev.reason}`;
    let s = this.similar.get(key);
    if (!s || t - s.since >= this.windowMs) s = { messages: new Set(), since: t };
    if (s.messages.size < this.aggregateAfter) s.messages.add(ev.message);
    this.similar.set(key, s);
    return s.messages.size >= this.aggregateAfter;
  }

  /** PATCHes count and lastTimestamp; false when the Event is gone (expired by its TTL). */
  private async patch(lp: LogPipeline, prev: Logged, t: number): Promise<boolean> {
    try {
      await this.client.request('PATCH', objectPath('Event', lp.metadata.namespace, prev.name), {
        body: { count: prev.count + 1, lastTimestamp: iso(t) },
        contentType: PatchStrategy.MergePatch,
      });
      return true;
    } catch (err) {
      if (isStatus(err, 404)) return false;
      throw err;
    }
  }

  private async create(lp: LogPipeline, ev: PipelineEvent, t: number): Promise<string> {
    const body = eventBody(lp, ev, this.instance, iso(t));
    const made = await this.client.request<{ metadata?: { name?: string } }>(
      'POST',
      collectionPath('Event', lp.metadata.namespace),
      { body },
    );
    return made?.metadata?.name ?? '';
  }
}

function iso(t: number): string {
  return new Date(t).toISOString();
}
