/**
 * Skips an external part's `ensure` when nothing it depends on changed since it last answered
 * Ready: the same resolved spec, Secrets (resourceVersions) and annotations (adoption), within `recheckMs` of the last real check. Every autoscaler poll (15 s) is a
 * reconcile; before this, each one re-ran the topic's claim and config checks and the tables'
 * catalogue reads (about 17 Kafka and 11 ClickHouse requests per poll). External drift (a topic
 * or table changed behind our back) is still found, at the recheck interval instead of every poll
 * (the shared catalogue observers of PLAN.md make that check O(servers) per interval).
 *
 * Only clean outcomes are kept: status True, no retry, no conflict, no events, no requeue. The
 * memo is per process (a restarted operator checks every pipeline once: read-only when nothing
 * drifted). Invalidate it whenever this process changes the thing itself (our own DDL/topic
 * change always happens inside a non-memoized ensure, so a follow-up check runs anyway).
 */
import { createHash } from 'node:crypto';
import type { ResolvedSpec } from '../api/defaults';
import { stableJson } from '../../../common/src/stable-json';
import type { ExternalPart, PartContext, PartOutcome } from './external';

interface Memo {
  fingerprint: string;
  outcome: PartOutcome;
  /** When the next real check is due. */
  dueAt: number;
}

/** Options of the memo. */
export interface PartMemoOptions {
  /** Longest time a clean outcome is reused (drift check interval). Default 5 min. */
  recheckMs?: number;
  /** Spread of the due times (fraction of recheckMs) so 1000 pipelines do not recheck at once. Default 0.2. */
  jitter?: number;
  now?: () => number;
  random?: () => number;
}

/** What an ensure depends on besides the world outside: spec, Secrets, annotations. */
export function partFingerprint(
  spec: ResolvedSpec,
  ctx: PartContext,
  secretsVersion: string | undefined,
): string {
  const lp = ctx.pipeline;
  return createHash('sha1')
    .update(
      stableJson({
        uid: lp.metadata.uid,
        generation: lp.metadata.generation,
        spec,
        secretsVersion: secretsVersion ?? '',
        annotations: lp.metadata.annotations ?? {},
        // Not the recorded status.topic/table: it only feeds the legacy-claim check, which a clean
        // outcome has passed, and our own status write of the outcome would otherwise force a
        // second full check of every new pipeline.
      }),
    )
    .digest('hex');
}

/** Wraps a part's ensure with the memo; `delete` passes through and forgets the pipeline. */
export class PartMemo {
  private readonly memos = new Map<string, Memo>();
  private readonly recheckMs: number;
  private readonly jitter: number;
  private readonly now: () => number;
  private readonly random: () => number;
  /** ensure calls answered from the memo / passed to the part (tests, metrics). */
  hits = 0;
  misses = 0;

  constructor(opts: PartMemoOptions = {}) {
    this.recheckMs = opts.recheckMs ?? 300_000;
    this.jitter = opts.jitter ?? 0.2;
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? Math.random;
  }

  /** The outcome of `part.ensure`, reused while the fingerprint holds and the recheck is not due. */
  async ensure(
    part: ExternalPart,
    spec: ResolvedSpec,
    ctx: PartContext,
    secretsVersion: string | undefined,
  ): Promise<PartOutcome> {
    const key = `${part.name}/${spec.uid}`;
    const fingerprint = partFingerprint(spec, ctx, secretsVersion);
    const memo = this.memos.get(key);
    const t = this.now();
    if (memo && memo.fingerprint === fingerprint && t < memo.dueAt) {
      this.hits++;
      return memo.outcome;
    }
    this.misses++;
    const outcome = await part.ensure(spec, ctx);
    if (clean(outcome)) {
      const dueAt = t + this.recheckMs * (1 - this.jitter * this.random());
      this.memos.set(key, { fingerprint, outcome, dueAt });
    } else this.memos.delete(key);
    return outcome;
  }

  /** Forces the next ensure of a pipeline's parts to run (our own change, a deleted pipeline). */
  invalidate(uid: string): void {
    for (const k of [...this.memos.keys()]) if (k.endsWith(`/${uid}`)) this.memos.delete(k);
  }

  /** Forces every pipeline's next ensure on `part` to run (a catalogue observer saw a change). */
  invalidatePart(name: string): void {
    for (const k of [...this.memos.keys()]) if (k.startsWith(`${name}/`)) this.memos.delete(k);
  }

  get size(): number {
    return this.memos.size;
  }
}

function clean(o: PartOutcome): boolean {
  return o.status === 'True' && !o.retry && !o.conflict && !o.requeueAfterMs && (o.events?.length ?? 0) === 0;
}
