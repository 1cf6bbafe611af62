/**
 * Values of the Secret keys the parts read (credentials, CA, signing key), cached by the Secret's
 * resourceVersion as the metadata-only Secret informer reports it: a steady reconcile reads no
 * Secret from the apiserver, and a rotated Secret (new resourceVersion) is read again on the next
 * use. Only keys actually read are kept, decoded; a deleted Secret's entry goes with its informer
 * event (`forget`), and entries not used for an hour are swept.
 */
import type { Lookup } from './children';
import type { SecretView } from '../status/views';

/** Reads one key from the apiserver (apply/kube.ts readSecretKey). */
export type SecretReader = (namespace: string, name: string, key: string) => Promise<string | undefined>;

interface Entry {
  resourceVersion: string;
  /** Decoded key values (undefined: the key is absent). */
  keys: Map<string, string | undefined>;
  usedAt: number;
}

const IDLE_MS = 3600_000;

/** Cache of decoded Secret keys, valid while the informer's resourceVersion is unchanged. */
export class SecretValues {
  private readonly entries = new Map<string, Entry>();
  /** Apiserver reads done (tests: a steady reconcile does none). */
  reads = 0;

  constructor(
    private readonly read: SecretReader,
    private readonly secrets: Lookup<SecretView>,
    private readonly now: () => number = Date.now,
  ) {}

  /** The decoded value of `key` in Secret `namespace/name` (undefined when it or the key is missing). */
  async get(namespace: string, name: string, key: string): Promise<string | undefined> {
    const id = `${namespace}/${name}`;
    const rv = this.secrets.get(namespace, name)?.metadata.resourceVersion;
    const t = this.now();
    let e = this.entries.get(id);
    // Unknown to the informer (not synced yet, or missing): always ask the apiserver.
    if (rv === undefined || !e || e.resourceVersion !== rv) {
      e = rv === undefined ? undefined : { resourceVersion: rv, keys: new Map(), usedAt: t };
      if (e) this.entries.set(id, e);
      else this.entries.delete(id);
    }
    if (e?.keys.has(key)) {
      e.usedAt = t;
      return e.keys.get(key);
    }
    this.reads++;
    const value = await this.read(namespace, name, key);
    // Keep it only if the Secret did not change while we read (the informer is the clock).
    if (e && this.secrets.get(namespace, name)?.metadata.resourceVersion === e.resourceVersion)
      e.keys.set(key, value);
    this.sweep(t);
    return value;
  }

  /** Drops a Secret's values (informer delete/update). */
  forget(namespace: string, name: string): void {
    this.entries.delete(`${namespace}/${name}`);
  }

  /** Number of cached Secrets. */
  get size(): number {
    return this.entries.size;
  }

  private sweep(t: number): void {
    for (const [id, e] of this.entries) if (t - e.usedAt > IDLE_MS) this.entries.delete(id);
  }
}
