/**
 * The controller work queue (client-go semantics): keys are deduplicated, a key is never handed
 * to two workers at once (a key added while it is processed is queued again when `done`), retries
 * wait max(per-key exponential backoff, overall token bucket), and `addAfter` schedules timed work.
 */
import { realClock, type Clock, type TimerHandle } from './clock';

/** Tuning of the queue; every field has a production default. */
export interface WorkQueueOptions {
  clock?: Clock;
  /** First retry delay of a failing key. Default 5 ms. */
  baseDelayMs?: number;
  /** Cap of the per-key backoff. Default 5 min. */
  maxDelayMs?: number;
  /** Overall retry rate (tokens per second) and bucket size. Default 10/s, burst 100. */
  qps?: number;
  burst?: number;
  /**
   * Which lane a key waits in: `fast` (keys this operator already reconciled: updates, autoscaler
   * polls, the second pass of a new pipeline) or `bulk` (never reconciled: a storm of creations,
   * every key after a restart). Default: every key is fast (one FIFO).
   */
  laneOf?: (key: string) => 'fast' | 'bulk';
  /** Fast keys handed out in a row before a waiting bulk key gets its turn. Default 3. */
  fastBurst?: number;
  /** Called when a key is handed to a worker: how long it waited since it was added, and its lane (metrics). */
  onHandOut?: (waitedMs: number, lane: 'fast' | 'bulk') => void;
}

/** Token bucket that hands out reservations: how long a caller must wait for its token. */
class TokenBucket {
  private tokens: number;
  private last: number;
  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly clock: Clock,
  ) {
    this.tokens = burst;
    this.last = clock.now();
  }

  reserve(): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.qps) / 1000);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.qps;
  }
}

/** Min-heap of (readyAt, key) with lazy deletion (the `waiting` map is authoritative). */
class DelayHeap {
  private items: Array<{ at: number; key: string }> = [];
  push(at: number, key: string): void {
    const a = this.items;
    a.push({ at, key });
    for (let i = a.length - 1; i > 0;) {
      const p = (i - 1) >> 1;
      if (a[p].at <= a[i].at) break;
      [a[p], a[i]] = [a[i], a[p]];
      i = p;
    }
  }
  peek(): { at: number; key: string } | undefined {
    return this.items[0];
  }
  pop(): void {
    const a = this.items;
    const last = a.pop();
    if (!last || a.length === 0) return;
    a[0] = last;
    for (let i = 0; ;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && a[l].at < a[m].at) m = l;
      if (r < a.length && a[r].at < a[m].at) m = r;
      if (m === i) break;
      [a[m], a[i]] = [a[i], a[m]];
      i = m;
    }
  }
  clear(): void {
    this.items = [];
  }
}

/** A deduplicating, rate-limited, delaying work queue of string keys. */
export class WorkQueue {
  private readonly clock: Clock;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly bucket: TokenBucket;
  private fast: string[] = [];
  private bulk: string[] = [];
  private fastInRow = 0;
  private readonly laneOf?: (key: string) => 'fast' | 'bulk';
  private readonly fastBurst: number;
  private readonly dirty = new Set<string>();
  /** When each dirty key was added (queue wait time). */
  private readonly addedAt = new Map<string, number>();
  private readonly onHandOut?: (waitedMs: number, lane: 'fast' | 'bulk') => void;
  private readonly processing = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly waiting = new Map<string, number>();
  private readonly heap = new DelayHeap();
  private timer?: TimerHandle;
  private timerAt = Infinity;
  private getters: Array<(key: string | undefined) => void> = [];
  private drainers: Array<() => void> = [];
  private shuttingDown = false;

  constructor(opts: WorkQueueOptions = {}) {
    this.clock = opts.clock ?? realClock;
    this.baseDelayMs = opts.baseDelayMs ?? 5;
    this.maxDelayMs = opts.maxDelayMs ?? 300_000;
    this.bucket = new TokenBucket(opts.qps ?? 10, opts.burst ?? 100, this.clock);
    this.laneOf = opts.laneOf;
    this.fastBurst = opts.fastBurst ?? 3;
    this.onHandOut = opts.onHandOut;
  }

