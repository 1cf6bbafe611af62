/**
 * Writes a LogPipeline's status once per reconcile, and only when it changed: conditions are
 * stamped (lastTransitionTime kept unless the status flips), compared with what is stored, and
 * merge-patched through the status subresource. Condition flips become Events.
 */
import type { Condition, LogPipeline, LogPipelineStatus } from '../api/types';
import { EventQueue } from '../apply/event-queue';
import { EventRecorder } from '../apply/event-recorder';
import { patchPipelineStatus, type PipelineEvent } from '../apply/kube';
import type { KubeClient } from '../apply/kube-rest';
import { stableJson } from '../../../common/src/stable-json';
import type { Logger } from '../../../common/src/log';
import { conditionFlips, isWarning, mergeConditions, type ConditionInput } from '../status/conditions';
import { sanitizeMessage } from '../status/sanitize';

/** Longest condition or Event message (errors inside are already cut to 256 where they are caught). */
const MAX_STATUS_MESSAGE = 1024;

/** Receives every pipeline's current conditions (for metrics). */
export interface StatusObserver {
  conditions(namespace: string, name: string, conditions: Condition[]): void;
  forget(namespace: string, name: string): void;
}

/** The status fields the operator computes; others (e.g. written by other tools) are left alone. */
const OWNED: Array<keyof LogPipelineStatus> = [
  'observedGeneration',
  'conditions',
  'workers',
  'topic',
  'table',
  'lag',
  'ingest',
];

function owned(
  status: LogPipelineStatus | undefined,
  keys: Array<keyof LogPipelineStatus>,
): Partial<LogPipelineStatus> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (status?.[k] !== undefined) out[k] = status[k];
  return out;
}

/** How long the status we wrote stands in for a cache that has not caught up with it. */
const WRITTEN_TTL_MS = 60_000;

/** The status we last wrote and the version of the object we wrote it over. */
interface Written {
  uid?: string;
  baseVersion?: string;
  status: LogPipelineStatus;
  at: number;
}

function withoutNulls(status: LogPipelineStatus): LogPipelineStatus {
  return Object.fromEntries(Object.entries(status).filter(([, v]) => v !== null)) as LogPipelineStatus;
}

/** Status and Event writer for LogPipelines. */
export class StatusWriter {
  private readonly written = new Map<string, Written>();
  /** Deduplicating, rate-limited Event writer shared by everything that reports on pipelines. */
  readonly events: EventRecorder;
  /** Background sender in front of `events`: a reconcile never waits for an Event POST. */
  private readonly queue: EventQueue;

  constructor(
    private readonly client: KubeClient,
    identity: string,
    private readonly log: Logger,
    private readonly observer?: StatusObserver,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.events = new EventRecorder(client, identity, { now: () => this.now().getTime() });
    this.queue = new EventQueue(this.events, {
      now: () => this.now().getTime(),
      onFailed: (lp, ev, err) =>
        this.log.warn('event not recorded', {
          namespace: lp.metadata.namespace,
          name: lp.metadata.name,
          reason: ev.reason,
          err: err.message,
        }),
    });
  }

  /**
   * Computes the status from `inputs` (conditions) and `extra` (workers, topic, table, lag) on top
   * of the stored one, writes it if it differs, and emits Events for flipped conditions.
   */
  async write(
    cached: LogPipeline,
    inputs: ConditionInput[],
    extra: LogPipelineStatus,
    removeTypes: readonly string[] = [],
  ): Promise<boolean> {
    const lp = this.latest(cached);
    const generation = lp.metadata.generation ?? 0;
    // Conditions of a part that no longer exists (e.g. IngestReady once spec.ingest is removed).
    const prev = lp.status?.conditions?.filter((c) => !removeTypes.includes(c.type));
    // The net under every message: whatever a part returned, status stays short and foreign-free.
    const safe = inputs.map((c) => ({ ...c, message: sanitizeMessage(c.message, MAX_STATUS_MESSAGE) }));
    const conditions = mergeConditions(
      prev,
      safe,
      generation,
      this.now()
        .toISOString()
        .replace(/\.\d{3}Z$/, 'Z'),
    );
    const next: LogPipelineStatus = {
      ...owned(lp.status, OWNED),
      ...extra,
      observedGeneration: generation,
      conditions,
    };
    const keys = OWNED.filter((k) => next[k] !== undefined || lp.status?.[k] !== undefined);
    this.observer?.conditions(lp.metadata.namespace, lp.metadata.name, conditions);
    if (stableJson(owned(lp.status, keys)) === stableJson(owned(next, keys))) return false;
    const stored = await patchPipelineStatus(this.client, lp, next);
    this.remember(cached, stored, next);
    for (const f of conditionFlips(prev, conditions)) {
      const type = isWarning(f.type, f.to) ? 'Warning' : 'Normal';
      await this.event(lp, {
        type,
        reason: f.reason,
        message: `${f.type} is ${f.to}${f.from ? ` (was ${f.from})` : ''}: ${f.message}`,
      });
    }
    return true;
  }

  /**
   * The pipeline with the status we last wrote when the cache has not seen that write yet (its
   * object is still the one we patched): judging the stale status would write the same status
   * and say the same flips again (issue 18: ~1 extra status write per new pipeline under load).
   */
  latest(cached: LogPipeline): LogPipeline {
    const key = `${cached.metadata.namespace}/${cached.metadata.name}`;
    const w = this.written.get(key);
    if (!w) return cached;
    const { uid, resourceVersion } = cached.metadata;
    if (w.uid === uid && w.baseVersion === resourceVersion) return { ...cached, status: w.status };
    this.written.delete(key);
    return cached;
  }

  private remember(cached: LogPipeline, stored: LogPipeline | undefined, next: LogPipelineStatus): void {
    const key = `${cached.metadata.namespace}/${cached.metadata.name}`;
    const t = this.now().getTime();
    this.written.delete(key);
    this.written.set(key, {
      uid: cached.metadata.uid,
      baseVersion: cached.metadata.resourceVersion,
      // What the merge patch left stored (nulls delete), whatever the answer carried.
      status: withoutNulls({ ...stored?.status, ...next }),
      at: t,
    });
    // The cache catches up within seconds: older entries are only memory (kept in write order).
    for (const [k, w] of this.written) {
      if (t - w.at < WRITTEN_TTL_MS) break;
      this.written.delete(k);
    }
  }

  /**
   * Queues an Event on the pipeline and returns at once (sent in the background, event-queue.ts);
   * a failure is logged, never thrown. `flushEvents` waits for the queue.
   */
  async event(lp: LogPipeline, ev: PipelineEvent): Promise<void> {
    const safe = { ...ev, message: sanitizeMessage(ev.message, MAX_STATUS_MESSAGE) };
    const { namespace, name, uid, resourceVersion } = lp.metadata;
    // Only what names the object: a queued Event must not keep a whole pipeline copy alive.
    const involved = {
      apiVersion: lp.apiVersion,
      kind: lp.kind,
      metadata: { namespace, name, uid, resourceVersion },
    };
    this.queue.enqueue(involved as LogPipeline, safe);
  }

  /** Resolves once every queued Event was sent (operator shutdown, finalizer release, tests). */
  flushEvents(): Promise<void> {
    return this.queue.flush();
  }

  /** Forgets a deleted pipeline (drops its metrics series). */
  forget(namespace: string, name: string): void {
    this.written.delete(`${namespace}/${name}`);
    this.observer?.forget(namespace, name);
    this.events.forget(namespace, name);
  }
}
