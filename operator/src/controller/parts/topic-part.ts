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
  kafkaConnection,
  type KafkaConnection,
} from '../../apply/kafka-client';
import { deleteTopic, ensureTopic } from '../../apply/kafka-topic';
import type { PipelineEvent } from '../../apply/kube';
import { buildDeadLetterTopicSpec, buildTopicSpec } from '../../desired/topic';
import type { ExternalPart, PartContext, PartOutcome } from '../external';
import { olderClaimant } from './claims';

/** Reads the Kafka credentials a spec references; missing keys stay undefined. */
export async function kafkaConnectionFor(spec: ResolvedSpec, ctx: PartContext): Promise<KafkaConnection> {
  const { sasl, tls } = spec.kafka;
  return kafkaConnection(spec.kafka, {
    saslUsername: sasl ? await ctx.readSecretKey(sasl.secretName, sasl.usernameKey) : undefined,
    saslPassword: sasl ? await ctx.readSecretKey(sasl.secretName, sasl.passwordKey) : undefined,
    caPem: tls?.caSecretName && tls.caKey ? await ctx.readSecretKey(tls.caSecretName, tls.caKey) : undefined,
  });
}

/** Creates the Topic part; `pipelines` lists every cached LogPipeline (for claim conflicts). */
export function createTopicPart(pool: KafkaAdminPool, pipelines: () => Iterable<LogPipeline>): ExternalPart {
  return {
    name: 'Topic',
    async ensure(spec: ResolvedSpec, ctx: PartContext): Promise<PartOutcome> {
      const claimant = olderClaimant(ctx.pipeline, pipelines());
      if (claimant) {
        return {
          status: 'False',
          reason: 'TopicClaimConflict',
          message: `topic ${spec.kafka.topic.name} is already managed by LogPipeline ${claimant.metadata.namespace}/${claimant.metadata.name}`,
        };
      }
      const topic = buildTopicSpec(spec);
      if (!topic.ok) return { status: 'False', reason: topic.reason, message: topic.message };
      const dlq = buildDeadLetterTopicSpec(spec);
      try {
        const conn = await kafkaConnectionFor(spec, ctx);
        const main = await pool.withAdmin(conn, (admin) => ensureTopic(admin, topic.value));
        const dead = dlq?.ok
          ? await pool.withAdmin(conn, (admin) => ensureTopic(admin, dlq.value))
          : undefined;
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
          },
          events,
        };
      } catch (err) {
        if (err instanceof KafkaApplyError)
          return { status: 'False', reason: err.reason, message: err.message, retry: true };
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
      for (const name of names) {
        const out = await pool.withAdmin(conn, (admin) => deleteTopic(admin, name, clusterId));
        messages.push(out.message);
        if (out.reason === 'ClusterIdMismatch')
          return { type: 'Warning', reason: out.reason, message: out.message };
      }
      return { type: 'Normal', reason: 'TopicDeleted', message: messages.join('; ') };
    },
  };
}
