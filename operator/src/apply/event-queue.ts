/**
 * Sends Events in the background, as client-go's broadcaster does: a reconcile hands its Event
 * over and goes on (issue 18: four awaited Event POSTs sat on the critical path of every new
 * pipeline in a creation storm). The EventRecorder's dedup, aggregation and rate limit still
 * judge every Event, stamped with the time it was queued. Events of one object are sent in order
 * on one lane (a repeat must find the first one's name to count up, not create a second Event);
 * different objects use a few lanes at once. The queue is bounded: past `maxQueued` an Event is
 * dropped and counted, never blocking a reconcile. Failures are counted and logged, never thrown.
 */
import type { LogPipeline } from '../api/types';
import type { EventRecorder, EventResult } from './event-recorder';
import type { PipelineEvent } from './kube';

/** Tuning of the background sender. */
export interface EventQueueOptions {
  /** Events waiting or in flight before new ones are dropped. Default 2048. */
  maxQueued?: number;
  /** Lanes sending at once (one object always uses the same lane). Default 4. */
  lanes?: number;
  /** Called for an Event that was not recorded (failed request). */
  onFailed?: (lp: LogPipeline, ev: PipelineEvent, err: Error) => void;
  now?: () => number;
}

/** Stable lane of an object key (FNV-1a). */
function laneOf(key: string, lanes: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) % lanes;
}

/** Bounded, ordered-per-object background sender of Events through one EventRecorder. */
export class EventQueue {
  private readonly tails: Array<Promise<void>>;
  private pending = 0;
  private readonly maxQueued: number;
  private readonly now: () => number;
  private idle: Array<() => void> = [];

  constructor(
    private readonly recorder: EventRecorder,
    private readonly opts: EventQueueOptions = {},
  ) {
    this.tails = Array.from({ length: Math.max(1, opts.lanes ?? 4) }, () => Promise.resolve());
    this.maxQueued = opts.maxQueued ?? 2048;
    this.now = opts.now ?? Date.now;
  }

  /** Events queued or in flight right now. */
  size(): number {
    return this.pending;
  }

  /** Queues `ev` on `lp`; returns at once ('dropped' when the queue is full). */
  enqueue(lp: LogPipeline, ev: PipelineEvent): 'queued' | EventResult {
    if (this.pending >= this.maxQueued) {
      this.recorder.countDropped();
      return 'dropped';
    }
    const at = this.now();
    const key = `${lp.metadata.namespace}/${lp.metadata.name}`;
    const lane = laneOf(key, this.tails.length);
    this.pending++;
    this.tails[lane] = this.tails[lane].then(async () => {
      try {
        const { error } = await this.recorder.record(lp, ev, at);
        if (error) this.opts.onFailed?.(lp, ev, error);
      } catch (err) {
        this.opts.onFailed?.(lp, ev, err as Error);
      } finally {
        if (--this.pending === 0) for (const resolve of this.idle.splice(0)) resolve();
      }
    });
    return 'queued';
  }

  /** Resolves once every Event queued so far (and any queued meanwhile) was sent or failed. */
  flush(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }
}
