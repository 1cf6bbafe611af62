/**
 * One informer per watched namespace (or one cluster-wide), behind a single lookup: the operator
 * can be limited to a list of namespaces without cluster-wide list/watch permissions.
 */
import type { KubeClient } from '../apply/kube-rest';
import { collectionPath } from '../apply/kube';
import { Informer, type CachedObject, type InformerHandlers, type InformerOptions } from './informer';

/** What to watch, for every namespace of the set. */
export interface InformerSetOptions<T extends CachedObject> {
  name: string;
  kind: string;
  client: KubeClient;
  /** Empty = all namespaces (one cluster-wide watch). */
  namespaces: string[];
  labelSelector?: string;
  metadataOnly?: boolean;
  transform: InformerOptions<T>['transform'];
  handlers: InformerHandlers<T>;
  onError?: InformerOptions<T>['onError'];
}

/** A group of informers of one kind, looked up by namespace. */
export class InformerSet<T extends CachedObject> {
  private readonly byNamespace = new Map<string, Informer<T>>();

  constructor(readonly opts: InformerSetOptions<T>) {
    const namespaces = opts.namespaces.length > 0 ? opts.namespaces : [''];
    for (const ns of namespaces) {
      this.byNamespace.set(
        ns,
        new Informer<T>({
          name: opts.name,
          client: opts.client,
          path: collectionPath(opts.kind, ns),
          labelSelector: opts.labelSelector,
          metadataOnly: opts.metadataOnly,
          transform: opts.transform,
          handlers: opts.handlers,
          onError:
            opts.onError &&
            ((err, attempt, retryInMs) =>
              opts.onError?.(new Error(`${opts.name}: ${err.message}`), attempt, retryInMs)),
        }),
      );
    }
  }

  /** The cached object `namespace/name`, if watched and present. */
  get(namespace: string, name: string): T | undefined {
    return (this.byNamespace.get(namespace) ?? this.byNamespace.get(''))?.get(namespace, name);
  }

  /** Every cached object of every namespace. */
  *list(): IterableIterator<T> {
    for (const inf of this.byNamespace.values()) yield* inf.list();
  }

  /** Total cached objects. */
  size(): number {
    let n = 0;
    for (const inf of this.byNamespace.values()) n += inf.size();
    return n;
  }

  /** Starts every informer. */
  start(): void {
    for (const inf of this.byNamespace.values()) inf.start();
  }

  /** Stops every informer. */
  async stop(): Promise<void> {
    await Promise.all([...this.byNamespace.values()].map((i) => i.stop()));
  }

  /** True once every informer has listed. */
  hasSynced(): boolean {
    return [...this.byNamespace.values()].every((i) => i.hasSynced());
  }

  /** Resolves once every informer has listed. */
  async waitForSync(): Promise<void> {
    await Promise.all([...this.byNamespace.values()].map((i) => i.waitForSync()));
  }

  /** Summed list/watch/error counters. */
  stats(): { lists: number; watches: number; errors: number } {
    const s = { lists: 0, watches: 0, errors: 0 };
    for (const i of this.byNamespace.values()) {
      s.lists += i.stats.lists;
      s.watches += i.stats.watches;
      s.errors += i.stats.errors;
    }
    return s;
  }
}
