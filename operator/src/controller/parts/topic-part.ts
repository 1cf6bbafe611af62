/**
 * The Kafka topic as an external part: ensures the pipeline's topic (and its dead-letter topic)
 * through one shared admin client per Kafka cluster, and deletes them for deletionPolicy Delete
 * only on the cluster recorded at creation.
 */
import type { ResolvedSpec } from '../../api/defaults';
import type { LogPipeline, LogPipelineStatus } from '../../api/types';
import {
  KafkaAdminPool,
  KafkaApplyError,
  errorMessage,
  kafkaConnection,
  kafkaConnectionKey,
  type KafkaConnection,
} from '../../apply/kafka-client';
import type { KafkaConnectionUse } from '../../apply/kafka-connection-use';
import {
  deleteTopic,
  ensureTopicBatched,
  type AdminRunner,
  type TopicOutcome,
} from '../../apply/kafka-topic';
import type { TopicBatcher, TopicMeta } from '../../apply/kafka-topic-batch';
import { TopicBatchers } from '../../apply/kafka-topic-batchers';
import type { PipelineEvent } from '../../apply/kube';
import { deferredTopicWork } from '../../apply/request-counts';
import { buildDeadLetterTopicSpec, buildTopicSpec, type TopicSpec } from '../../desired/topic';
import type { ExternalPart, PartContext, PartOutcome } from '../external';
import {
  judgeClaim,
  ownerOf,
  ownerRecord,
  ownerRecordStale,
  ownerString,
  wantsAdoption,
} from '../../desired/ownership';
import { CONFLICT } from '../../status/conditions';
import { sanitizeMessage } from '../../status/sanitize';
import { olderTopicClaimant, topicClaimKeys } from './claims';
import { changeEvents } from './change-events';

/** Reads the Kafka credentials a spec references; missing keys stay undefined. */
export async function kafkaConnectionFor(spec: ResolvedSpec, ctx: PartContext): Promise<KafkaConnection> {
  const { sasl, tls } = spec.kafka;
  return kafkaConnection(spec.kafka, {
    saslUsername: sasl ? await ctx.readSecretKey(sasl.secretName, sasl.usernameKey) : undefined,
    saslPassword: sasl ? await ctx.readSecretKey(sasl.secretName, sasl.passwordKey) : undefined,
    caPem: tls?.caSecretName && tls.caKey ? await ctx.readSecretKey(tls.caSecretName, tls.caKey) : undefined,
  });
}

/**
 * The claim check of one existing topic: conflict message, or whether to (re)write our record.
 * A topic this process created for this pipeline whose record is not stored yet (the commit failed)
 * is ours: it is stamped, never judged foreign.
 */
async function checkTopicClaim(
  batch: TopicBatcher,
  topic: string,
  ctx: PartContext,
  clusterId: string,
): Promise<{ conflict?: string; stamp: boolean }> {
  const me = ownerOf(ctx.pipeline);
  const recorded = ctx.pipeline.status?.topic;
  let text: string | undefined;
  try {
    text = await batch.owners.get(topic);
  } catch (err) {
    // Unreadable for now, but our status already holds it on this cluster: judge it next time
    // rather than flip TopicReady over a transient failure.
    const ours = recorded?.clusterId === clusterId && recorded.owner === ownerString(me);
    if (ours) return { stamp: false };
    throw err instanceof KafkaApplyError ? err : new KafkaApplyError('KafkaError', String(err));
  }
  // Our status already names this topic on this cluster: an upgrade from an operator version
  // without records, or our record expired with the owner group's offsets (older claims were
  // checked by the caller).
  const legacy =
    batch.createdBy(topic, me.uid) ||
    (recorded?.clusterId === clusterId &&
      (recorded.owner === undefined || recorded.owner === ownerString(me)));
  const verdict = judgeClaim(text, me, `topic ${topic}`, {
    adopt: wantsAdoption(ctx.pipeline),
    legacy,
  });
  if (verdict.kind === 'conflict') return { conflict: verdict.message, stamp: false };
  // Renewal is judged from the date in the record itself, so a restart rewrites nothing.
  return { stamp: verdict.kind === 'stamp' || ownerRecordStale(text, Date.now()) };
}

interface TopicCheck {
  spec: TopicSpec;
  found?: TopicMeta;
  stamp: boolean;
}

