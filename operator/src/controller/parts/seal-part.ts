/**
 * The scheduled daily seal (`spec.integrity.seal`, docs/compliance.md "Daily sealed evidence").
 *
 * Runs inside the operator on requeueAfter timers rather than as a CronJob: the operator already
 * holds the pipeline's Secrets and ClickHouse connection, reports through the pipeline's status
 * and Events, and is the single leader — so no second image run, no RBAC for Jobs, no Secret
 * mounted into another pod, and no Job history to map back to conditions. The work is streaming
 * I/O (the server renders and sorts the export, the operator hashes it), started in the background
 * so a reconcile never waits on it; one seal at a time per operator bounds the load.
 *
 * Each evaluation (level-triggered, from any reconcile): the days in the backfill window that are
 * complete (ended + grace), have rows in the chain and no seal yet are pending; the oldest is sealed.
 * Idempotent: `sealDay` leaves a sealed day alone. The `Sealed` condition reports the newest day
 * sealed, or why the last seal failed (with a Warning Event once per failure); a failed day is
 * retried after a delay.
 */
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import type { ResolvedSpec } from '../../api/defaults';
import type { PipelineEvent } from '../../apply/kube';
import { loadSigningKey } from '../../../../common/src/integrity/checkpoint';
import type { TsaClientAuth } from '../../../../common/src/integrity/tsa-request';
import { sealDay, SealRefused } from '../../compliance/seal';
import { addDays, dayWindow, formatDay, lastCompleteDay } from '../../compliance/seal-days';
import { daysWithRows, sealedDays, sealTableExists, sealTables } from '../../compliance/seal-store';
import type { ConditionInput } from '../../status/conditions';
import type { PartContext, SealOutcome, SealingPart } from '../external';

interface SealState {
  running?: string;
  lastSealedDay?: string;
  lastSealTime?: string;
  failure?: { day: string; reason: string; message: string; atMs: number; reported: boolean };
  sealed?: { day: string; rows: number; sha256: string };
}

/** Options: clock and delays (tests shorten them). */
export interface SealSchedulerOptions {
  now?: () => number;
  /** Wait after a failed seal before retrying the day. Default 5 min. */
  retryDelayMs?: number;
  /** Poll interval while a seal runs. Default 15 s. */
  pollMs?: number;
}

const MIN_REQUEUE_MS = 1_000;

/** Runs scheduled seals for every pipeline that asks for them. */
export class SealScheduler implements SealingPart {
  private readonly states = new Map<string, SealState>();
  private busy = false;

  constructor(private readonly opts: SealSchedulerOptions = {}) {}

