/**
 * Skips an external part's `ensure` when nothing it depends on changed since it last answered
 * Ready: the same resolved spec, Secrets (resourceVersions) and annotations (adoption), within `recheckMs` of the last real check. Every autoscaler poll (15 s) is a
 * reconcile; before this, each one re-ran the topic's claim and config checks and the tables'
 * catalogue reads (about 17 Kafka and 11 ClickHouse requests per poll). External drift (a topic
 * or table changed behind our back) is still found, at the recheck interval instead of every poll
 * (the shared catalogue observers of PLAN.md make that check O(servers) per interval).
 *
 * A round of a server's ClickHouse catalogue that sees a table appear, vanish or change drops the
 * memos of the pipelines managing it and queues them (`tablesChanged`), so drift someone else
 * made is judged at the next round on that server, not only at the recheck.
 *
 * Only clean outcomes are kept: status True, no retry, no conflict, no Warning Events, no
 * requeue; an outcome that changed something (Normal Events) is kept without its Events, since the
 * ensure that made the change checked its result. The memo is per process (a restarted operator
 * checks every pipeline once: read-only when nothing drifted).
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

/**
 * The tables a spec's Table part manages, as `url database.table` (each also with the `_local`
 * suffix of ON CLUSTER storage): the catalogue reports changes by these names.
 */
export function tableIdentities(spec: ResolvedSpec): string[] {
  const ch = spec.clickhouse as Partial<ResolvedSpec['clickhouse']> | undefined;
  if (!ch?.url || !ch.table) return [];
  const s = spec as Partial<ResolvedSpec>;
  const names = [
    ch.table,
    s.deadLetter?.table,
    s.integrity?.table,
    s.integrity?.checkpointTable,
    s.integrity?.sealTable,
    s.coverage?.table,
  ].filter((n): n is string => typeof n === 'string' && n !== '');
  return [...new Set(names.flatMap((n) => [n, `${n}_local`]))].map(
    (n) => `${ch.url} ${ch.database ?? ''}.${n}`,
  );
}

/** What an ensure depends on besides the world outside: spec, Secrets, annotations, whether workers run. */
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
        // A first scale-up (or the last scale-down) changes which tables are wanted (parser stats).
        workersAskForPods: ctx.workersAskForPods?.(spec) ?? true,
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
  private readonly claimants: UidIndex = new Map();
  private readonly claimsOf = new Map<
    string,
    { keys: string[]; tables: string[]; key: string; fingerprint: string }
  >();
  /** Pipelines (uid) by managed table identity (tableIdentities). */
  private readonly byTable: UidIndex = new Map();
  /** ensure calls answered from the memo / passed to the part (tests, metrics). */
  hits = 0;
  misses = 0;
  /** Memos dropped because the catalogue saw their tables change (tablesChanged). */
  invalidations = 0;

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
      this.memos.set(key, { fingerprint, outcome: reusable(outcome), dueAt });
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
    const prev = this.claimsOf.get(uid);
    for (const k of prev?.keys ?? []) removeFrom(this.claimants, k, uid);
    for (const t of prev?.tables ?? []) removeFrom(this.byTable, t, uid);
    this.claimsOf.delete(uid);
  }

  /** Indexes the pipeline's claims; on new inputs drops and requeues the memos of its peers. */
  private track(spec: ResolvedSpec, fingerprint: string): void {
    const prev = this.claimsOf.get(spec.uid);
    if (prev?.fingerprint === fingerprint) return;
    const keys = claimKeys(spec);
    const peers = new Set<string>();
    for (const k of new Set([...(prev?.keys ?? []), ...keys]))
      for (const uid of membersOf(this.claimants, k)) if (uid !== spec.uid) peers.add(uid);
    for (const k of prev?.keys ?? []) removeFrom(this.claimants, k, spec.uid);
    for (const k of keys) addTo(this.claimants, k, spec.uid);
    const tables = tableIdentities(spec);
    for (const t of prev?.tables ?? []) removeFrom(this.byTable, t, spec.uid);
    for (const t of tables) addTo(this.byTable, t, spec.uid);
    this.claimsOf.set(spec.uid, { keys, tables, key: `${spec.namespace}/${spec.name}`, fingerprint });
    for (const uid of peers) {
      this.invalidate(uid);
      const peer = this.claimsOf.get(uid);
      if (peer) this.opts.onPeerChanged?.(peer.key);
    }
  }

  /**
   * The catalogue of `url` saw `tables` (`database.table`) appear, vanish or change: the memoized
   * Table outcomes of the pipelines managing them are stale. They are dropped and those pipelines
   * queued (onPeerChanged), so drift is judged within a reconcile of the round that saw it, not at
   * the next recheck. Pipelines without a memo (their own ensure is running) are left alone.
   */
  tablesChanged(url: string, tables: readonly string[]): void {
    const due = new Set<string>();
    for (const t of tables) for (const uid of membersOf(this.byTable, `${url} ${t}`)) due.add(uid);
    for (const uid of due) {
      if (!this.memos.delete(`Table/${uid}`)) continue;
      this.invalidations++;
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

/**
 * uids by key. Nearly every key has one pipeline (its own tables, its own topic), so a single uid
 * is stored as itself and a Set only once a second one shares the key: ~14 keys per pipeline,
 * and a one-element Set costs about 230 bytes more than the string (issue 18, memory at 1000).
 */
type UidIndex = Map<string, string | Set<string>>;

function membersOf(index: UidIndex, key: string): Iterable<string> {
  const v = index.get(key);
  return v === undefined ? [] : typeof v === 'string' ? [v] : v;
}

function addTo(index: UidIndex, key: string, uid: string): void {
  const v = index.get(key);
  if (v === undefined) index.set(key, uid);
  else if (typeof v === 'string') {
    if (v !== uid) index.set(key, new Set([v, uid]));
  } else v.add(uid);
}

/** Removes `uid` and the key once empty (a deleted pipeline leaves nothing behind). */
function removeFrom(index: UidIndex, key: string, uid: string): void {
  const v = index.get(key);
  if (v === undefined) return;
  if (typeof v === 'string') {
    if (v === uid) index.delete(key);
    return;
  }
  v.delete(uid);
  if (v.size === 1) index.set(key, v.values().next().value as string);
  else if (v.size === 0) index.delete(key);
}

/**
 * Ready with nothing pending. Normal Events (what this very ensure changed: "created table ...")
 * do not stop it: the ensure that made a change verified it (recheckCreated, the topic's owner
 * record), and re-running it at the next reconcile only read everything again (issue 18: once per
 * new pipeline). A Warning (drift, refusal, users not created) keeps it out.
 */
function clean(o: PartOutcome): boolean {
  const quiet = (o.events ?? []).every((e) => e.type === 'Normal');
  return o.status === 'True' && !o.retry && !o.conflict && !o.requeueAfterMs && quiet;
}

/** What a later reconcile reuses: the outcome without the Events, which were said once. */
function reusable(o: PartOutcome): PartOutcome {
  if (!o.events) return o;
  const { events: _said, ...rest } = o;
  return rest;
}
