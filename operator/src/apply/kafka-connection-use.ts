/**
 * Which Kafka connection (kafkaConnectionKey: brokers and credentials) each pipeline used last, so
 * that the per-connection clients (admin pool, topic batchers, observers) of a connection nobody
 * uses any more are closed. A Secret rotation gives a pipeline a new key; without this the clients
 * of the old credentials stayed connected for the life of the process (one leak per rotation).
 */

/** A pool of per-connection clients that can close some of them. */
export interface KafkaClientPool {
  /** Disconnects and forgets the clients of these connection keys (unknown keys are ignored). */
  drop(keys: readonly string[]): Promise<void>;
}

/** Last connection key per pipeline uid, and when each key was last used. */
export class KafkaConnectionUse {
  private readonly byPipeline = new Map<string, string>();
  private readonly lastUsed = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Pipeline `uid` uses connection `key` now (a rotation replaces its previous key). */
  record(uid: string, key: string): void {
    this.byPipeline.set(uid, key);
    this.lastUsed.set(key, this.now());
  }

  /**
   * Keys that no pipeline in `live` uses now and nobody used for `graceMs` (an operation started
   * with the old credentials just before a rotation finishes first); they are forgotten here.
   */
  retire(live: ReadonlySet<string>, graceMs: number): string[] {
    for (const uid of this.byPipeline.keys()) if (!live.has(uid)) this.byPipeline.delete(uid);
    const used = new Set(this.byPipeline.values());
    const t = this.now();
    const out: string[] = [];
    for (const [key, at] of this.lastUsed)
      if (!used.has(key) && t - at >= graceMs) {
        this.lastUsed.delete(key);
        out.push(key);
      }
    return out;
  }

  /** Keys known (tests). */
  get size(): number {
    return this.lastUsed.size;
  }
}

/** Retires the unused keys of `use` and closes their clients in every pool; returns the keys. */
export async function closeUnusedKafkaClients(
  use: KafkaConnectionUse,
  live: ReadonlySet<string>,
  graceMs: number,
  pools: readonly KafkaClientPool[],
): Promise<string[]> {
  const keys = use.retire(live, graceMs);
  if (keys.length > 0) await Promise.allSettled(pools.map((p) => p.drop(keys)));
  return keys;
}
