/**
 * Round trips this process makes to the outside, counted where they leave the process: Kubernetes
 * API requests by verb and resource (apply/kube-rest.ts), ClickHouse requests by kind (the HTTP
 * client made by apply/clickhouse-client.ts: SELECT from system.tables, CREATE TABLE, ping, …) and
 * Kafka requests by protocol API (the admin clients' request instrumentation event: Metadata,
 * DescribeConfigs, OffsetFetch, ListOffsets, …). Process-global like the statement counts: every
 * client of the process adds to them, the metrics module exports them at scrape time, and tests
 * read them to pin "zero writes when steady" and "O(servers) round trips".
 *
 * A reconcile runs inside a `RequestScope` (AsyncLocalStorage): the requests it sends are also
 * counted on the scope, and the metrics module turns them into per-reconcile histograms. Work a
 * reconcile starts and others share (a catalogue round) counts once, for the reconcile that
 * started it; background rounds (the Kafka observer's timer) belong to no reconcile.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** One counter family: label value -> count. */
export class CountMap {
  private readonly counts = new Map<string, number>();
  inc(label: string, n = 1): void {
    this.counts.set(label, (this.counts.get(label) ?? 0) + n);
  }
  entries(): IterableIterator<[string, number]> {
    return this.counts.entries();
  }
  get(label: string): number {
    return this.counts.get(label) ?? 0;
  }
  total(): number {
    let t = 0;
    for (const n of this.counts.values()) t += n;
    return t;
  }
  /** A copy, for before/after differences in tests and the benchmark. */
  snapshot(): Map<string, number> {
    return new Map(this.counts);
  }
}

/** Kubernetes requests, label `verb resource` (e.g. `patch deployments`, `list logpipelines`, `watch pods`). */
export const kubeRequests = new CountMap();
/** ClickHouse HTTP requests, label = kind (`SELECT system.tables`, `CREATE TABLE`, `PING`, …). */
export const clickhouseRequests = new CountMap();
/** Kafka protocol requests of the operator's admin clients, label = API name (`Metadata`, `OffsetFetch`, …). */
export const kafkaRequests = new CountMap();
/**
 * Work a reconcile left to a short requeue because the broker did not know a topic created a
 * moment ago, label = what (`topic owner record`, `topic limit`): each one is one more reconcile.
 */
export const deferredTopicWork = new CountMap();

/**
 * The Kubernetes verb and resource of a request, as the apiserver's audit log names them:
 * GET of a collection is `list` (`watch` with ?watch=true), of a named object `get`; a
 * subresource is named `resource/sub` (`logpipelines/status`).
 */
export function kubeVerbResource(
  method: string,
  path: string,
  query: Record<string, unknown> = {},
): { verb: string; resource: string } {
  const parts = path.split('?')[0].split('/').filter(Boolean);
  // /api/v1/... or /apis/group/version/...
  let i = parts[0] === 'api' ? 2 : 3;
  if (parts[i] === 'namespaces' && parts.length > i + 2) i += 2;
  const resource = parts[i] ?? 'unknown';
  const name = parts[i + 1];
  const sub = parts[i + 2];
  const m = method.toUpperCase();
  let verb: string;
  if (m === 'GET') verb = name ? 'get' : query.watch === true || query.watch === 'true' ? 'watch' : 'list';
  else if (m === 'POST') verb = 'create';
  else if (m === 'PUT') verb = 'update';
  else if (m === 'PATCH') verb = 'patch';
  else if (m === 'DELETE') verb = name ? 'delete' : 'deletecollection';
  else verb = m.toLowerCase();
  return { verb, resource: sub ? `${resource}/${sub}` : resource };
}

/** The systems a reconcile sends requests to. */
export type RequestSystem = 'kube' | 'clickhouse' | 'kafka';

/** Requests sent by one reconcile, by system and label (same labels as the process-wide counters). */
export class RequestScope {
  readonly counts: Record<RequestSystem, Map<string, number>> = {
    kube: new Map(),
    clickhouse: new Map(),
    kafka: new Map(),
  };
  private open = true;

