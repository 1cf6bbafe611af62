/**
 * Backpressure primitives. `ByteBudget` bounds the memory held for data not yet in ClickHouse
 * (message bytes of open and in-flight batches plus their encoded bodies): when it is spent, the
 * consumer stops taking messages, so a ClickHouse outage stalls fetching instead of growing the
 * heap. `Slots` bounds concurrent INSERTs. Both wake waiters on release; no timers of their own.
 */

/** Counts bytes held against a cap and lets callers wait for room. */
export class ByteBudget {
  private used = 0;
  private waiters: Array<() => void> = [];

  /** `limit` is the cap in bytes; adding past it is allowed (one message or batch may overshoot). */
  constructor(readonly limit: number) {}

  /** Bytes currently held. */
  get bytes(): number {
    return this.used;
  }

  /** True while usage is at or above the cap. */
  exhausted(): boolean {
    return this.used >= this.limit;
  }

  /** Records `n` more bytes held. */
  add(n: number): void {
    this.used += n;
  }

  /** Releases `n` bytes and wakes every waiter (they re-check their own condition). */
  release(n: number): void {
    this.used -= n;
    if (this.used < 0) this.used = 0;
    this.wake();
  }

  /** Resolves at the next release or wake(), or after `maxWaitMs` (callers loop and re-check). */
  changed(maxWaitMs: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, maxWaitMs);
      const waiters = this.waiters;
      function done() {
        clearTimeout(timer);
        const i = waiters.indexOf(done);
        if (i >= 0) waiters.splice(i, 1);
        resolve();
      }
      waiters.push(done);
    });
  }

  /** Wakes all waiters without releasing anything (state they wait on changed elsewhere). */
  wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}

/** A counting semaphore with FIFO order. */
export class Slots {
  private free: number;
  private queue: Array<() => void> = [];

  /** `count` concurrent holders at most. */
  constructor(count: number) {
    this.free = count;
  }

  /** Resolves when a slot is held; call the returned function exactly once to release it. */
  async acquire(): Promise<() => void> {
    if (this.free > 0) {
      this.free--;
    } else {
      await new Promise<void>((resolve) => this.queue.push(resolve));
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.queue.shift();
      if (next) next();
      else this.free++;
    };
  }
}

/** What an INSERT attempt must hold, and hears how it went (see PartitionGate). */
export interface InsertGate {
  /** Resolves when the attempt may run; call the returned function once it is over. */
  acquire(): Promise<() => void>;
  /** The attempt failed because the sink is unavailable (it will be retried after a backoff). */
  failed(): void;
  /** The attempt got the server's answer (stored, or a verdict on the data). */
  succeeded(): void;
}

/**
 * One partition's access to the shared INSERT slots. Slots are held per attempt, never across a
 * backoff; and while the partition's inserts fail (sink unavailable for it), at most one of its
 * batches retries at a time, so a stuck partition holds one slot at most and the others' batches
 * keep flowing.
 */
export class PartitionGate implements InsertGate {
  private failing = false;
  private readonly lane = new Slots(1);

  /** `slots` are the worker's shared INSERT slots. */
  constructor(private readonly slots: Slots) {}

  /** Waits for the partition's lane (only while failing), then for a shared slot. */
  async acquire(): Promise<() => void> {
    const lane = this.failing ? await this.lane.acquire() : undefined;
    const slot = await this.slots.acquire();
    return () => {
      slot();
      lane?.();
    };
  }

  /** Marks the partition failing: its attempts go one at a time. */
  failed(): void {
    this.failing = true;
  }

  /** Clears the failing mark. */
  succeeded(): void {
    this.failing = false;
  }
}
