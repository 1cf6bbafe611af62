/**
 * The catalogue of one ClickHouse server (one per URL and user, like ClickHousePool's clients):
 * version, identity, databases, tables, columns and skipping indexes of every database the
 * pipelines on that server use, read in ONE round of five queries and shared by all of them.
 * Without it each reconcile of each pipeline read ~10 catalogue rows by itself.
 *
 * A snapshot is reused until it is `maxAgeMs` old or marked dirty; every statement we run on the
 * server marks it dirty, so our own DDL is never judged against a stale catalogue. Rounds are
 * single-flight and gathered: callers asking while a round is being prepared share it, callers
 * asking after a change wait for a fresh one.
 */
import { CountMap } from './request-counts';
import { Coalescer } from './coalesce';
import { CatalogueInterner } from './catalogue-interner';
import {
  changedTables,
  tableKey,
  type CatalogueExecutor,
  type CatalogueExtra,
  type CatalogueOptions,
  type CatalogueSnapshot,
  type CatalogueTable,
} from './catalogue-snapshot';
import { readProbe, readRound } from './catalogue-queries';

export {
  changedTables,
  tableKey,
  type CatalogueExecutor,
  type CatalogueExtra,
  type CatalogueOptions,
  type CatalogueSnapshot,
  type CatalogueTable,
} from './catalogue-snapshot';
export { QUERIES_PER_ROUND } from './catalogue-queries';

/**
 * What the catalogues of this process did (exported as metrics): `read fresh` (a snapshot reused),
 * `read shared` (joined a round in flight), `read round` (waited for a new round), `read probe` (a
 * probe batch of named tables), `round`, and `invalidation` (our own statement marked a catalogue,
 * or some of its tables, stale).
 */
export const catalogueCounts = new CountMap();

/** A table asked of the probe queue, in full (with columns and indexes) or its row only. */
type ProbeKey = { key: string; full: boolean };
const probeId = (p: ProbeKey): string => `${p.key}|${p.full ? 'full' : 'row'}`;

/** Shared, invalidated-on-write catalogue of one server; see the module comment. */
export class ClickHouseCatalogue {
  private readonly databases = new Set<string>();
  private readonly extras = new Set<CatalogueExtra>();
  private current?: CatalogueSnapshot;
  private dirty = false;
  private pending?: Promise<CatalogueSnapshot>;
  private inFlight?: Promise<CatalogueSnapshot>;
  private rounds = 0;
  /** Tables our own statements touched since the snapshot: key -> when (read again before use). */
  private readonly stale = new Map<string, number>();
  /** Tables our statements in flight touch, by when the first of them started (markTouching). */
  private readonly touching = new Map<string, number>();
  /** Tables read by a probe newer than the snapshot: key -> [when read, row or missing]. */
  private readonly probed = new Map<string, { at: number; table?: CatalogueTable; full: boolean }>();
  /**
   * ONE probe queue for full reads (rows, columns, indexes) and light ones (rows only: what a claim
   * check needs): every probe scans the server's table list (its cost grows with the number of
   * tables), so a storm's pre-create probes and post-create rechecks share batches (issue 18).
   */
  private readonly probes: Coalescer<ProbeKey, CatalogueTable | undefined>;
  /** Shared copies of the current round's repeated text and column lists (probes use it too). */
  private interner = new CatalogueInterner();
  private readonly maxAgeMs: number;
  private readonly gatherMs: number;
  private readonly now: () => number;

  constructor(
    private readonly run: CatalogueExecutor,
    private readonly opts: CatalogueOptions = {},
  ) {
    this.maxAgeMs = opts.maxAgeMs ?? 30_000;
    this.gatherMs = opts.gatherMs ?? 5;
    this.now = opts.now ?? Date.now;
    this.probes = new Coalescer((keys) => this.probe(keys), { idOf: probeId, gatherMs: this.gatherMs });
  }

  /** Probe batches sent so far (each is one to three queries, whatever the number of tables). */
  probeCount(): number {
    return this.probes.batchCount();
  }

  /**
   * Our own statement changed these tables only: they are read again (by a probe shared with every
   * reconcile waiting at the same moment) before anyone judges them; the rest of the snapshot
   * stays valid, so a storm of creations does not force a full round per statement.
   */
  markStale(database: string, tables: readonly string[]): void {
    const at = this.now();
    catalogueCounts.inc('invalidation');
    for (const t of tables) this.stale.set(tableKey(database, t), at);
  }

  /**
   * Our statement on these tables is about to be sent: a round that reads while it runs may see
   * its result before `markStale` is called, and must not report it as someone else's change
   * (issue 18: that queued every new pipeline for one more reconcile with a full Table check).
   */
  markTouching(database: string, tables: readonly string[]): void {
    const at = this.now();
    for (const t of tables) {
      const k = tableKey(database, t);
      if (!this.touching.has(k)) this.touching.set(k, at);
    }
  }

  /**
   * `tables` of `database` as they are now: from the snapshot, except tables our statements
   * touched since (and, with `fresh`, tables the snapshot lacks), which are probed. A missing
   * table is absent from the map.
   */
  async lookup(
    database: string,
    tables: readonly string[],
    opts: { freshMissing?: boolean; commentsOnly?: boolean } = {},
  ): Promise<Map<string, CatalogueTable>> {
    const snap = await this.snapshot([database]);
    const out = new Map<string, CatalogueTable>();
    const ask: string[] = [];
    for (const t of tables) {
      const key = tableKey(database, t);
      const known = this.known(snap, key, !opts.commentsOnly);
      if (known === 'unknown' || (opts.freshMissing && known === undefined)) ask.push(key);
      else if (known) out.set(t, known);
    }
    const full = !opts.commentsOnly;
    const got = await Promise.all(ask.map((key) => this.probes.get({ key, full })));
    ask.forEach((k, i) => {
      const table = got[i];
      if (table) out.set(k.slice(database.length + 1), table);
    });
    return out;
  }

