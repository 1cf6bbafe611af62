/**
 * Serialises and coalesces offset commits. Each commit carries, per partition, the contiguous
 * watermark and the cut journal. A batch may only be inserted after a commit that journals it
 * succeeded (`flush`), and a watermark advances only through commits. While the group
 * rebalances the committer is fenced: nothing is sent until the new assignment is installed, so
 * a revoked partition's stale state can never overwrite its new owner's journal. A state is
 * checked to be alive right before each send, never only before a round of sends: kafkajs joins
 * the next generation while a round awaits, and a commit sent after that carries the new
 * generation, so the broker would accept a dead state's journal over the new owner's. The worker's
 * sender (group-generation.ts) binds every commit to the generation of the assignment in force when
 * it is built and sends it once, so a commit that is late anyway (in flight across a rebalance, or
 * a retry of kafkajs's) is refused by the broker with a generation error, which fences us here.
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

/**
 * The generation-error type of a commit failure, or undefined. kafkajs wraps non-retriable protocol
 * errors from its retrier in a KafkaJSNonRetriableError without `type` (the original is its
 * `cause`), so the chain is walked.
 */
export function generationErrorType(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e !== null && typeof e === 'object'; depth++) {
    const type = (e as { type?: unknown }).type;
    if (typeof type === 'string' && GENERATION_ERRORS.has(type)) return type;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Coalescing, fenced committer for one consumer. */
export class OffsetCommitter {
  private dirty = new Set<PartitionState>();
  private waiters: Waiter[] = [];
  private running = false;
  private fenced = true;
  private failures = 0;
  /** Bumped by every unfence: a generation error of an older round must not fence the new one. */
  private epoch = 0;
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
    this.epoch++;
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
    const epoch = this.epoch;
    const err = await this.sendStates(states);
    if (err === null) return;
    if (generationErrorType(err)) {
      for (const s of states) if (s.alive) this.dirty.add(s);
      if (this.epoch === epoch) this.fenced = true;
      return;
    }
    // One partition's refusal (metadata too large, a leader move) must not hold the others: commit
    // each on its own; only those still failing wait for the backoff and the next round.
    let failed = states;
    if (states.length > 1) {
      failed = [];
      for (const s of states) {
        // Each await may span a rebalance: a state revoked meanwhile is never sent (see the header).
        if (!s.alive) continue;
        if (this.fenced) failed.push(s);
        else {
          const e = await this.sendStates([s]);
          if (e === null) continue;
          failed.push(s);
          if (generationErrorType(e) && this.epoch === epoch) this.fenced = true;
        }
      }
    }
    for (const s of failed) if (s.alive) this.dirty.add(s);
    if (this.fenced) return;
    if (failed.length > 0)
      await new Promise((r) =>
        setTimeout(r, backoffMs(this.failures++, { initialMs: 100, maxMs: 5_000, factor: 2 })),
      );
  }

  /** Sends one commit of the states still alive; null on success (their waiters settle), else the error. */
  private async sendStates(all: PartitionState[]): Promise<unknown> {
    // The last line of defence of the rule in the header: a dead state's commit is never built.
    const states = all.filter((s) => s.alive);
    if (states.length === 0) return null;
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
