/**
 * The ClickHouse tables as an external part: ensures the data, dead-letter and integrity tables
 * (applying only real differences), warns when retention is below the legal minimum, and drops
 * them for deletionPolicy Delete only on the server recorded at creation. One HTTP client per
 * (URL, user) is shared by all pipelines.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { MIN_COMPLIANT_RETENTION_MS, type ResolvedSpec } from '../../api/defaults';
import type { LogPipelineStatus } from '../../api/types';
import { dropTable, ensureTable } from '../../apply/clickhouse';
import { ClickHouseApplyError, createClickHouseClient } from '../../apply/clickhouse-client';
import { ensureAccessUsers } from '../../compliance/access';
import { readParserCoverage } from '../../apply/parser-coverage';
import type { PipelineEvent } from '../../apply/kube';
import type { ExternalPart, PartContext, PartOutcome } from '../external';

/** Shared ClickHouse clients keyed by URL and user (passwords are compared, never logged). */
export class ClickHousePool {
  private readonly clients = new Map<string, { password: string; client: ClickHouseClient }>();

  /**
   * The client for a spec's server, created on first use: with the admin credentials when the spec
   * gives them (DDL and user management), else with the workers' credentials.
   */
  async client(spec: ResolvedSpec, ctx: PartContext): Promise<ClickHouseClient> {
    const creds = spec.clickhouse.adminCredentials ?? spec.clickhouse.credentials;
    const username = creds
      ? ((await ctx.readSecretKey(creds.secretName, creds.usernameKey)) ?? 'default')
      : 'default';
    const password = creds ? ((await ctx.readSecretKey(creds.secretName, creds.passwordKey)) ?? '') : '';
    const key = `${spec.clickhouse.url}|${username}`;
    const cached = this.clients.get(key);
    if (cached && cached.password === password) return cached.client;
    if (cached) void cached.client.close();
    const client = createClickHouseClient({ url: spec.clickhouse.url, username, password });
    this.clients.set(key, { password, client });
    return client;
  }

  /** Closes every client (operator shutdown). */
  async close(): Promise<void> {
    await Promise.all([...this.clients.values()].map((c) => c.client.close()));
    this.clients.clear();
  }
}

/**
 * With admin credentials, creates the least-privilege users: the insert-only writer from the
 * workers' credentials Secret, and the read-only auditor from the admin Secret's optional
 * `auditor-username` / `auditor-password` keys (both are needed; docs/compliance.md, "Access").
 */
async function ensureUsers(
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
    await ensureAccessUsers(client, spec, {
      writer: { username: writer.username, password: writer.password },
      auditor: { username: auditor.username, password: auditor.password },
    });
    return undefined;
  } catch (err) {
    // A refused user (weak password, no access control on the server) must not block the data path.
    return {
      type: 'Warning',
      reason: 'AccessUsersNotCreated',
      message: (err as Error).message.slice(0, 500),
    };
  }
}

/** Creates the Table part. */
export function createTablePart(pool: ClickHousePool): ExternalPart {
  return {
    name: 'Table',
    async ensure(spec: ResolvedSpec, ctx: PartContext): Promise<PartOutcome> {
      try {
        const out = await ensureTable(await pool.client(spec, ctx), spec);
        // A failed read leaves ParserCoverage Unknown; it never blocks the table's own state.
        const parserCoverage = out.ready
          ? await readParserCoverage(await pool.client(spec, ctx), spec).catch(() => undefined)
          : undefined;
        const observed = {
          database: spec.clickhouse.database,
          table: spec.clickhouse.table,
          serverIdentity: out.identity,
          serverVersion: out.version,
          ...(parserCoverage ? { parserCoverage } : {}),
        };
        const events: PipelineEvent[] = out.applied.map((s) => ({
          type: 'Normal',
          reason: 'TableChanged',
          message: s.slice(0, 500),
        }));
        const usersProblem = out.ready
          ? await ensureUsers(await pool.client(spec, ctx), spec, ctx)
          : undefined;
        if (usersProblem) events.push(usersProblem);
        for (const r of out.refusals)
          events.push({ type: 'Warning', reason: 'DestructiveChangeRefused', message: r.message });
        if (out.ready && spec.clickhouse.retention.deleteAfterMs < MIN_COMPLIANT_RETENTION_MS) {
          // Ready, but say loudly that the retention is below Law 5651's six-month minimum.
          return {
            status: 'True',
            reason: 'RetentionBelowMinimum',
            message: `table ready, but rows are deleted after ${spec.clickhouse.retention.deleteAfter}, below the 180-day legal minimum`,
            observed,
            events,
          };
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
          return { status: 'False', reason: err.reason, message: err.message, retry: true };
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
      const out = await dropTable(await pool.client(spec, ctx), spec, identity);
      return { type: out.dropped ? 'Normal' : 'Warning', reason: out.reason, message: out.message };
    },
  };
}
