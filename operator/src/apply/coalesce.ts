/**
 * A coalescing batcher: callers ask for one key each and await their own answer, while the
 * requests of everyone asking within a short window go to the backend as ONE call. During a
 * creation storm a thousand reconciles each wanting "is topic X there?" or "create topic Y"
 * cost a handful of admin requests instead of a thousand. At most one batch per batcher is in
 * flight; keys arriving meanwhile gather into the next one, so batches grow with the backend's
 * latency and the request rate stays bounded. Errors are per key: the batch function answers each
 * key with a value or an Error; a thrown batch fails only the callers of that batch.
 */

/** Answers one batch: a value or an Error per key (a key left out is an error for its caller). */
export type BatchFn<K, V> = (keys: K[]) => Promise<Map<string, V | Error>>;

/** Tuning of a batcher. */
export interface CoalesceOptions<K> {
  /** Identity of a key: callers asking for the same id in one window share one entry. */
  idOf: (key: K) => string;
  /** Wait this long after the first key of a batch before sending it. Default 10 ms. */
  gatherMs?: number;
  /** Keys per backend call; more wait for the next batch. Default 500. */
  maxBatch?: number;
}

interface Waiter<V> {
  resolve: (v: V) => void;
  reject: (e: Error) => void;
}

/** See the module comment. */
export class Coalescer<K, V> {
  private queued = new Map<string, { key: K; waiters: Array<Waiter<V>> }>();
  private timer?: ReturnType<typeof setTimeout>;
  private busy = false;
  private batches = 0;
  private readonly gatherMs: number;
  private readonly maxBatch: number;

  constructor(
    private readonly batch: BatchFn<K, V>,
    private readonly opts: CoalesceOptions<K>,
  ) {
    this.gatherMs = opts.gatherMs ?? 10;
    this.maxBatch = opts.maxBatch ?? 500;
  }

  /** Backend calls made so far (tests pin "N keys, few calls" with it). */
  batchCount(): number {
    return this.batches;
  }

  /** The answer for `key`, from the next batch. */
  get(key: K): Promise<V> {
    return new Promise<V>((resolve, reject) => {
      const id = this.opts.idOf(key);
      const entry = this.queued.get(id);
      // Same id in one window: the latest key is sent (a newer owner record replaces an older one).
      if (entry) {
        entry.key = key;
        entry.waiters.push({ resolve, reject });
      } else this.queued.set(id, { key, waiters: [{ resolve, reject }] });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.busy || this.timer || this.queued.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.gatherMs);
  }

  private async flush(): Promise<void> {
    const taken = [...this.queued].slice(0, this.maxBatch);
    for (const [id] of taken) this.queued.delete(id);
    this.busy = true;
    this.batches++;
    try {
      const answers = await this.batch(taken.map(([, e]) => e.key));
      for (const [id, { waiters }] of taken) {
        const a = answers.get(id);
        for (const w of waiters) {
          if (a instanceof Error) w.reject(a);
          else if (a === undefined && !answers.has(id)) w.reject(new Error(`no answer for ${id}`));
          else w.resolve(a as V);
        }
      }
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      for (const [, { waiters }] of taken) for (const w of waiters) w.reject(e);
    } finally {
      this.busy = false;
      this.schedule();
    }
  }
}
