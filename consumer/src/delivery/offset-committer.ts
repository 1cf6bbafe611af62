/**
 * Serialises and coalesces offset commits. Each commit carries, per partition, the contiguous
 * watermark and the cut journal. A batch may only be inserted after a commit that journals it
 * succeeded (`flush`), and a watermark advances only through commits. While the group
 * rebalances the committer is fenced: nothing is sent until the new assignment is installed, so
 * a revoked partition's stale state can never overwrite its new owner's journal.
 */
import { AbortError, backoffMs } from '../../../common/src/timing';
import type { PartitionCommit, PartitionState } from './partition-state';

/** Sends one commit; must throw unless the broker accepted it. */
export type CommitSender = (offsets: PartitionCommit[]) => Promise<void>;

interface Waiter {
  state: PartitionState;
  version: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

/** Kafka error types that mean "this generation is over": wait for the next assignment. */
const GENERATION_ERRORS = new Set([
  'REBALANCE_IN_PROGRESS',
  'ILLEGAL_GENERATION',
  'UNKNOWN_MEMBER_ID',
  'FENCED_INSTANCE_ID',
]);

/** Coalescing, fenced committer for one consumer. */
export class OffsetCommitter {
  private dirty = new Set<PartitionState>();
  private waiters: Waiter[] = [];
  private running = false;
  private fenced = true;
  private failures = 0;
  private wakeFence: (() => void) | null = null;

  /** `onResult` observes every attempt (metrics/logs). */
  constructor(
    private readonly send: CommitSender,
    private readonly onResult: (ok: boolean, err?: unknown) => void = () => undefined,
  ) {}

  /** Resolves once a commit carrying `state` as it is now succeeded; rejects AbortError if it dies first. */
  flush(state: PartitionState): Promise<void> {
    if (!state.alive) return Promise.reject(new AbortError());
    if (state.committedVersion >= state.version) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ state, version: state.version, resolve, reject });
      this.dirty.add(state);
      void this.loop();
    });
  }

  /** Stops sending (a rebalance started). */
  fence(): void {
    this.fenced = true;
  }

  /** Resumes sending (the new assignment is installed); drops dead states and their waiters. */
  unfence(): void {
    this.fenced = false;
    this.reap();
    this.wakeFence?.();
    void this.loop();
  }

  /** Rejects waiters of states that died (revoked partitions) and forgets those states. */
  reap(): void {
    for (const s of this.dirty) if (!s.alive) this.dirty.delete(s);
    const keep: Waiter[] = [];
    for (const w of this.waiters) {
      if (w.state.alive) keep.push(w);
      else w.reject(new AbortError());
    }
    this.waiters = keep;
  }

  private async loop(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.dirty.size > 0) {
        if (this.fenced) {
          await new Promise<void>((r) => (this.wakeFence = r));
          this.wakeFence = null;
          continue;
        }
        await this.commitOnce();
      }
    } finally {
      this.running = false;
    }
  }

  private async commitOnce(): Promise<void> {
    this.reap();
    const states = [...this.dirty];
    this.dirty.clear();
    if (states.length === 0) return;
    const err = await this.sendStates(states);
    if (err === null) return;
    const type = (err as { type?: string }).type;
    if (type && GENERATION_ERRORS.has(type)) {
      for (const s of states) if (s.alive) this.dirty.add(s);
      this.fenced = true;
      return;
    }
    // One partition's refusal (metadata too large, a leader move) must not hold the others: commit
    // each on its own; only those still failing wait for the backoff and the next round.
    let failed = states;
    if (states.length > 1) {
      failed = [];
      for (const s of states) if ((await this.sendStates([s])) !== null) failed.push(s);
    }
    for (const s of failed) if (s.alive) this.dirty.add(s);
    if (failed.length > 0)
      await new Promise((r) =>
        setTimeout(r, backoffMs(this.failures++, { initialMs: 100, maxMs: 5_000, factor: 2 })),
      );
  }

  /** Sends one commit of `states`; null on success (their waiters settle), else the error. */
  private async sendStates(states: PartitionState[]): Promise<unknown> {
    const versions = states.map((s) => s.version);
    try {
      await this.send(states.map((s) => s.commit()));
    } catch (err) {
      this.onResult(false, err);
      return err ?? new Error('commit failed');
    }
    this.failures = 0;
    this.onResult(true);
    states.forEach((s, i) => (s.committedVersion = Math.max(s.committedVersion, versions[i])));
    this.settle();
    return null;
  }

  private settle(): void {
    const keep: Waiter[] = [];
    for (const w of this.waiters) {
      if (w.state.committedVersion >= w.version) w.resolve();
      else keep.push(w);
    }
    this.waiters = keep;
  }
}
