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
  /**
   * Called with `namespace/name` of every other pipeline naming the same topic or table when a
   * pipeline's inputs change (new, edited): their memos are dropped and they must be reconciled,
   * so an older claimant appearing is judged within one reconcile, not at the next recheck.
   */
  onPeerChanged?: (key: string) => void;
}

/** Claim identities of a spec: its topic on its cluster, its table on its server. */
export function claimKeys(spec: ResolvedSpec): string[] {
  const kafka = spec.kafka as Partial<ResolvedSpec['kafka']> | undefined;
  const ch = spec.clickhouse as Partial<ResolvedSpec['clickhouse']> | undefined;
  const keys: string[] = [];
  if (kafka?.topic?.name)
    keys.push(`topic ${[...(kafka.bootstrapServers ?? [])].sort().join(',')} ${kafka.topic.name}`);
  if (ch?.url && ch.table) keys.push(`table ${ch.url} ${ch.database ?? ''}.${ch.table}`);
  return keys;
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
  /** Pipelines (uid) by claim key, and each pipeline's keys, name and last seen fingerprint. */
  private readonly claimants = new Map<string, Set<string>>();
  private readonly claimsOf = new Map<string, { keys: string[]; key: string; fingerprint: string }>();
  /** ensure calls answered from the memo / passed to the part (tests, metrics). */
  hits = 0;
  misses = 0;

  constructor(private readonly opts: PartMemoOptions = {}) {
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
    this.track(spec, fingerprint);
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

  /** Forgets a deleted pipeline: its memos and its claims. */
  forget(uid: string): void {
    this.invalidate(uid);
    for (const k of this.claimsOf.get(uid)?.keys ?? []) this.claimants.get(k)?.delete(uid);
    this.claimsOf.delete(uid);
  }

  /** Indexes the pipeline's claims; on new inputs drops and requeues the memos of its peers. */
  private track(spec: ResolvedSpec, fingerprint: string): void {
    const prev = this.claimsOf.get(spec.uid);
    if (prev?.fingerprint === fingerprint) return;
    const keys = claimKeys(spec);
    const peers = new Set<string>();
    for (const k of new Set([...(prev?.keys ?? []), ...keys]))
      for (const uid of this.claimants.get(k) ?? []) if (uid !== spec.uid) peers.add(uid);
    for (const k of prev?.keys ?? []) this.claimants.get(k)?.delete(spec.uid);
    for (const k of keys) {
      let set = this.claimants.get(k);
      if (!set) this.claimants.set(k, (set = new Set()));
      set.add(spec.uid);
    }
    this.claimsOf.set(spec.uid, { keys, key: `${spec.namespace}/${spec.name}`, fingerprint });
    for (const uid of peers) {
      this.invalidate(uid);
      const peer = this.claimsOf.get(uid);
      if (peer) this.opts.onPeerChanged?.(peer.key);
    }
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