/** Checks every topic of the pipeline (older claims in the cache, then each existing topic's record). */
async function claimTopics(
  batch: TopicBatcher,
  specs: TopicSpec[],
  spec: ResolvedSpec,
  ctx: PartContext,
  all: Iterable<LogPipeline>,
): Promise<{ clusterId: string; checks: TopicCheck[] } | { conflict: string }> {
  const found = await Promise.all(specs.map((t) => call(() => batch.describes.get(t.topic))));
  const clusterId = await call(() => batch.clusterId());
  const older = olderTopicClaimant(ctx.pipeline, spec, clusterId, all);
  if (older) {
    const who = `${older.metadata.namespace}/${older.metadata.name}`;
    return { conflict: `topic ${spec.kafka.topic.name} is claimed by the older LogPipeline ${who}` };
  }
  const checks = await Promise.all(
    specs.map(async (t, i) => {
      if (!found[i]) return { spec: t, stamp: true };
      const c = await checkTopicClaim(batch, t.topic, ctx, clusterId);
      return { spec: t, found: found[i], ...c };
    }),
  );
  const lost = checks.find((c) => 'conflict' in c && c.conflict);
  if (lost && 'conflict' in lost && lost.conflict) return { conflict: lost.conflict };
  return { clusterId, checks };
}

/** Batcher calls fail with plain errors too; the part reports them as KafkaApplyError (retry). */
async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof KafkaApplyError) throw err;
    throw new KafkaApplyError('KafkaError', errorMessage(err));
  }
}

/**
 * Ensures one topic and writes our owner record (dated today) where the claim asked for it, on a
 * topic created by this call, and when the stored one is a day old (renewal). A topic that was
 * missing at the claim check but created meanwhile by someone else is judged now.
 */
async function ensureOne(
  batch: TopicBatcher,
  withAdmin: AdminRunner,
  check: TopicCheck,
  clusterId: string,
  ctx: PartContext,
  main: boolean,
): Promise<{ outcome: TopicOutcome; ownerPending?: boolean } | { conflict: string }> {
  const me = ownerOf(ctx.pipeline);
  // The main topic's max.message.bytes is in status.topic (and judges spec.ingest's packing): read
  // it at creation too, so the creating outcome is the steady one — the part memo keeps it, and a
  // later recheck or restart finds nothing new to write.
  // Remembered as ours the moment it is created: a failure after that (e.g. reading the new
  // topic's configs) must not leave a topic the next reconcile judges "exists with no owner record".
  const outcome = await ensureTopicBatched(batch, withAdmin, check.spec, check.found, clusterId, main, () =>
    batch.noteCreated(check.spec.topic, me.uid),
  );
  let stamp = check.stamp;
  if (!outcome.created && !check.found && outcome.exists) {
    // Created concurrently, by a pipeline of another operator or another of ours.
    const now = await call(() => batch.owners.get(check.spec.topic));
    const v = judgeClaim(now, me, `topic ${check.spec.topic}`, { adopt: false, legacy: true });
    if (v.kind === 'conflict') return { conflict: v.message };
    stamp = v.kind === 'stamp' || ownerRecordStale(now, Date.now());
  }
  if (outcome.exists && stamp) {
    try {
      await call(() => batch.commitOwner(check.spec.topic, ownerRecord(me, new Date())));
    } catch (err) {
      if (!ownerRecordNotYet(err, outcome.created)) throw err;
      // Ours all the same (noteCreated above; status.topic names us): the next reconcile writes it.
      return { outcome, ownerPending: true };
    }
  }
  return { outcome };
}

/**
 * Whether an owner-record commit failed only because the topic was created a moment ago: the owner
 * group's coordinator does not know it yet (UNKNOWN_TOPIC_OR_PARTITION, "does not host this
 * topic-partition"). Not a failure of the topic (no TopicReady=False, no Warning, no second status
 * write): the record is written shortly. Any other error, or on a topic this call did not create,
 * is reported as before.
 */
export function ownerRecordNotYet(err: unknown, created: boolean): boolean {
  return created && err instanceof KafkaApplyError && err.type === 'UNKNOWN_TOPIC_OR_PARTITION';
}

/** How soon a new topic's configs (or owner record) are tried again when the broker did not know it yet. */
const LIMIT_RETRY_MS = 2_000;

/**
 * Creates the Topic part; `pipelines` lists every cached LogPipeline (for claim conflicts); `use`
 * learns which connection each pipeline uses (the clients of rotated credentials are closed).
 */
