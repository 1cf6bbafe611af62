/**
 * The ClickHouse tables as an external part: ensures the data, dead-letter and integrity tables
 * (applying only real differences), warns when retention is below the legal minimum, and drops
 * them for deletionPolicy Delete only on the server recorded at creation. One HTTP client per
 * (URL, user) is shared by all pipelines (clickhouse-pool.ts).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { ResolvedSpec } from '../../api/defaults';
import type { LogPipeline, LogPipelineStatus } from '../../api/types';
import { dropTable, ensureTable, type TableClaim } from '../../apply/clickhouse';
import { ClickHouseApplyError } from '../../apply/clickhouse-client';
import { AccessApplier, pipelineRoles } from '../../compliance/access';
import { checkRetention } from '../../compliance/retention';
import { coverageOf } from '../../apply/parser-coverage';
import type { PipelineEvent } from '../../apply/kube';
import { ownerOf, wantsAdoption } from '../../desired/ownership';
import { sanitizeMessage } from '../../status/sanitize';
import type { ExternalPart, PartContext, PartOutcome } from '../external';
import type { ClickHousePool } from './clickhouse-pool';
import { olderTableClaimant, tableClaimKey } from './claims';
import { changeEvents, describeStatement } from './change-events';

/**
 * With admin credentials, creates the least-privilege users: the insert-only writer from the
 * workers' credentials Secret, and the read-only auditor from the admin Secret's optional
 * `auditor-username` / `auditor-password` keys (both are needed; docs/compliance.md, "Access").
 */
async function ensureUsers(
  access: AccessApplier,
  client: ClickHouseClient,
  spec: ResolvedSpec,
  ctx: PartContext,
): Promise<PipelineEvent | undefined> {
  const creds = spec.clickhouse.credentials;
  const admin = spec.clickhouse.adminCredentials;
  if (!creds || !admin) return undefined;
  const writer = {
    username: await ctx.readSecretKey(creds.secretName, creds.usernameKey),
    password: await ctx.readSecretKey(creds.secretName, creds.passwordKey),
  };
  const auditor = {
    username: await ctx.readSecretKey(admin.secretName, 'auditor-username'),
    password: await ctx.readSecretKey(admin.secretName, 'auditor-password'),
  };
  if (!writer.username || !writer.password || !auditor.username || !auditor.password) return undefined;
  try {
    await access.ensure(client, spec, {
      writer: { username: writer.username, password: writer.password },
      auditor: { username: auditor.username, password: auditor.password },
    });
    return undefined;
  } catch (err) {
    // A refused user (weak password, no access control on the server) must not block the data path.
    return {
      type: 'Warning',
      reason: 'AccessUsersNotCreated',
      message: sanitizeMessage(err),
    };
  }
}

/**
 * The claim of `lp` on its tables. Tables its own status recorded before owner records existed
 * (an operator upgrade) may be stamped, unless an older pipeline names the same table.
 */
export function tableClaim(lp: LogPipeline, spec: ResolvedSpec, ctx: PartContext): TableClaim {
  const recorded = lp.status?.table;
  // Only pipelines naming the same table can claim it (the cache's index, not a scan of the fleet).
  const claimants = () => ctx.pipelines([tableClaimKey(spec.clickhouse.database, spec.clickhouse.table)]);
  const legacy =
    recorded?.serverIdentity !== undefined &&
    recorded.owner === undefined &&
    recorded.database === spec.clickhouse.database &&
    recorded.table === spec.clickhouse.table &&
    !olderTableClaimant(lp, spec, recorded.serverIdentity, claimants());
  return {
    owner: ownerOf(lp),
    adopt: wantsAdoption(lp),
    olderClaimant: (identity) => {
      const older = olderTableClaimant(lp, spec, identity, claimants());
      return older && `${older.metadata.namespace}/${older.metadata.name}`;
    },
    legacyIdentity: legacy ? recorded.serverIdentity : undefined,
    guard: ctx.guard,
  };
}

/**
 * A refusal when the workers' credentials name the admin user itself: the operator would reduce
 * the admin to the writer's insert-only role set and the workers would run with DDL rights.
 */
async function writerIsAdmin(spec: ResolvedSpec, ctx: PartContext): Promise<PartOutcome | undefined> {
  const creds = spec.clickhouse.credentials;
  const admin = spec.clickhouse.adminCredentials;
  if (!creds || !admin) return undefined;
  const writer = await ctx.readSecretKey(creds.secretName, creds.usernameKey);
  const adminUser = await ctx.readSecretKey(admin.secretName, admin.usernameKey);
  if (!writer || writer !== adminUser) return undefined;
  return {
    status: 'False',
    reason: 'WriterIsAdmin',
    message:
      `spec.clickhouse.credentialsSecretRef (${creds.secretName}) and adminCredentialsSecretRef (${admin.secretName}) ` +
      `name the same ClickHouse user "${writer}": workers need their own insert-only user; ` +
      'the operator changes no tables or users until they differ',
  };
}

