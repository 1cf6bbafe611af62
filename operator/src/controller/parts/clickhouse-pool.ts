/** The operator's shared ClickHouse clients, catalogues and coverage readers, per server and user. */
import type { ClickHouseClient } from '@clickhouse/client';
import type { ResolvedSpec } from '../../api/defaults';
import { ClickHouseCatalogue, type CatalogueOptions } from '../../apply/clickhouse-catalogue';
import { ClickHouseApplyError, createClickHouseClient, queryRows } from '../../apply/clickhouse-client';
import { KafkaConnectionUse } from '../../apply/kafka-connection-use';
import { CoverageReader } from '../../apply/parser-coverage';
import type { PartContext } from '../external';

/**
 * Shared ClickHouse clients keyed by URL and user (passwords are compared, never logged), and one
 * catalogue per server and user, shared by every pipeline on it. Which key each pipeline used last
 * is recorded (the same bookkeeping as the Kafka clients'), so `closeUnused` can close the client,
 * catalogue and coverage reader of a user no pipeline uses any more (a rotation to a new user, a
 * deleted pipeline, a changed URL).
 */
export class ClickHousePool {
  private readonly clients = new Map<string, { password: string; client: ClickHouseClient }>();
  private readonly catalogues = new Map<string, ClickHouseCatalogue>();
  private readonly coverage = new Map<string, CoverageReader>();
  private readonly use: KafkaConnectionUse;

  constructor(
    private readonly catalogueOptions: CatalogueOptions & {
      /** A catalogue round of server `url` saw these `database.table` change (part-memo.ts tablesChanged). */
      onTablesChanged?: (url: string, tables: string[]) => void;
    } = {},
    now: () => number = Date.now,
  ) {
    this.use = new KafkaConnectionUse(now);
  }

  /**
   * Closes the clients (and forgets the catalogues) of keys no pipeline in `live` (uids) uses now
   * and none used for `graceMs`, so a statement started just before a rotation finishes first.
   */
  async closeUnused(live: ReadonlySet<string>, graceMs: number): Promise<string[]> {
    const keys = this.use.retire(live, graceMs);
    await this.drop(keys);
    return keys;
  }

  /** Closes and forgets the clients, catalogues and coverage readers of these keys. */
  async drop(keys: readonly string[]): Promise<void> {
    const closing: Array<Promise<void>> = [];
    for (const key of keys) {
      const c = this.clients.get(key);
      if (c) closing.push(c.client.close().catch(() => undefined));
      this.clients.delete(key);
      this.catalogues.delete(key);
      this.coverage.delete(key);
    }
    await Promise.all(closing);
  }

  /** The catalogue of a spec's server (reads go through the current client of the same key). */
  async catalogue(spec: ResolvedSpec, ctx: PartContext): Promise<ClickHouseCatalogue> {
    await this.client(spec, ctx);
    const key = await this.keyOf(spec, ctx);
    let cat = this.catalogues.get(key);
    if (!cat) {
      const { onTablesChanged, ...options } = this.catalogueOptions;
      const url = spec.clickhouse.url;
      cat = new ClickHouseCatalogue((query, params) => queryRows(this.clientOf(key), query, params), {
        ...options,
        onChange: onTablesChanged && ((tables) => onTablesChanged(url, tables)),
      });
      this.catalogues.set(key, cat);
    }
    return cat;
  }

  /** The batched parser-coverage reader of a spec's server. */
  async coverageReader(spec: ResolvedSpec, ctx: PartContext): Promise<CoverageReader> {
    await this.client(spec, ctx);
    const key = await this.keyOf(spec, ctx);
    let reader = this.coverage.get(key);
    if (!reader) {
      const run = <T>(query: string, params: Record<string, unknown>) =>
        queryRows<T>(this.clientOf(key), query, params);
      reader = new CoverageReader(run, { maxAgeMs: this.catalogueOptions.maxAgeMs });
      this.coverage.set(key, reader);
    }
    return reader;
  }

  /** The open client of `key`; a catalogue held across a sweep that closed it fails like an unreachable server. */
  private clientOf(key: string): ClickHouseClient {
    const c = this.clients.get(key);
    if (!c)
      throw new ClickHouseApplyError('ClickHouseUnreachable', 'client closed (credentials no longer used)');
    return c.client;
  }

  /** Catalogue rounds read so far, over all servers (for tests and the bench). */
  catalogueRounds(): number {
    let n = 0;
    for (const c of this.catalogues.values()) n += c.roundCount();
    return n;
  }

  private async keyOf(spec: ResolvedSpec, ctx: PartContext): Promise<string> {
    const creds = spec.clickhouse.adminCredentials ?? spec.clickhouse.credentials;
    const username = creds
      ? ((await ctx.readSecretKey(creds.secretName, creds.usernameKey)) ?? 'default')
      : 'default';
    return `${spec.clickhouse.url}|${username}`;
  }

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
    this.use.record(ctx.pipeline.metadata.uid ?? `${spec.namespace}/${spec.name}`, key);
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
    this.catalogues.clear();
    this.coverage.clear();
  }
}