  /** The freshest row we hold for `key`, undefined (missing) or 'unknown' (touched since read). */
  private known(snap: CatalogueSnapshot, key: string, full: boolean): CatalogueTable | undefined | 'unknown' {
    const touched = this.stale.get(key);
    const probe = this.probed.get(key);
    const seenAt = Math.max(snap.at, probe?.at ?? -Infinity);
    if (touched !== undefined && touched >= seenAt) return 'unknown';
    if (!probe || probe.at < snap.at) return snap.tables.get(key);
    // A light probe lacks columns and indexes: a caller planning changes reads the table in full.
    return full && !probe.full && probe.table ? 'unknown' : probe.table;
  }
  private async probe(asked: ProbeKey[]): Promise<Map<string, CatalogueTable | undefined>> {
    const at = this.now();
    catalogueCounts.inc('read probe');
    const keys = [...new Set(asked.map((a) => a.key))];
    const fullKeys = new Set(asked.filter((a) => a.full).map((a) => a.key));
    const found = await readProbe(this.run, keys, fullKeys);
    for (const [k, t] of found) found.set(k, this.interner.table(t));
    for (const k of keys) this.probed.set(k, { at, table: found.get(k), full: fullKeys.has(k) });
    return new Map(asked.map((a) => [probeId(a), found.get(a.key)]));
  }

  /** Rounds read so far (each is QUERIES_PER_ROUND queries). */
  roundCount(): number {
    return this.rounds;
  }

  /** Our own statement changed the server: the next read fetches a fresh round. */
  markDirty(): void {
    catalogueCounts.inc('invalidation');
    this.dirty = true;
  }

  /** A snapshot covering `databases`, fresh enough; fetches a round when needed. */
  async snapshot(
    databases: readonly string[],
    extras: readonly CatalogueExtra[] = [],
  ): Promise<CatalogueSnapshot> {
    for (const db of databases) {
      if (!this.databases.has(db)) {
        this.databases.add(db);
        this.dirty = true;
      }
    }
    for (const e of extras) {
      if (!this.extras.has(e)) {
        this.extras.add(e);
        this.dirty = true;
      }
    }
    const s = this.current;
    if (s && !this.dirty && this.now() - s.at < this.maxAgeMs) {
      catalogueCounts.inc('read fresh');
      return s;
    }
    // Nothing changed since the round in flight started, and it covers our databases: share it.
    if (this.inFlight && !this.dirty && !this.pending) {
      catalogueCounts.inc('read shared');
      return this.inFlight;
    }
    catalogueCounts.inc('read round');
    return this.nextRound();
  }

  /** The round after any in flight: callers arriving before it starts share it. */
  private nextRound(): Promise<CatalogueSnapshot> {
    if (this.pending) return this.pending;
    const pending = (async () => {
      // Always yield first: `pending` must be set before this body clears it.
      await (this.gatherMs > 0 ? new Promise((r) => setTimeout(r, this.gatherMs)) : Promise.resolve());
      // A round started before the change we wait for must not answer for it.
      if (this.inFlight) await this.inFlight.catch(() => undefined);
      this.pending = undefined;
      this.dirty = false;
      const round = this.fetch([...this.databases].sort());
      this.inFlight = round;
      try {
        const snap = await round;
        const previous = this.current;
        this.current = snap;
        if (previous && this.opts.onChange) {
          // Tables our own statements touched since the last round were judged by the ensure that
          // ran them (its recheck): reporting them would re-run every new pipeline's Table part.
          const ours = (k: string) =>
            (this.stale.get(k) ?? Infinity) < snap.at || (this.touching.get(k) ?? Infinity) < snap.at;
          const changed = changedTables(previous, snap).filter((k) => !ours(k));
          if (changed.length > 0) this.opts.onChange(changed);
        }
        // Touches and probes older than this round are answered by it; a statement still running
        // (touching, no markStale since) may show its result to the next round too.
        for (const k of this.touching.keys())
          if ((this.stale.get(k) ?? Infinity) < snap.at) this.touching.delete(k);
        for (const [k, at] of this.stale) if (at < snap.at) this.stale.delete(k);
        for (const [k, p] of this.probed) if (p.at < snap.at) this.probed.delete(k);
        return snap;
      } catch (err) {
        this.dirty = true;
        throw err;
      } finally {
        if (this.inFlight === round) this.inFlight = undefined;
      }
    })();
    this.pending = pending;
    return pending;
  }
  private async fetch(dbs: string[]): Promise<CatalogueSnapshot> {
    const at = this.now();
    this.rounds++;
    catalogueCounts.inc('round');
    const snap = await readRound(this.run, dbs, this.extras, at);
    // A new round, new canonical copies: nothing of the tables this round no longer sees is kept.
    const interner = new CatalogueInterner();
    for (const [k, t] of snap.tables) snap.tables.set(k, interner.table(t));
    this.interner = interner;
    return snap;
  }
}
