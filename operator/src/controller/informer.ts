/**
 * A list+watch informer that never gives up: it lists (paged), watches from the list's
 * resourceVersion with bookmarks, relists on 410 Gone, and after ANY error (apiserver down, TLS,
 * 5xx, a broken stream) waits with capped exponential backoff and starts over. Objects are slimmed
 * by a `transform` before they are cached, so 1000 pipelines' Deployments stay a few hundred KB.
 * Handlers run synchronously and must only enqueue keys.
 */
import type { KubeClient, WatchEvent } from '../apply/kube-rest';
import { METADATA_LIST_ACCEPT } from '../apply/kube-rest';
import { sleep } from '../../../common/src/timing';

/** The part of an object every cached item keeps. */
export interface CachedObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
}

/** Event handlers; they run on the informer's loop, so they must be quick and never throw. */
export interface InformerHandlers<T> {
  add?(obj: T): void;
  update?(oldObj: T, obj: T): void;
  delete?(obj: T): void;
}

/** What an informer watches and how it slims objects. */
export interface InformerOptions<T extends CachedObject> {
  /** Short name for logs and metrics, e.g. "deployments". */
  name: string;
  client: KubeClient;
  /** Collection path, e.g. /apis/apps/v1/namespaces/ns/deployments or /apis/apps/v1/deployments. */
  path: string;
  labelSelector?: string;
  /** List and watch PartialObjectMetadata only (used for Secrets: their data never arrives). */
  metadataOnly?: boolean;
  /** Projects a raw API object to what the cache keeps. */
  transform(raw: Record<string, unknown>): T;
  handlers?: InformerHandlers<T>;
  backoff?: { initialMs: number; maxMs: number };
  pageSize?: number;
  /** Called on every recovered error (for logs); never given object contents. */
  onError?(err: Error, attempt: number, retryInMs: number): void;
}

/** "namespace/name" (or "name" for cluster-scoped objects). */
export function objectKey(meta: { namespace?: string; name: string }): string {
  return meta.namespace ? `${meta.namespace}/${meta.name}` : meta.name;
}

class GoneError extends Error {}

/** A self-healing list+watch cache of one collection. */
export class Informer<T extends CachedObject> {
  private cache = new Map<string, T>();
  private resourceVersion = '';
  private synced = false;
  private syncWaiters: Array<() => void> = [];
  private abort = new AbortController();
  private loop?: Promise<void>;
  private eventsThisWatch = 0;
  /** Counters for metrics and tests. */
  readonly stats = { lists: 0, watches: 0, errors: 0 };

  constructor(private readonly opts: InformerOptions<T>) {}

  /** Starts the list/watch loop in the background. */
  start(): void {
    if (!this.loop) this.loop = this.run();
  }

  /** Stops the loop and waits for it to end. */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  /** The cached object, if any. */
  get(namespace: string | undefined, name: string): T | undefined {
    return this.cache.get(objectKey({ namespace, name }));
  }

  /** Every cached object. */
  list(): IterableIterator<T> {
    return this.cache.values();
  }

  /** Number of cached objects. */
  size(): number {
    return this.cache.size;
  }

  /** True once the first list has been loaded. */
  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves once the first list has been loaded. */
  waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  private async run(): Promise<void> {
    const { initialMs, maxMs } = this.opts.backoff ?? { initialMs: 200, maxMs: 30_000 };
    let failures = 0;
    let needList = true;
    while (!this.abort.signal.aborted) {
      try {
        if (needList) await this.relist();
        needList = false;
        await this.watchUntilEnd();
        failures = 0;
      } catch (err) {
        if (this.abort.signal.aborted) break;
        needList = true;
        if (err instanceof GoneError) continue; // history compacted: relist at once
        // A watch that delivered events was healthy until now: start the backoff over.
        failures = this.eventsThisWatch > 0 ? 1 : failures + 1;
        this.stats.errors++;
        const delay = Math.min(maxMs, initialMs * 2 ** (failures - 1)) * (0.8 + Math.random() * 0.4);
        this.opts.onError?.(err as Error, failures, Math.round(delay));
        await sleep(delay, this.abort.signal);
      }
    }
  }

  private async relist(): Promise<void> {
    const fresh = new Map<string, T>();
    let cont: string | undefined;
    let rv = '';
    do {
      const page = await this.opts.client.request<{
        items: Array<Record<string, unknown>>;
        metadata: { resourceVersion: string; continue?: string };
      }>('GET', this.opts.path, {
        query: { limit: this.opts.pageSize ?? 500, continue: cont, labelSelector: this.opts.labelSelector },
        accept: this.opts.metadataOnly ? METADATA_LIST_ACCEPT : undefined,
      });
      // An empty PartialObjectMetadataList comes back with items null.
      for (const raw of page.items ?? []) {
        const obj = this.opts.transform(raw);
        fresh.set(objectKey(obj.metadata), obj);
      }
      rv = page.metadata.resourceVersion;
      cont = page.metadata.continue || undefined;
    } while (cont);
    this.stats.lists++;
    this.replace(fresh);
    this.resourceVersion = rv;
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  /** Swaps in a fresh list and fires the handlers for what changed while we were not watching. */
  private replace(fresh: Map<string, T>): void {
    const old = this.cache;
    this.cache = fresh;
    const h = this.opts.handlers;
    for (const [key, obj] of fresh) {
      const prev = old.get(key);
      if (!prev) safely(() => h?.add?.(obj));
      else if (prev.metadata.resourceVersion !== obj.metadata.resourceVersion)
        safely(() => h?.update?.(prev, obj));
    }
    for (const [key, prev] of old) if (!fresh.has(key)) safely(() => h?.delete?.(prev));
  }

  private async watchUntilEnd(): Promise<void> {
    if (this.abort.signal.aborted) return;
    this.stats.watches++;
    this.eventsThisWatch = 0;
    let failure: Error | undefined;
    const query = {
      resourceVersion: this.resourceVersion,
      allowWatchBookmarks: true,
      // Spread reconnects like client-go does (5-10 min), so many watchers do not reconnect together.
      timeoutSeconds: 300 + Math.floor(Math.random() * 300),
      labelSelector: this.opts.labelSelector,
    };
    const onEvent = (e: WatchEvent) => {
      if (failure) return;
      this.eventsThisWatch++;
      if (e.type === 'ERROR') {
        const status = e.object as { code?: number; message?: string };
        failure =
          status.code === 410
            ? new GoneError('resource version too old')
            : new Error(`watch error ${status.code}: ${status.message}`);
        return;
      }
      this.apply(e);
    };
    await this.opts.client.watch(this.opts.path, query, onEvent, {
      signal: this.abort.signal,
      metadataOnly: this.opts.metadataOnly,
    });
    if (failure) throw failure;
  }

  private apply(e: WatchEvent): void {
    const meta = e.object.metadata as { resourceVersion?: string } | undefined;
    if (e.type === 'BOOKMARK') {
      if (meta?.resourceVersion) this.resourceVersion = meta.resourceVersion;
      return;
    }
    const obj = this.opts.transform(e.object);
    const key = objectKey(obj.metadata);
    const prev = this.cache.get(key);
    const h = this.opts.handlers;
    if (e.type === 'DELETED') {
      this.cache.delete(key);
      safely(() => h?.delete?.(prev ?? obj));
    } else {
      this.cache.set(key, obj);
      safely(() => (prev ? h?.update?.(prev, obj) : h?.add?.(obj)));
    }
    if (obj.metadata.resourceVersion) this.resourceVersion = obj.metadata.resourceVersion;
  }
}

function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // A handler only enqueues keys; a bug there must not stop the cache from following the server.
  }
}