/** Whether `applied` created table `name` (its CREATE TABLE statement ran in this reconcile). */
function createdNow(applied: string[], name: string): boolean {
  return applied.some((sql) => sql.startsWith('CREATE TABLE') && sql.includes(`.\`${name}\``));
}

/** Creates the Table part. */
export function createTablePart(pool: ClickHousePool, access = new AccessApplier()): ExternalPart {
  // generation + annotations of each pipeline at its last check: a change makes it look afresh.
  const seen = new Map<string, string>();
  let checks = 0;
  const lookAgainOnChange = async (spec: ResolvedSpec, ctx: PartContext) => {
    if (++checks % 1000 === 0) {
      // Forget deleted pipelines now and then (bounded memory without a delete hook).
      const live = new Set([...ctx.pipelines()].map((p) => p.metadata.uid));
      for (const k of seen.keys()) if (!live.has(k)) seen.delete(k);
    }
    const { uid, generation, annotations } = ctx.pipeline.metadata;
    const key = uid ?? `${spec.namespace}/${spec.name}`;
    const now = `${generation ?? 0}|${JSON.stringify(annotations ?? {})}`;
    const before = seen.get(key);
    seen.set(key, now);
    if (before !== undefined && before !== now) (await pool.catalogue(spec, ctx)).markDirty();
  };
  return {
    name: 'Table',
    async ensure(spec: ResolvedSpec, ctx: PartContext): Promise<PartOutcome> {
      try {
        const refused = await writerIsAdmin(spec, ctx);
        if (refused) return refused;
        await lookAgainOnChange(spec, ctx);
        const out = await ensureTable(
          await pool.client(spec, ctx),
          spec,
          tableClaim(ctx.pipeline, spec, ctx),
          await pool.catalogue(spec, ctx),
          { deferWorkerTables: !(ctx.workersAskForPods?.(spec) ?? true) },
        );
        // A failed read leaves ParserCoverage Unknown; it never blocks the table's own state.
        // A coverage table created by this very call, or not yet (no worker ever ran), holds no
        // rows: nothing to read.
        const noStats =
          createdNow(out.applied, spec.coverage.table) || (out.deferred ?? []).includes(spec.coverage.table);
        const parserCoverage = !out.ready
          ? undefined
          : noStats
            ? coverageOf(spec.coverage.windowMs, 0, 0, {})
            : await (await pool.coverageReader(spec, ctx)).read(spec);
        const observed = {
          database: spec.clickhouse.database,
          table: spec.clickhouse.table,
          serverIdentity: out.identity,
          serverVersion: out.version,
          ...(out.owner ? { owner: out.owner } : {}),
          ...(parserCoverage ? { parserCoverage } : {}),
        };
        if (out.reason === 'Conflict') {
          // Record nothing that a later deletion could mistake for ours.
          return { status: 'False', reason: 'Conflict', message: out.message, conflict: true };
        }
        // One Event for every statement of this reconcile (one line: sanitize keeps the first).
        const events: PipelineEvent[] = changeEvents('TableChanged', out.applied.map(describeStatement));
        const usersProblem = out.ready
          ? await ensureUsers(access, await pool.client(spec, ctx), spec, ctx)
          : undefined;
        if (usersProblem) events.push(usersProblem);
        for (const r of out.refusals)
          events.push({ type: 'Warning', reason: 'DestructiveChangeRefused', message: r.message });
        const retention = out.ready ? checkRetention(spec) : null;
        if (retention) {
          // Ready, but say loudly that the retention is below Law 5651's six-month minimum.
          const message = `table ready, but ${retention.message}`;
          return { status: 'True', reason: retention.reason, message, observed, events };
        }
        return {
          status: out.ready ? 'True' : 'False',
          reason: out.reason,
          message: out.message,
          observed,
          events,
        };
      } catch (err) {
        if (err instanceof ClickHouseApplyError)
          return { status: 'False', reason: err.reason, message: sanitizeMessage(err), retry: true };
        throw err;
      }
    },
    async delete(
      spec: ResolvedSpec,
      recorded: LogPipelineStatus | undefined,
      ctx: PartContext,
    ): Promise<PipelineEvent | void> {
      const identity = recorded?.table?.serverIdentity;
      if (!identity)
        return {
          type: 'Warning',
          reason: 'TableNotDropped',
          message: 'no ClickHouse server identity was recorded; tables left in place',
        };
      const client = await pool.client(spec, ctx);
      const catalogue = await pool.catalogue(spec, ctx);
      const out = await dropTable(client, spec, identity, {
        owner: ownerOf(ctx.pipeline),
        guard: ctx.guard,
      }).finally(() => catalogue.markDirty());
      // The roles go with the tables: a later table of the same name must not inherit their grants.
      if (
        out.reason === 'TablesDropped' &&
        (out.droppedNow?.length ?? 0) > 0 &&
        spec.clickhouse.adminCredentials &&
        !(await access.dropRoles(client, spec))
      )
        ctx.log.warn('pipeline roles not dropped (no access management)', { roles: pipelineRoles(spec) });
      const warn = !out.dropped || out.reason !== 'TablesDropped';
      return { type: warn ? 'Warning' : 'Normal', reason: out.reason, message: out.message };
    },
  };
}
