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

/** What a pipeline claims, resolved from its spec: the topics (data and dead letter) and the table. */
interface ClaimView {
  topics: string[];
  brokers: string;
  database: string;
  table: string;
  url: string;
}

/**
 * Claim views by cached object. Every reconcile compares its pipeline with all others; resolving
 * every other spec each time made a fleet's reconciles quadratic (1000 pipelines: two million
 * spec resolutions after an operator restart). An informer replaces an object on every change,
 * so a view keyed by the object itself is never stale.
 */
const views = new WeakMap<LogPipeline, ClaimView | null>();

function claimView(lp: LogPipeline): ClaimView | undefined {
  let view = views.get(lp);
  if (view === undefined) {
    try {
      const o = resolveSpec(lp);
      view = {
        topics: specTopics(o),
        brokers: normalizedBrokers(o.kafka.bootstrapServers),
        database: o.clickhouse.database,
        table: o.clickhouse.table,
        url: o.clickhouse.url,
      };
    } catch {
      view = null; // an unresolvable spec fails elsewhere with its own condition
    }
    views.set(lp, view);
  }
  return view ?? undefined;
}

/** The claim key of a topic name (see claimKeys). */
export const topicClaimKey = (topic: string): string => `topic\u0000${topic}`;

/** The claim key of a data table (see claimKeys). */
export const tableClaimKey = (database: string, table: string): string =>
  `table\u0000${database}\u0000${table}`;

/** The topics a resolved spec claims: the data topic and, when enabled, the dead-letter topic. */
function specTopics(spec: ResolvedSpec): string[] {
  return [spec.kafka.topic.name, ...(spec.deadLetter.enabled ? [spec.deadLetter.topic] : [])];
}

/** The claim keys of `spec`'s topics: the only ones an olderTopicClaimant of it can share. */
export function topicClaimKeys(spec: ResolvedSpec): string[] {
  return specTopics(spec).map(topicClaimKey);
}

/**
 * What `lp` claims as index keys (its topics and its data table), for ClaimIndex: a pipeline can
 * only be an older claimant of another one sharing one of these keys. Empty when unresolvable.
 */
export function claimKeys(lp: LogPipeline): string[] {
  const view = claimView(lp);
  if (!view) return [];
  return [...view.topics.map(topicClaimKey), tableClaimKey(view.database, view.table)];
}

function oldest(
  lp: LogPipeline,
  all: Iterable<LogPipeline>,
  same: (other: LogPipeline, view: ClaimView) => boolean,
): LogPipeline | undefined {
  let winner: LogPipeline | undefined;
  for (const other of all) {
    if (other.metadata.uid === lp.metadata.uid || other.metadata.deletionTimestamp) continue;
    if (other.metadata.namespace === lp.metadata.namespace && other.metadata.name === lp.metadata.name)
      continue;
    const view = claimView(other);
    if (!view || !same(other, view)) continue;
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
  const topics = new Set(specTopics(spec));
  const brokers = normalizedBrokers(spec.kafka.bootstrapServers);
  return oldest(lp, all, (other, o) => {
    if (!o.topics.some((n) => topics.has(n))) return false;
    const recorded = other.status?.topic?.clusterId;
    return recorded ? recorded === clusterId : o.brokers === brokers;
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
    if (o.database !== database || o.table !== table) return false;
    // A URL alone is ambiguous (a short service name resolves per namespace): it counts only for a
    // pipeline that has recorded no server yet.
    const recorded = other.status?.table?.serverIdentity;
    return recorded ? recorded === identity : o.url === url;
  });
}
