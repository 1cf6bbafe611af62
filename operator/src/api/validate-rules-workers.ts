/**
 * Cross-field rules of the workers' replica counts, in the shape of validate-rules.ts (which lists
 * them in PIPELINE_RULES): min within max, both within the topic's partitions, and a fixed count
 * never beside autoscaling.
 */
import { celLet, PARTITIONS_CEL, partitionsOf, withinPartitionsCel } from './validate-rules-cel';
import { define, type PipelineRule } from './validate-rules-define';
import type { AutoscalingSpec, LogPipelineSpec, WorkersSpec } from './types';

/** The CEL path of the autoscaling block from the spec. */
const as = 'self.workers.autoscaling';

/** Rules on the workers' replica counts, against each other and the topic's partitions. */
export const REPLICA_RULES: readonly PipelineRule[] = [
  define<AutoscalingSpec>({
    id: 'min-replicas-within-max',
    at: 'spec.workers.autoscaling',
    rule: '!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas',
    messageExpression: `'spec.workers.autoscaling.minReplicas (%d) must not exceed maxReplicas (%d)'.format([self.minReplicas, self.maxReplicas])`,
    fieldPath: '.minReplicas',
    holds: (self) =>
      self.minReplicas === undefined ||
      self.maxReplicas === undefined ||
      self.minReplicas <= self.maxReplicas,
    explain: (self) =>
      `spec.workers.autoscaling.minReplicas (${self.minReplicas}) must not exceed maxReplicas (${self.maxReplicas})`,
  }),
  define<LogPipelineSpec>({
    id: 'max-replicas-within-partitions',
    at: 'spec',
    rule: `!has(self.workers) || !has(${as}) || ${celLet(as, 'scaling', `!has(scaling.maxReplicas) || ${withinPartitionsCel('scaling.maxReplicas')}`)}`,
    messageExpression: `'spec.workers.autoscaling.maxReplicas (%d) must not exceed spec.kafka.topic.partitions (%d): a consumer group cannot use more consumers than partitions'.format([${as}.maxReplicas, ${PARTITIONS_CEL}])`,
    fieldPath: '.workers.autoscaling.maxReplicas',
    holds: (self) => (self.workers?.autoscaling?.maxReplicas ?? 0) <= partitionsOf(self.kafka),
    explain: (self) =>
      `spec.workers.autoscaling.maxReplicas (${self.workers?.autoscaling?.maxReplicas}) must not exceed spec.kafka.topic.partitions (${partitionsOf(self.kafka)}): a consumer group cannot use more consumers than partitions`,
  }),
  define<LogPipelineSpec>({
    id: 'min-replicas-within-default-max',
    at: 'spec',
    rule: `!has(self.workers) || !has(${as}) || ${celLet(as, 'scaling', `has(scaling.maxReplicas) || !has(scaling.minReplicas) || ${withinPartitionsCel('scaling.minReplicas')}`)}`,
    messageExpression: `'spec.workers.autoscaling.minReplicas (%d) must not exceed maxReplicas, which defaults to spec.kafka.topic.partitions (%d)'.format([${as}.minReplicas, ${PARTITIONS_CEL}])`,
    fieldPath: '.workers.autoscaling.minReplicas',
    holds: (self) => {
      const a = self.workers?.autoscaling;
      return a?.maxReplicas !== undefined || (a?.minReplicas ?? 0) <= partitionsOf(self.kafka);
    },
    explain: (self) =>
      `spec.workers.autoscaling.minReplicas (${self.workers?.autoscaling?.minReplicas}) must not exceed maxReplicas, which defaults to spec.kafka.topic.partitions (${partitionsOf(self.kafka)})`,
  }),
  define<LogPipelineSpec>({
    id: 'replicas-within-partitions',
    at: 'spec',
    rule: `!has(self.workers) || !has(self.workers.replicas) || ${withinPartitionsCel('self.workers.replicas')}`,
    messageExpression: `'spec.workers.replicas (%d) must not exceed spec.kafka.topic.partitions (%d): workers beyond the partition count would sit idle'.format([self.workers.replicas, ${PARTITIONS_CEL}])`,
    fieldPath: '.workers.replicas',
    holds: (self) => (self.workers?.replicas ?? 0) <= partitionsOf(self.kafka),
    explain: (self) =>
      `spec.workers.replicas (${self.workers?.replicas}) must not exceed spec.kafka.topic.partitions (${partitionsOf(self.kafka)}): workers beyond the partition count would sit idle`,
  }),
  define<WorkersSpec>({
    id: 'replicas-or-autoscaling',
    at: 'spec.workers',
    rule: '!has(self.replicas) || !has(self.autoscaling) || !has(self.autoscaling.enabled) || !self.autoscaling.enabled',
    message:
      'spec.workers.replicas must not be set when spec.workers.autoscaling.enabled is true: the autoscaler owns the replica count (bound it with minReplicas and maxReplicas)',
    fieldPath: '.replicas',
    reason: 'FieldValueForbidden',
    holds: (self) => self.replicas === undefined || !self.autoscaling?.enabled,
  }),
];