  /** Adds `n` requests; ignored once the reconcile has ended (a timer it started may live on). */
  inc(system: RequestSystem, label: string, n = 1): void {
    if (!this.open) return;
    const m = this.counts[system];
    m.set(label, (m.get(label) ?? 0) + n);
  }

  /** Requests of one system in this reconcile. */
  total(system: RequestSystem): number {
    let t = 0;
    for (const n of this.counts[system].values()) t += n;
    return t;
  }

  /** Ends the scope: later requests from work it started are not its own. */
  close(): void {
    this.open = false;
  }
}

const scopes = new AsyncLocalStorage<RequestScope>();

/** Runs `fn` in a fresh RequestScope and returns the scope (closed) with its result or error. */
export async function withRequestScope<T>(
  fn: () => Promise<T>,
): Promise<{ scope: RequestScope } & ({ ok: true; value: T } | { ok: false; error: unknown })> {
  const scope = new RequestScope();
  try {
    const value = await scopes.run(scope, fn);
    return { scope, ok: true, value };
  } catch (error) {
    return { scope, ok: false, error };
  } finally {
    scope.close();
  }
}

/** Counts a request on the scope of the reconcile it was sent from, if any (not process-wide). */
export function attributeRequest(system: RequestSystem, label: string, n = 1): void {
  scopes.getStore()?.inc(system, label, n);
}

/** Counts one Kubernetes request. */
export function countKubeRequest(method: string, path: string, query?: Record<string, unknown>): void {
  const { verb, resource } = kubeVerbResource(method, path, query);
  const label = `${verb} ${resource}`;
  kubeRequests.inc(label);
  attributeRequest('kube', label);
}

/**
 * The kind of a ClickHouse request: DDL by statement kind (`CREATE TABLE`), reads by the first
 * table they select from (`SELECT system.columns`), anything else by its leading keyword.
 */
export function clickhouseRequestKind(sql: string): string {
  const m = /^\s*([A-Za-z]+)(?:\s+([A-Za-z]+))?/.exec(sql);
  if (!m) return 'OTHER';
  const first = m[1].toUpperCase();
  if (first === 'SELECT' || first === 'WITH') {
    const from = /\bFROM\s+([A-Za-z0-9_.`]+)/i.exec(sql);
    const table = from?.[1].replace(/`/g, '');
    // System tables by name; a pipeline's own tables (coverage reads) as one label, not one per table.
    return !table ? 'SELECT' : table.startsWith('system.') ? `SELECT ${table}` : 'SELECT pipeline table';
  }
  return ['CREATE', 'ALTER', 'DROP'].includes(first) && m[2] ? `${first} ${m[2].toUpperCase()}` : first;
}

/** Counts one ClickHouse request. */
export function countClickHouseRequest(sql: string): void {
  const kind = clickhouseRequestKind(sql);
  clickhouseRequests.inc(kind);
  attributeRequest('clickhouse', kind);
}

/**
 * Counts Kafka protocol requests. `attribute: false` for counts made where the sender's context
 * is lost (kafkajs' REQUEST event fires in the socket's context): those are attributed at send
 * time instead (kafka-client.ts `attributingSocketFactory`).
 */
export function countKafkaRequest(apiName: string, n = 1, attribute = true): void {
  kafkaRequests.inc(apiName, n);
  if (attribute) attributeRequest('kafka', apiName, n);
}

/** Seconds spent in each phase of reconciles (Topic, Table, children, autoscaler, status), summed. */
export const reconcilePhaseSeconds = new CountMap();

/** Runs `fn` and adds its wall time to `phase`. */
export async function timed<T>(phase: string, fn: () => Promise<T>): Promise<T> {
  const t0 = process.hrtime.bigint();
  try {
    return await fn();
  } finally {
    reconcilePhaseSeconds.inc(phase, Number(process.hrtime.bigint() - t0) / 1e9);
  }
}
