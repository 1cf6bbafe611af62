/**
 * Per-backend limits on requests in flight (PLAN 18, decision 8). Reconciles are I/O-bound, so the
 * operator runs many at once (default concurrency 16); what must not grow with that number is the
 * load on one ClickHouse server or one Kafka cluster. Each backend key (server URL, cluster
 * identity) gets its own FIFO semaphore; callers beyond the limit wait their turn.
 */

/** Limits in flight per backend, as configured by the operator's flags. */
export interface BackendLimits {
  /** DDL statements (CREATE/ALTER/DROP/GRANT) in flight per ClickHouse server. Default 4. */
  clickhouseDdl: number;
  /** Admin operations in flight per Kafka cluster. Default 8. */
  kafkaAdmin: number;
}

/** The defaults: 4 DDL statements per ClickHouse server, 8 admin operations per Kafka cluster. */
export const DEFAULT_BACKEND_LIMITS: Readonly<BackendLimits> = { clickhouseDdl: 4, kafkaAdmin: 8 };

const limits: BackendLimits = { ...DEFAULT_BACKEND_LIMITS };

/** Sets the process-wide backend limits (main.ts, from flags); 0 or less means unlimited. */
export function configureBackendLimits(next: Partial<BackendLimits>): void {
  Object.assign(limits, next);
}

/** The current process-wide backend limits. */
export function backendLimits(): Readonly<BackendLimits> {
  return limits;
}

interface Slot {
  active: number;
  waiting: Array<() => void>;
}

/** FIFO semaphores keyed by backend; the limit is read on every acquire, so reconfiguring applies at once. */
export class InFlightLimiter {
  private readonly slots = new Map<string, Slot>();

  constructor(private readonly limit: () => number) {}

  /** Runs `fn` once fewer than the limit of calls for `key` are running. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    await this.acquire(key);
    try {
      return await fn();
    } finally {
      this.release(key);
    }
  }

  /** Calls running and waiting for `key` (tests, metrics). */
  load(key: string): { active: number; waiting: number } {
    const s = this.slots.get(key);
    return { active: s?.active ?? 0, waiting: s?.waiting.length ?? 0 };
  }

  private acquire(key: string): Promise<void> {
    let s = this.slots.get(key);
    if (!s) {
      s = { active: 0, waiting: [] };
      this.slots.set(key, s);
    }
    const max = this.limit();
    if (max <= 0 || s.active < max) {
      s.active++;
      return Promise.resolve();
    }
    const slot = s;
    return new Promise((resolve) => slot.waiting.push(resolve));
  }

  private release(key: string): void {
    const s = this.slots.get(key);
    if (!s) return;
    const next = s.waiting.shift();
    // The slot passes straight to the next waiter; `active` stays the same.
    if (next) next();
    else if (--s.active === 0) this.slots.delete(key);
  }
}
