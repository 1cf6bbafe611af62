/**
 * Time as the controller machinery sees it: injectable so the work queue's delays and backoffs can
 * be unit-tested deterministically.
 */

/** A cancellable timer handle. */
export interface TimerHandle {
  cancel(): void;
}

/** Current time and one-shot timers. */
export interface Clock {
  now(): number;
  setTimer(ms: number, fn: () => void): TimerHandle;
}

/** The process clock; timers are unref'd so they never keep the process alive on their own. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
};

/** A manual clock for unit tests: time moves only through `advance`. */
export class FakeClock implements Clock {
  private time = 0;
  private timers: Array<{ at: number; fn: () => void; id: number }> = [];
  private nextId = 0;

  /** Current fake time in ms. */
  now(): number {
    return this.time;
  }

  /** Registers `fn` to run once the fake time reaches now + ms. */
  setTimer(ms: number, fn: () => void): TimerHandle {
    const id = this.nextId++;
    this.timers.push({ at: this.time + Math.max(0, ms), fn, id });
    return { cancel: () => (this.timers = this.timers.filter((t) => t.id !== id)) };
  }

  /** Moves time forward by `ms`, firing due timers in time order. */
  advance(ms: number): void {
    const target = this.time + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t.id !== due.id);
      this.time = due.at;
      due.fn();
    }
    this.time = target;
  }

  /** Number of pending timers (for assertions). */
  pending(): number {
    return this.timers.length;
  }
}
