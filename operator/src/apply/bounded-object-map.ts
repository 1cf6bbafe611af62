/**
 * A bounded map of per-pipeline memory (the Event recorder's dedup, aggregation and rate-limit
 * state) whose keys start with `<namespace>/<name>/`. Re-setting a key moves it to the end and the
 * oldest key is dropped past `max`, as before; in addition the keys are indexed by object, so
 * forgetting a deleted pipeline costs its own keys, not a scan of every key (issue 18: deleting a
 * fleet of N pipelines scanned all remembered keys per delete, O(N²)).
 */
export class BoundedObjectMap<V> {
  private readonly entries = new Map<string, V>();
  private readonly byObject = new Map<string, Set<string>>();

  constructor(private readonly max: number) {}

  /** The value of `key`, if remembered. */
  get(key: string): V | undefined {
    return this.entries.get(key);
  }

  /** Remembers `value` as the newest entry; drops the oldest entry past the bound. */
  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    const object = objectOf(key);
    let keys = this.byObject.get(object);
    if (!keys) this.byObject.set(object, (keys = new Set()));
    keys.add(key);
    if (this.entries.size > this.max) this.delete(this.entries.keys().next().value as string);
  }

  /** Drops every key of the pipeline `namespace`/`name`. */
  forget(namespace: string, name: string): void {
    const object = `${namespace}/${name}`;
    for (const key of this.byObject.get(object) ?? []) this.entries.delete(key);
    this.byObject.delete(object);
  }

  /** Entries remembered (tests). */
  get size(): number {
    return this.entries.size;
  }

  /** Objects with at least one remembered key (tests: the index holds nothing the map dropped). */
  get objects(): number {
    return this.byObject.size;
  }

  private delete(key: string): void {
    this.entries.delete(key);
    const object = objectOf(key);
    const keys = this.byObject.get(object);
    keys?.delete(key);
    if (keys?.size === 0) this.byObject.delete(object);
  }
}

/** `<namespace>/<name>` of a key (namespaces and names never contain a slash). */
function objectOf(key: string): string {
  return key.slice(0, key.indexOf('/', key.indexOf('/') + 1));
}
