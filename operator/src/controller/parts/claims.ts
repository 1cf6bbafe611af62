/**
 * Claims seen in the operator's cache (pure). The authoritative owner record lives on the thing
 * itself (table COMMENT, topic owner record: desired/ownership.ts); the cache settles what the
 * things cannot: two pipelines created at the same moment on a topic, and which pipeline may stamp
 * a table created before owner records existed. The older claim wins (creation time, then
 * namespace/name). Identity of the remote system is what the status recorded (Kafka cluster id,
 * ClickHouse server identity), never the spelling of an address; an address is compared (in a
 * normalized form) only for pipelines that recorded nothing yet.
 */
import { resolveSpec, type ResolvedSpec } from '../../api/defaults';
import type { LogPipeline } from '../../api/types';

function older(a: LogPipeline, b: LogPipeline): boolean {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb;
  return `${a.metadata.namespace}/${a.metadata.name}` < `${b.metadata.namespace}/${b.metadata.name}`;
}

/** Lower-cased, sorted, de-duplicated bootstrap list; `localhost` and 127.0.0.1 are one host. */
export function normalizedBrokers(brokers: readonly string[]): string {
  const norm = brokers.map((b) =>
    b
      .trim()
      .toLowerCase()
      .replace(/^localhost(?=:)/, '127.0.0.1'),
  );
  return [...new Set(norm)].sort().join(',');
}

/**
 * Resolved specs of cached pipeline objects (null: unresolvable). Every reconcile's claim check
 * walks all pipelines; resolving each spec again made a creation storm quadratic in resolveSpec
 * (issue 18: ~7 % of the operator's CPU at 300 pipelines). The informer replaces an object on
 * every change, so an entry is dropped with the object it was resolved from.
 */
const resolved = new WeakMap<LogPipeline, ResolvedSpec | null>();

function resolvedSpec(lp: LogPipeline): ResolvedSpec | null {
  let spec = resolved.get(lp);
  if (spec === undefined) {
    try {
      spec = resolveSpec(lp);
    } catch {
      spec = null; // an unresolvable spec fails elsewhere with its own condition
    }
    resolved.set(lp, spec);
  }
  return spec;
}

function oldest(
  lp: LogPipeline,
  all: Iterable<LogPipeline>,
  same: (other: LogPipeline, spec: ResolvedSpec) => boolean,
): LogPipeline | undefined {
  let winner: LogPipeline | undefined;
  for (const other of all) {
    if (other.metadata.uid === lp.metadata.uid || other.metadata.deletionTimestamp) continue;
    if (other.metadata.namespace === lp.metadata.namespace && other.metadata.name === lp.metadata.name)
      continue;
    const spec = resolvedSpec(other);
    if (!spec || !same(other, spec)) continue;
    if (older(other, lp) && (!winner || older(other, winner))) winner = other;
  }
  return winner;
}

/**
 * The oldest other pipeline claiming `lp`'s topic on the Kafka cluster `clusterId`: same topic
 * name and the same recorded cluster id, or (nothing recorded yet) the same normalized brokers.
 */
export function olderTopicClaimant(
  lp: LogPipeline,
  spec: ResolvedSpec,
  clusterId: string,
  all: Iterable<LogPipeline>,
): LogPipeline | undefined {
  const topics = new Set([
    spec.kafka.topic.name,
    ...(spec.deadLetter.enabled ? [spec.deadLetter.topic] : []),
  ]);
  const brokers = normalizedBrokers(spec.kafka.bootstrapServers);
  return oldest(lp, all, (other, o) => {
    const names = [o.kafka.topic.name, ...(o.deadLetter.enabled ? [o.deadLetter.topic] : [])];
    if (!names.some((n) => topics.has(n))) return false;
    const recorded = other.status?.topic?.clusterId;
    return recorded ? recorded === clusterId : normalizedBrokers(o.kafka.bootstrapServers) === brokers;
  });
}

/**
 * The oldest other pipeline naming `lp`'s data table in the same database on the same server:
 * the same recorded server identity, or (nothing recorded yet) the same URL.
 */
export function olderTableClaimant(
  lp: LogPipeline,
  spec: ResolvedSpec,
  identity: string | undefined,
  all: Iterable<LogPipeline>,
): LogPipeline | undefined {
  const { database, table, url } = spec.clickhouse;
  return oldest(lp, all, (other, o) => {
    if (o.clickhouse.database !== database || o.clickhouse.table !== table) return false;
    // A URL alone is ambiguous (a short service name resolves per namespace): it counts only for a
    // pipeline that has recorded no server yet.
    const recorded = other.status?.table?.serverIdentity;
    return recorded ? recorded === identity : o.clickhouse.url === url;
  });
}