  private push(key: string): void {
    if (this.laneOf?.(key) === 'bulk') this.bulk.push(key);
    else this.fast.push(key);
  }

  /** Fast keys first, but a waiting bulk key after every `fastBurst` fast ones (no starvation). */
  private shift(): string | undefined {
    if (this.fast.length > 0 && (this.bulk.length === 0 || this.fastInRow < this.fastBurst)) {
      this.fastInRow++;
      return this.fast.shift();
    }
    this.fastInRow = 0;
    return this.bulk.shift() ?? this.fast.shift();
  }

  /** Marks `key` as needing work; a no-op if it is already queued or after shutdown. */
  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    this.addedAt.set(key, this.clock.now());
    if (this.processing.has(key)) return; // `done` queues it again
    const getter = this.getters.shift();
    if (getter) this.handOut(key, getter);
    else this.push(key);
  }

  /** Adds `key` after `delayMs`; an earlier pending schedule of the same key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) return this.add(key);
    const at = this.clock.now() + delayMs;
    const current = this.waiting.get(key);
    if (current !== undefined && current <= at) return;
    this.waiting.set(key, at);
    this.heap.push(at, key);
    this.armTimer();
  }

  /** Re-adds a failed key after max(its exponential backoff, the overall bucket's delay). */
  addRateLimited(key: string): void {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const itemDelay = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** n);
    this.addAfter(key, Math.max(itemDelay, this.bucket.reserve()));
  }

  /** Clears the failure history of `key` (call after a successful reconcile). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** How many times `key` has been re-added by `addRateLimited` since its last `forget`. */
  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Next key to process; waits for one; resolves undefined once the queue is shut down. */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const key = this.shift();
    if (key !== undefined) {
      this.dirty.delete(key);
      this.processing.add(key);
      this.handedOut(key);
      return Promise.resolve(key);
    }
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Ends processing of `key`; if it was added meanwhile it is queued again. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.shuttingDown) {
      const getter = this.getters.shift();
      if (getter) this.handOut(key, getter);
      else this.push(key);
    }
    if (this.processing.size === 0) for (const d of this.drainers.splice(0)) d();
  }

  /** Keys ready to be processed. */
  len(): number {
    return this.fast.length + this.bulk.length;
  }

  /** Keys ready to be processed, by lane. */
  laneLens(): { fast: number; bulk: number } {
    return { fast: this.fast.length, bulk: this.bulk.length };
  }

  /** Keys scheduled for later (delays and backoffs). */
  waitingLen(): number {
    return this.waiting.size;
  }

  /** Keys being processed right now. */
  processingLen(): number {
    return this.processing.size;
  }

  /** Stops handing out keys (queued ones are dropped) and resolves once in-flight keys are done. */
  shutDownWithDrain(): Promise<void> {
    this.shuttingDown = true;
    this.timer?.cancel();
    this.timer = undefined;
    this.waiting.clear();
    this.heap.clear();
    this.fast = [];
    this.bulk = [];
    this.addedAt.clear();
    for (const g of this.getters.splice(0)) g(undefined);
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainers.push(resolve));
  }

  private handOut(key: string, getter: (key: string) => void): void {
    this.dirty.delete(key);
    this.processing.add(key);
    this.handedOut(key);
    getter(key);
  }

  private handedOut(key: string): void {
    const at = this.addedAt.get(key);
    this.addedAt.delete(key);
    if (at !== undefined) this.onHandOut?.(this.clock.now() - at, this.laneOf?.(key) ?? 'fast');
  }

  private armTimer(): void {
    const top = this.heap.peek();
    if (!top || top.at >= this.timerAt) return;
    this.timer?.cancel();
    this.timerAt = top.at;
    this.timer = this.clock.setTimer(top.at - this.clock.now(), () => this.fireDue());
  }

  private fireDue(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.clock.now();
    for (let top = this.heap.peek(); top && top.at <= now; top = this.heap.peek()) {
      this.heap.pop();
      if (this.waiting.get(top.key) !== top.at) continue; // superseded by an earlier schedule
      this.waiting.delete(top.key);
      this.add(top.key);
    }
    this.armTimer();
  }
}
