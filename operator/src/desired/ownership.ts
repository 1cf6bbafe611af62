/**
 * Ownership of external things (tables, topics), pure. Every table and topic a pipeline manages
 * records its one owning LogPipeline on the thing itself, in a versioned, parseable form:
 *
 *   logpipeline.io/owner=v1:<namespace>/<name>/<uid>[@YYYY-MM-DD]
 *
 * The optional date (topics only) says when the record was last written: Kafka forgets an empty
 * group's offsets after `offsets.retention.minutes`, so the operator renews a topic's record once
 * it is a day old, and a restarted operator, reading the date, rewrites nothing. Table records stay
 * undated (a COMMENT that changed daily would be drift).
 *
 * Namespace and name are DNS labels and the uid a UUID, so the record needs no escaping and a
 * slash can never be part of a field. Before any CREATE/ALTER/DROP or topic change the operator
 * reads the record and judges the claim here: its own record proceeds, another pipeline's record
 * is a Conflict, and a thing without a record (or left by an earlier incarnation of the same
 * namespace/name) is taken over only when the pipeline asks to adopt it (annotation
 * `logpipeline.io/adopt: "true"`).
 */
import type { LogPipeline } from '../api/types';

/** One owning LogPipeline. */
export interface Owner {
  namespace: string;
  name: string;
  uid: string;
}

/** Annotation by which a pipeline asks to adopt unowned (or its earlier incarnation's) tables and topics. */
export const ADOPT_ANNOTATION = 'logpipeline.io/adopt';

const PREFIX = 'logpipeline.io/owner=';
const RECORD =
  /^logpipeline\.io\/owner=v(\d+):([a-z0-9-]{1,63})\/([a-z0-9.-]{1,253})\/([A-Za-z0-9-]{1,64})(?:@(\d{4}-\d{2}-\d{2}))?$/;

/** The owner record of a pipeline object. */
export function ownerOf(lp: LogPipeline): Owner {
  return { namespace: lp.metadata.namespace, name: lp.metadata.name, uid: lp.metadata.uid ?? '' };
}

/** True when the pipeline carries the adoption annotation. */
export function wantsAdoption(lp: LogPipeline): boolean {
  return lp.metadata.annotations?.[ADOPT_ANNOTATION] === 'true';
}

/** The record written on a thing (a table COMMENT; a topic's owner metadata, dated `on` that day). */
export function ownerRecord(owner: Owner, on?: Date): string {
  const date = on ? `@${on.toISOString().slice(0, 10)}` : '';
  return `${PREFIX}v1:${owner.namespace}/${owner.name}/${owner.uid}${date}`;
}

/** The day a dated record was written (UTC midnight, ms), or undefined for an undated or foreign one. */
export function ownerRecordDate(text: string | null | undefined): number | undefined {
  const m = RECORD.exec((text ?? '').trim());
  if (!m || m[1] !== '1' || !m[5]) return undefined;
  const t = Date.parse(`${m[5]}T00:00:00Z`);
  return Number.isNaN(t) ? undefined : t;
}

/** How long a dated topic owner record is kept before it is written again. */
export const OWNER_RENEW_MS = 24 * 3600_000;

/** True when a topic's owner record must be (re)written: missing, undated, or older than a day. */
export function ownerRecordStale(text: string | undefined, nowMs: number): boolean {
  const date = ownerRecordDate(text);
  return date === undefined || nowMs - date > OWNER_RENEW_MS;
}

/** `namespace/name/uid`, as status shows it. */
export function ownerString(owner: Owner): string {
  return `${owner.namespace}/${owner.name}/${owner.uid}`;
}

/** Parses a record; undefined for anything else (no record, a foreign comment, an unknown version). */
export function parseOwnerComment(text: string | null | undefined): Owner | undefined {
  const m = RECORD.exec((text ?? '').trim());
  if (!m || m[1] !== '1') return undefined;
  return { namespace: m[2], name: m[3], uid: m[4] };
}

/** What to do about one existing thing. */
export type ClaimVerdict =
  | { kind: 'owned' }
  | { kind: 'stamp'; why: 'adopted' | 'legacy' }
  | { kind: 'conflict'; owner?: Owner; message: string };

/** How the caller may take over a thing without this pipeline's record. */
export interface ClaimOptions {
  /** The pipeline asked to adopt (annotation). */
  adopt: boolean;
  /**
   * The pipeline's own status already records this thing on this server/cluster and no older
   * pipeline claims it: it was created by an operator version that wrote no records.
   */
  legacy: boolean;
}

/**
 * Judges the claim of `me` on an existing thing whose stored record is `text`; `what` names it
 * ("table logs.fw") in the conflict message.
 */
export function judgeClaim(
  text: string | undefined,
  me: Owner,
  what: string,
  opts: ClaimOptions,
): ClaimVerdict {
  const recorded = parseOwnerComment(text);
  if (recorded && recorded.uid === me.uid) return { kind: 'owned' };
  if (recorded && (recorded.namespace !== me.namespace || recorded.name !== me.name)) {
    return {
      kind: 'conflict',
      owner: recorded,
      message: `${what} is owned by LogPipeline ${recorded.namespace}/${recorded.name} (uid ${recorded.uid}); this pipeline must name its own`,
    };
  }
  if (opts.adopt) return { kind: 'stamp', why: 'adopted' };
  if (recorded) {
    return {
      kind: 'conflict',
      owner: recorded,
      message: `${what} was owned by an earlier LogPipeline ${recorded.namespace}/${recorded.name} (uid ${recorded.uid}); annotate ${ADOPT_ANNOTATION}="true" to adopt it`,
    };
  }
  if (opts.legacy) return { kind: 'stamp', why: 'legacy' };
  return {
    kind: 'conflict',
    message: `${what} exists with no owner record; annotate ${ADOPT_ANNOTATION}="true" to adopt it`,
  };
}
