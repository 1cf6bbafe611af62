/**
 * The Kafka topic as an external part: ensures the pipeline's topic (and its dead-letter topic)
 * through one shared admin client per Kafka cluster, and deletes them for deletionPolicy Delete
 * only on the cluster recorded at creation.
 */
import type { Admin } from 'kafkajs';
import type { ResolvedSpec } from '../../api/defaults';
import type { LogPipeline, LogPipelineStatus } from '../../api/types';
import {
  KafkaAdminPool,
  KafkaApplyError,
  kafkaConnection,
  type KafkaConnection,
} from '../../apply/kafka-client';
import { OwnerRecordUnreadable, readTopicOwner, writeTopicOwner } from '../../apply/kafka-owner';
import { deleteTopic, describeTopic, ensureTopic } from '../../apply/kafka-topic';
import { countKafkaWrite } from '../../apply/kafka-writes';
import type { PipelineEvent } from '../../apply/kube';
import { buildDeadLetterTopicSpec, buildTopicSpec } from '../../desired/topic';
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
import { olderTopicClaimant } from './claims';

/** Reads the Kafka credentials a spec references; missing keys stay undefined. */
export async function kafkaConnectionFor(spec: ResolvedSpec, ctx: PartContext): Promise<KafkaConnection> {
  const { sasl, tls } = spec.kafka;
  return kafkaConnection(spec.kafka, {
    saslUsername: sasl ? await ctx.readSecretKey(sasl.secretName, sasl.usernameKey) : undefined,
    saslPassword: sasl ? await ctx.readSecretKey(sasl.secretName, sasl.passwordKey) : undefined,
    caPem: tls?.caSecretName && tls.caKey ? await ctx.readSecretKey(tls.caSecretName, tls.caKey) : undefined,
  });
}

/** The claim check of one topic: conflict message, or whether to (re)write our record. */
async function checkTopicClaim(
  admin: Admin,
  topic: string,
  ctx: PartContext,
  clusterId: string,
): Promise<{ conflict?: string; stamp: boolean; exists: boolean }> {
  if (!(await describeTopic(admin, topic))) return { stamp: true, exists: false };
  const me = ownerOf(ctx.pipeline);
  const recorded = ctx.pipeline.status?.topic;
  let text: string | undefined;
  try {
    text = await readTopicOwner(admin, topic);
  } catch (err) {
    // Unreadable for now, but our status already holds it on this cluster: judge it next time
    // rather than flip TopicReady over a client-side metadata race.
    const ours = recorded?.clusterId === clusterId && recorded.owner === ownerString(me);
    if (err instanceof OwnerRecordUnreadable && ours) return { stamp: false, exists: true };
    throw err;
  }
  // Our status already names this topic on this cluster: an upgrade from an operator version
  // without records, or our record expired with the owner group's offsets (older claims were
  // checked by the caller).
  const legacy =
    recorded?.clusterId === clusterId && (recorded.owner === undefined || recorded.owner === ownerString(me));
  const verdict = judgeClaim(text, me, `topic ${topic}`, {
    adopt: wantsAdoption(ctx.pipeline),
    legacy,
  });
  if (verdict.kind === 'conflict') return { conflict: verdict.message, stamp: false, exists: true };
  // Renewal is judged from the date in the record itself, so a restart rewrites nothing.
  return { stamp: verdict.kind === 'stamp' || ownerRecordStale(text, Date.now()), exists: true };
}

type Claims = { clusterId: string; checks: Array<{ name: string; stamp: boolean; exists: boolean }> };

/** Checks every topic of the pipeline (older claims in the cache, then each topic's record). */
async function claimTopics(
  admin: Admin,
  names: string[],
  spec: ResolvedSpec,
  ctx: PartContext,
  all: Iterable<LogPipeline>,
): Promise<Claims | { conflict: string }> {
  const { clusterId } = await admin.describeCluster();
  const older = olderTopicClaimant(ctx.pipeline, spec, clusterId, all);
  if (older) {
    const who = `${older.metadata.namespace}/${older.metadata.name}`;
    return { conflict: `topic ${spec.kafka.topic.name} is claimed by the older LogPipeline ${who}` };
  }
  const checks: Claims['checks'] = [];
  for (const name of names) {
    const c = await checkTopicClaim(admin, name, ctx, clusterId);
    if (c.conflict) return { conflict: c.conflict };
    checks.push({ name, stamp: c.stamp, exists: c.exists });
  }
  return { clusterId, checks };
}

/**
 * Writes our owner record (dated today) where the claim asked for it, on topics created just now,
 * and when the stored one is a day old (renewal); returns a conflict message when a topic created
 * concurrently carries another record.
 */
async function recordOwners(
  pool: KafkaAdminPool,
  conn: KafkaConnection,
  claims: Claims,
  ctx: PartContext,
): Promise<string | undefined> {
  const me = ownerOf(ctx.pipeline);
  for (const c of claims.checks) {
    if (!c.exists) {
      // Created just now: by us, or by a pipeline of another operator at the same moment.
      const now = await pool.withAdmin(conn, (admin) => readTopicOwner(admin, c.name));
      const v = judgeClaim(now, me, `topic ${c.name}`, { adopt: false, legacy: true });
      if (v.kind === 'conflict') return v.message;
    }
    if (!c.exists || c.stamp) {
      countKafkaWrite('OwnerRecordCommit');
      await writeTopicOwner(conn, c.name, ownerRecord(me, new Date()));
    }
  }
  return undefined;
}

/** Creates the Topic part; `pipelines` lists every cached LogPipeline (for claim conflicts). */
export function createTopicPart(pool: KafkaAdminPool, pipelines: () => Iterable<LogPipeline>): ExternalPart {
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
      const names = [topic.value.topic, ...(dlq?.ok ? [dlq.value.topic] : [])];
      try {
        const conn = await kafkaConnectionFor(spec, ctx);
        const claims = await pool.withAdmin(conn, (admin) =>
          claimTopics(admin, names, spec, ctx, pipelines()),
        );
        if ('conflict' in claims) return conflict(claims.conflict);
        const main = await pool.withAdmin(conn, (admin) => ensureTopic(admin, topic.value));
        const dead = dlq?.ok
          ? await pool.withAdmin(conn, (admin) => ensureTopic(admin, dlq.value))
          : undefined;
        const lost = await recordOwners(pool, conn, claims, ctx);
        if (lost) return conflict(lost);
        const events: PipelineEvent[] = [...main.changes, ...(dead?.changes ?? [])].map((c) => ({
          type: 'Normal',
          reason: 'TopicChanged',
          message: c,
        }));
        for (const w of main.warnings) events.push({ type: 'Warning', reason: 'TopicDrift', message: w });
        const notReady = !main.ready ? main : dead && !dead.ready ? dead : undefined;
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
      const conn = await kafkaConnectionFor(spec, ctx);
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