export function createTopicPart(
  pool: KafkaAdminPool,
  pipelines: (naming?: readonly string[]) => Iterable<LogPipeline>,
  batchers: TopicBatchers = new TopicBatchers(),
  use?: KafkaConnectionUse,
): ExternalPart {
  const connect = async (spec: ResolvedSpec, ctx: PartContext) => {
    const conn = await kafkaConnectionFor(spec, ctx);
    use?.record(spec.uid, kafkaConnectionKey(conn));
    return conn;
  };
  const conflict = (message: string): PartOutcome => ({
    status: 'False',
    reason: CONFLICT,
    message,
    conflict: true,
  });
  return {
    name: 'Topic',
    async ensure(spec: ResolvedSpec, ctx: PartContext): Promise<PartOutcome> {
      const topic = buildTopicSpec(spec);
      if (!topic.ok) return { status: 'False', reason: topic.reason, message: topic.message };
      const dlq = buildDeadLetterTopicSpec(spec);
      try {
        const conn = await connect(spec, ctx);
        const batch = batchers.for(conn);
        const specs = [topic.value, ...(dlq?.ok ? [dlq.value] : [])];
        const claims = await claimTopics(batch, specs, spec, ctx, pipelines(topicClaimKeys(spec)));
        if ('conflict' in claims) return conflict(claims.conflict);
        const withAdmin: AdminRunner = (fn) => pool.withAdmin(conn, fn);
        const done = await Promise.all(
          claims.checks.map((c, i) => ensureOne(batch, withAdmin, c, claims.clusterId, ctx, i === 0)),
        );
        const lost = done.find((d) => 'conflict' in d);
        if (lost && 'conflict' in lost) return conflict(lost.conflict);
        const [main, dead] = done.map((d) => ('outcome' in d ? d.outcome : undefined)) as [
          TopicOutcome,
          TopicOutcome | undefined,
        ];
        // One Event naming each topic's changes (main and dead-letter topic).
        const named = (t: TopicOutcome | undefined, i: number) =>
          (t?.changes ?? []).map((c) => `topic ${specs[i].topic}: ${c}`);
        const events: PipelineEvent[] = changeEvents('TopicChanged', [...named(main, 0), ...named(dead, 1)]);
        for (const w of main.warnings) events.push({ type: 'Warning', reason: 'TopicDrift', message: w });
        const notReady = !main.ready ? main : dead && !dead.ready ? dead : undefined;
        // A new topic whose limit the broker could not describe yet: looked at again shortly (an
        // outcome with a requeue is not memoized), without calling it a failure.
        // So is a new topic whose owner record the coordinator could not take yet.
        const ownerPending = done.some((d) => 'ownerPending' in d && d.ownerPending);
        if (ownerPending) deferredTopicWork.inc('topic owner record');
        if (main.limitPending) deferredTopicWork.inc('topic limit');
        const soon = main.limitPending || ownerPending ? { requeueAfterMs: LIMIT_RETRY_MS } : {};
        return {
          status: notReady ? 'False' : 'True',
          reason: notReady ? notReady.reason : 'TopicReady',
          message: notReady ? notReady.message : main.message,
          observed: {
            name: topic.value.topic,
            partitions: main.partitions,
            clusterId: main.clusterId,
            topicId: main.topicId,
            owner: ownerString(ownerOf(ctx.pipeline)),
            ...(main.maxMessageBytes ? { maxMessageBytes: main.maxMessageBytes } : {}),
          },
          events,
          ...soon,
        };
      } catch (err) {
        if (err instanceof KafkaApplyError)
          return { status: 'False', reason: err.reason, message: sanitizeMessage(err), retry: true };
        throw err;
      }
    },
    async delete(
      spec: ResolvedSpec,
      recorded: LogPipelineStatus | undefined,
      ctx: PartContext,
    ): Promise<PipelineEvent | void> {
      const clusterId = recorded?.topic?.clusterId;
      if (!clusterId)
        return {
          type: 'Warning',
          reason: 'TopicNotDeleted',
          message: 'no Kafka cluster id was recorded; topic left in place',
        };
      const conn = await connect(spec, ctx);
      const names = [spec.kafka.topic.name, ...(spec.deadLetter.enabled ? [spec.deadLetter.topic] : [])];
      const messages: string[] = [];
      let kept = false;
      for (const name of names) {
        const claim = { owner: ownerOf(ctx.pipeline), guard: ctx.guard };
        const out = await pool.withAdmin(conn, (admin) => deleteTopic(admin, name, clusterId, claim));
        messages.push(out.message);
        if (out.reason === 'ClusterIdMismatch')
          return { type: 'Warning', reason: out.reason, message: out.message };
        if (out.reason === 'TopicNotOwned') kept = true;
      }
      if (kept) return { type: 'Warning', reason: 'TopicNotOwned', message: messages.join('; ') };
      return { type: 'Normal', reason: 'TopicDeleted', message: messages.join('; ') };
    },
  };
}