  /** Evaluates one pipeline; undefined when it has no scheduled seal. Never throws. */
  async evaluate(spec: ResolvedSpec, ctx: PartContext): Promise<SealOutcome | undefined> {
    const key = `${spec.namespace}/${spec.name}`;
    const seal = spec.integrity.seal;
    if (!seal || !spec.integrity.enabled) {
      this.states.delete(key);
      return undefined;
    }
    const state = this.states.get(key) ?? {};
    this.states.set(key, state);
    const now = this.now();
    if (state.running || this.busy) return this.report(state, this.opts.pollMs ?? 15_000);
    if (state.failure && now < state.failure.atMs + (this.opts.retryDelayMs ?? 300_000))
      return this.report(state, state.failure.atMs + (this.opts.retryDelayMs ?? 300_000) - now);
    let client: ClickHouseClient | undefined;
    try {
      client = await this.connect(spec, ctx);
      const { pending, newestSealed } = await this.pendingDays(client, spec, now);
      if (newestSealed && (!state.lastSealedDay || newestSealed > state.lastSealedDay))
        state.lastSealedDay = newestSealed;
      if (pending.length === 0) {
        // Nothing left (also when a failed day was sealed meanwhile, e.g. by `logpipeline seal`).
        state.failure = undefined;
        await client.close();
        return this.report(state, this.nextBoundary(spec, now));
      }
      this.start(state, key, pending[0], client, spec, ctx);
      return this.report(state, this.opts.pollMs ?? 15_000);
    } catch (err) {
      await client?.close();
      this.fail(state, formatDay(now, seal.timeZone), err);
      return this.report(state, this.opts.retryDelayMs ?? 300_000);
    }
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  /** A dedicated client: long streamed reads, no wait_end_of_query (the export is streamed, not buffered). */
  private async connect(spec: ResolvedSpec, ctx: PartContext): Promise<ClickHouseClient> {
    const creds = spec.clickhouse.adminCredentials ?? spec.clickhouse.credentials;
    const username = creds
      ? ((await ctx.readSecretKey(creds.secretName, creds.usernameKey)) ?? 'default')
      : 'default';
    const password = creds ? ((await ctx.readSecretKey(creds.secretName, creds.passwordKey)) ?? '') : '';
    return createClient({
      url: spec.clickhouse.url,
      username,
      password,
      request_timeout: 3_600_000,
      application: 'logpipeline-operator-seal',
      log: { level: ClickHouseLogLevel.OFF },
    });
  }

  private async pendingDays(
    client: ClickHouseClient,
    spec: ResolvedSpec,
    now: number,
  ): Promise<{ pending: string[]; newestSealed?: string }> {
    const seal = spec.integrity.seal!;
    const t = {
      ...sealTables(spec.clickhouse.database, spec.clickhouse.table),
      sealTable: spec.integrity.sealTable,
    };
    if (!(await sealTableExists(client, t)))
      throw new SealRefused(
        'NoSealTable',
        `${t.database}.${t.sealTable} does not exist yet (TableReady creates it)`,
      );
    const tz = seal.timeZone;
    const last = lastCompleteDay(now, seal.graceMs, tz);
    const first = addDays(last, -(seal.backfillDays - 1));
    const pipeline = `${spec.namespace}/${spec.name}`;
    const days = await sealedDays(client, t, first, last);
    const sealed = new Set(days);
    const span = {
      fromDay: first,
      toDay: last,
      fromMs: dayWindow(first, tz).fromMs,
      toMs: dayWindow(last, tz).toMs,
    };
    const withRows = await daysWithRows(client, t, pipeline, { ...span, timeZone: tz });
    const pending = withRows.filter((d) => !sealed.has(d));
    return { pending, newestSealed: days.at(-1) };
  }

  /** Until the next day is complete (its end + grace), at least a second. */
  private nextBoundary(spec: ResolvedSpec, now: number): number {
    const { graceMs, timeZone } = spec.integrity.seal!;
    const next = dayWindow(addDays(lastCompleteDay(now, graceMs, timeZone), 1), timeZone).toMs + graceMs;
    return Math.max(MIN_REQUEUE_MS, next - now);
  }

  private start(
    state: SealState,
    key: string,
    day: string,
    client: ClickHouseClient,
    spec: ResolvedSpec,
    ctx: PartContext,
  ): void {
    state.running = day;
    this.busy = true;
    void this.run(day, client, spec, ctx)
      .then((r) => {
        state.failure = undefined;
        state.sealed = { day, rows: r.record.row_count, sha256: r.record.export_sha256 };
        if (!state.lastSealedDay || day > state.lastSealedDay) state.lastSealedDay = day;
        state.lastSealTime = new Date(this.now()).toISOString();
        ctx.log.info('day sealed', { pipeline: key, day, rows: r.record.row_count, status: r.status });
      })
      .catch((err: unknown) => {
        this.fail(state, day, err);
        ctx.log.warn('seal failed', { pipeline: key, day, err: state.failure?.message });
      })
      .finally(() => {
        state.running = undefined;
        this.busy = false;
        void client.close();
      });
  }

  private async run(day: string, client: ClickHouseClient, spec: ResolvedSpec, ctx: PartContext) {
    const signing = spec.integrity.signingKey!;
    const pem = await ctx.readSecretKey(signing.secretName, signing.key);
    if (!pem)
      throw new SealRefused('SigningKeyMissing', `Secret ${signing.secretName} has no key ${signing.key}`);
    return sealDay(client, {
      database: spec.clickhouse.database,
      table: spec.clickhouse.table,
      tables: { sealTable: spec.integrity.sealTable },
      day,
      timeZone: spec.integrity.seal!.timeZone,
      pipeline: `${spec.namespace}/${spec.name}`,
      signingKey: loadSigningKey(pem),
      tsaUrl: spec.integrity.tsaUrl,
      tsaAuth: await this.tsaAuth(spec, ctx),
      graceMs: spec.integrity.seal!.graceMs,
      now: () => this.now(),
    });
  }

  /** TSA credentials from the Secret's well-known keys (each optional). */
  private async tsaAuth(spec: ResolvedSpec, ctx: PartContext): Promise<TsaClientAuth> {
    const name = spec.integrity.tsaCredentialsSecret;
    if (!name) return {};
    const read = (k: string) => ctx.readSecretKey(name, k);
    return {
      username: await read('username'),
      password: await read('password'),
      clientCertPem: await read('tls.crt'),
      clientKeyPem: await read('tls.key'),
      caPem: await read('ca.crt'),
    };
  }

  private fail(state: SealState, day: string, err: unknown): void {
    const reason = err instanceof SealRefused ? err.reason : 'SealFailed';
    const message = `sealing ${day} failed: ${(err as Error).message}`.slice(0, 900);
    const same = state.failure?.message === message;
    state.failure = { day, reason, message, atMs: this.now(), reported: same && !!state.failure?.reported };
  }

  private report(state: SealState, requeueAfterMs: number): SealOutcome {
    const events: PipelineEvent[] = [];
    if (state.sealed) {
      const s = state.sealed;
      events.push({
        type: 'Normal',
        reason: 'DaySealed',
        message: `sealed ${s.day}: ${s.rows} rows, export sha256 ${s.sha256}`,
      });
      state.sealed = undefined;
    }
    const observed = {
      lastSealedDay: state.lastSealedDay,
      lastSealTime: state.lastSealTime,
      lastFailure: state.failure?.message,
    };
    let condition: ConditionInput;
    if (state.failure) {
      if (!state.failure.reported)
        events.push({ type: 'Warning', reason: state.failure.reason, message: state.failure.message });
      state.failure.reported = true;
      condition = {
        type: 'Sealed',
        status: 'False',
        reason: state.failure.reason,
        message: state.failure.message,
      };
    } else if (state.lastSealedDay) {
      condition = {
        type: 'Sealed',
        status: 'True',
        reason: 'DaySealed',
        message: `days through ${state.lastSealedDay} are sealed`,
      };
    } else {
      condition = {
        type: 'Sealed',
        status: 'Unknown',
        reason: state.running ? 'Sealing' : 'NothingToSeal',
        message: state.running ? `sealing ${state.running}` : 'no complete day with rows is unsealed yet',
      };
    }
    return { condition, observed, events, requeueAfterMs: Math.max(MIN_REQUEUE_MS, requeueAfterMs) };
  }
}
