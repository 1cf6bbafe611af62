/**
 * The ChainLinked condition of every pipeline with integrity (what it says: chain-refusals.ts and
 * docs/compliance.md "Left unlinked, and why"). A pipeline's first reconcile reads its condition at
 * once; after that a background round every 2 minutes reads all watched pipelines, one UNION ALL
 * query per ClickHouse server and user, and only a changed condition queues that pipeline's
 * reconcile (which writes it and, on a flip to False, the Warning Event). A steady fleet therefore
 * costs one small query per server per round and no reconciles, as the autoscaler's sampling does.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { ResolvedSpec } from '../api/defaults';
import type { ConditionInput } from '../status/conditions';
import { CHAIN_WINDOW_MS, notChecked, readChainConditions } from './chain-refusals';

/** How often the background round reads the watched pipelines' checkpoints. */
export const CHAIN_CHECK_MS = 120_000;
/** A pipeline not reconciled for this long (deleted, or another leader's) is no longer watched. */
const FORGET_MS = 30 * 60_000;

/** Options of ChainWatch (tests shorten the interval). */
export interface ChainWatchOptions {
  intervalMs?: number;
  windowMs?: number;
  now?: () => number;
  /** Called with `namespace/name` when a round changes a pipeline's condition (queues its reconcile). */
  onChange?: (key: string) => void;
  /** Whether rounds should run now (the leader); default always. */
  active?: () => boolean;
}

interface Watched {
  spec: ResolvedSpec;
  connect: () => Promise<ClickHouseClient>;
  condition?: ConditionInput;
  seenAtMs: number;
}

/** Watches the ChainLinked condition of the pipelines it is asked about. */
export class ChainWatch {
  private readonly watched = new Map<string, Watched>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(private readonly opts: ChainWatchOptions = {}) {}

  /**
   * The pipeline's condition: the last one read, or read now on its first reconcile; undefined
   * without integrity. `connect` gives its ClickHouse client (kept for the rounds). Never throws.
   */
  async evaluate(
    spec: ResolvedSpec,
    connect: () => Promise<ClickHouseClient>,
  ): Promise<ConditionInput | undefined> {
    const key = `${spec.namespace}/${spec.name}`;
    if (!spec.integrity.enabled) {
      this.watched.delete(key);
      return undefined;
    }
    // Updated in place: a round in flight keeps writing to the entry this pipeline reads.
    const entry: Watched = this.watched.get(key) ?? { spec, connect, seenAtMs: 0 };
    Object.assign(entry, { spec, connect, seenAtMs: this.now() });
    this.watched.set(key, entry);
    this.start();
    if (!entry.condition) entry.condition = await this.readOne(entry);
    return entry.condition;
  }

  /** One round: every watched pipeline, batched per ClickHouse client; changes queue reconciles. */
  async round(): Promise<void> {
    if (this.running || (this.opts.active && !this.opts.active())) return;
    this.running = true;
    try {
      const now = this.now();
      const groups = new Map<ClickHouseClient, Array<[string, Watched]>>();
      for (const [key, w] of this.watched) {
        if (now - w.seenAtMs > FORGET_MS) {
          this.watched.delete(key);
          continue;
        }
        const client = await w.connect().catch((err: unknown) => this.update(key, w, notChecked(err)));
        if (!client) continue;
        const group = groups.get(client) ?? [];
        group.push([key, w]);
        groups.set(client, group);
      }
      for (const [client, group] of groups) {
        const specs = group.map(([, w]) => w.spec);
        const conditions = await readChainConditions(client, specs, this.opts.windowMs ?? CHAIN_WINDOW_MS);
        group.forEach(([key, w], i) => this.update(key, w, conditions[i]));
      }
    } finally {
      this.running = false;
    }
  }

  /** Stops the rounds (operator shutdown). */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private start(): void {
    if (this.timer) return;
    this.timer = setInterval(
      () => void this.round().catch(() => undefined),
      this.opts.intervalMs ?? CHAIN_CHECK_MS,
    );
    this.timer.unref();
  }

  private async readOne(w: Watched): Promise<ConditionInput> {
    try {
      const [condition] = await readChainConditions(
        await w.connect(),
        [w.spec],
        this.opts.windowMs ?? CHAIN_WINDOW_MS,
      );
      return condition;
    } catch (err) {
      return notChecked(err);
    }
  }

  /** Records `next` and queues the pipeline's reconcile when it differs from what was reported. */
  private update(key: string, w: Watched, next: ConditionInput): undefined {
    const before = w.condition;
    w.condition = next;
    const same =
      before?.status === next.status && before.reason === next.reason && before.message === next.message;
    if (!same && this.watched.get(key) === w) this.opts.onChange?.(key);
    return undefined;
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }
}
