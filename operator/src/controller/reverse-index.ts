/**
 * Names by the keys they reference, and back (a pipeline by the Secrets it names, by the topics and
 * table it claims): kept current by the pipeline informer's handlers, so a lookup by key reads the
 * few names sharing it instead of scanning every cached pipeline.
 */

/** Names by key; `set` replaces a name's keys, `remove` forgets the name. */
export class ReverseIndex {
  private readonly byKey = new Map<string, Set<string>>();
  private readonly keysOf = new Map<string, readonly string[]>();

  /** Records (or replaces) the keys `name` references. */
  set(name: string, keys: readonly string[]): void {
    this.remove(name);
    this.keysOf.set(name, keys);
    for (const k of keys) {
      let names = this.byKey.get(k);
      if (!names) this.byKey.set(k, (names = new Set()));
      names.add(name);
    }
  }

  /** Forgets `name` and its keys. */
  remove(name: string): void {
    for (const k of this.keysOf.get(name) ?? []) {
      const names = this.byKey.get(k);
      names?.delete(name);
      if (names?.size === 0) this.byKey.delete(k);
    }
    this.keysOf.delete(name);
  }

  /** The names referencing any of `keys`, once each. */
  namesFor(keys: readonly string[]): string[] {
    const names = new Set<string>();
    for (const k of keys) for (const n of this.byKey.get(k) ?? []) names.add(n);
    return [...names];
  }
}
