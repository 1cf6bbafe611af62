/**
 * The cross-field rules of a LogPipeline, written once: each entry carries the CEL the apiserver runs
 * (attached to the CRD schema at `at` by schema-crd.ts) and a TypeScript mirror that `validatePipeline`
 * runs offline. Messages are shared, so `logpipeline plan` and admission say the same thing; the
 * admission integration test checks both against the real apiserver.
 */
import { DEFAULT_DELETE_AFTER, DEFAULT_FIREWALL_MINIMUM_DELETE_AFTER, DEFAULT_PARTITIONS } from './defaults';
import { DURATION_PATTERN, parseDuration } from './duration';
import type { CelRule } from './schema-dsl';
import { define, type PipelineRule } from './validate-rules-define';
import { REPLICA_RULES } from './validate-rules-workers';

export type { PipelineRule } from './validate-rules-define';
import {
  celDurationMs,
  celDurationMsMirror,
  partitionsOf,
  topicFieldOr,
  DELETE_AFTER_CEL,
  allowShortCel,
  deleteAfterCel,
  minimumCel,
  notShorterCel,
  deleteAfterOf,
  minimumOf,
  notShorter,
} from './validate-rules-cel';
import { isReservedEnv } from './worker-policy';
import { PARSER_RULES } from './validate-rules-parser';
import { COLUMN_RULES } from './validate-rules-columns';
import { INGEST_RULES, INGEST_SPEC_RULES } from './validate-rules-ingest';
import type { ClickHouseSpec, IntegritySpec, KafkaSpec, RetentionMove, WorkersSpec } from './types';

type Retention = NonNullable<ClickHouseSpec['retention']>;

/** Every cross-field rule, in the order admission reports them. */
export const PIPELINE_RULES: readonly PipelineRule[] = [
  ...PARSER_RULES,
  ...COLUMN_RULES,
  define<KafkaSpec>({
    id: 'partitions-never-decrease',
    at: 'spec.kafka',
    rule:
      `(has(self.topic) && has(self.topic.partitions) ? self.topic.partitions : ${DEFAULT_PARTITIONS}) >= ` +
      `(has(oldSelf.topic) && has(oldSelf.topic.partitions) ? oldSelf.topic.partitions : ${DEFAULT_PARTITIONS})`,
    messageExpression:
      `'spec.kafka.topic.partitions may only grow (%d -> %d): Kafka cannot remove partitions from a topic'.format([` +
      `(has(oldSelf.topic) && has(oldSelf.topic.partitions) ? oldSelf.topic.partitions : ${DEFAULT_PARTITIONS}), ` +
      `(has(self.topic) && has(self.topic.partitions) ? self.topic.partitions : ${DEFAULT_PARTITIONS})])`,
    fieldPath: '.topic.partitions',
    holds: (self, old) => partitionsOf(self) >= partitionsOf(old),
    explain: (self, old) =>
      `spec.kafka.topic.partitions may only grow (${partitionsOf(old)} -> ${partitionsOf(self)}): Kafka cannot remove partitions from a topic`,
  }),
  define<KafkaSpec>({
    id: 'topic-name-immutable',
    at: 'spec.kafka',
    rule: `${topicFieldOr('self', 'name')} == ${topicFieldOr('oldSelf', 'name')}`,
    message:
      'spec.kafka.topic.name is immutable (it cannot be set, changed or removed after creation): the topic holds the pipeline data; create a new LogPipeline to use another topic',
    fieldPath: '.topic.name',
    reason: 'FieldValueForbidden',
    holds: (self, old) => (self.topic?.name ?? '') === (old.topic?.name ?? ''),
  }),
  define<KafkaSpec>({
    id: 'consumer-group-immutable',
    at: 'spec.kafka',
    rule: `(has(self.consumerGroup) ? self.consumerGroup : '') == (has(oldSelf.consumerGroup) ? oldSelf.consumerGroup : '')`,
    message:
      'spec.kafka.consumerGroup is immutable (it cannot be set, changed or removed after creation): a new group has no committed offsets and would re-read or skip data',
    fieldPath: '.consumerGroup',
    reason: 'FieldValueForbidden',
    holds: (self, old) => (self.consumerGroup ?? '') === (old.consumerGroup ?? ''),
  }),
  define<Record<string, string>>({
    id: 'topic-config-keys',
    at: 'spec.kafka.topic.config',
    rule: `self.all(k, k.matches('^[a-z][a-z0-9.]{0,62}$'))`,
    message:
      'spec.kafka.topic.config keys must be Kafka topic config names such as retention.ms (lowercase letters, digits and dots)',
    holds: (self) => Object.keys(self).every((k) => /^[a-z][a-z0-9.]{0,62}$/.test(k)),
  }),
  define<Record<string, string>>({
    id: 'static-field-names',
    at: 'spec.parser.staticFields',
    rule: `self.all(k, k.matches('^[A-Za-z_][A-Za-z0-9_]{0,62}$'))`,
    message:
      'spec.parser.staticFields names must be identifiers (letters, digits, underscore): columns refer to them as static:<name>',
    holds: (self) => Object.keys(self).every((k) => /^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(k)),
  }),
  define<string>({
    id: 'no-credentials-in-url',
    at: 'spec.clickhouse.url',
    // Credentials in a URL end up in the worker ConfigMap, in logs and in status: Secrets carry them.
    rule: `!self.matches('^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*@')`,
    message:
      'spec.clickhouse.url must not contain credentials (user:password@): put them in the Secret named by credentialsSecretRef',
    holds: (self) => !/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*@/.test(self),
  }),
  define<string>({
    id: 'database-immutable',
    at: 'spec.clickhouse.database',
    rule: 'self == oldSelf',
    message:
      'spec.clickhouse.database is immutable: the table and its data live there; create a new LogPipeline to write elsewhere',
    reason: 'FieldValueForbidden',
    holds: (self, old) => self === old,
  }),
  define<string>({
    id: 'table-immutable',
    at: 'spec.clickhouse.table',
    rule: 'self == oldSelf',
    message:
      'spec.clickhouse.table is immutable: it holds the retained logs; create a new LogPipeline to write elsewhere',
    reason: 'FieldValueForbidden',
    holds: (self, old) => self === old,
  }),
  define<ClickHouseSpec>({
    id: 'custom-preset-needs-columns',
    at: 'spec.clickhouse',
    rule: `!has(self.preset) || self.preset != 'custom' || (has(self.columns) && size(self.columns) > 0)`,
    message: 'spec.clickhouse.columns is required when preset is custom: a custom table has no other columns',
    fieldPath: '.columns',
    reason: 'FieldValueRequired',
    holds: (self) => self.preset !== 'custom' || (self.columns?.length ?? 0) > 0,
  }),
  define<RetentionMove>({
    id: 'move-has-one-destination',
    at: 'spec.clickhouse.retention.moves[]',
    rule: 'has(self.toDisk) != has(self.toVolume)',
    message:
      'each spec.clickhouse.retention.moves[] entry needs exactly one of toDisk or toVolume: a TTL move has a single destination',
    holds: (self) => (self.toDisk !== undefined) !== (self.toVolume !== undefined),
  }),
  define<Retention>({
    id: 'delete-after-later-than-moves',
    at: 'spec.clickhouse.retention',
    rule:
      `!has(self.moves) || !${DELETE_AFTER_CEL}.matches('${DURATION_PATTERN}') || self.moves.all(m, ` +
      `!m.after.matches('${DURATION_PATTERN}') || ${celDurationMs('m.after')} < ${celDurationMs(DELETE_AFTER_CEL)})`,
    message: `spec.clickhouse.retention.deleteAfter (default ${DEFAULT_DELETE_AFTER}) must be later than every moves[].after: rows are deleted at deleteAfter, so a move at or after it would never happen`,
    fieldPath: '.deleteAfter',
    holds: (self) => {
      // Like the CEL: values that fail the duration pattern are left to the pattern's own error;
      // valid ones out of CEL's range (celDurationMsMirror undefined) fail, as CEL's overflow does.
      const deleteAfter = self.deleteAfter ?? DEFAULT_DELETE_AFTER;
      if (!self.moves || parseDuration(deleteAfter) === undefined) return true;
      const deleteMs = celDurationMsMirror(deleteAfter);
      return self.moves.every((m) => {
        if (parseDuration(m.after) === undefined) return true;
        const afterMs = celDurationMsMirror(m.after);
        return deleteMs !== undefined && afterMs !== undefined && afterMs < deleteMs;
      });
    },
  }),
  define<ClickHouseSpec>({
    id: 'retention-above-minimum',
    at: 'spec.clickhouse',
    rule: notShorterCel(deleteAfterCel('self'), minimumCel('self')),
    message: `spec.clickhouse.retention.deleteAfter must not be shorter than retention.minimumDeleteAfter (default ${DEFAULT_FIREWALL_MINIMUM_DELETE_AFTER} for the firewall preset: Law 5651 keeps traffic logs two years); lower the floor explicitly if a shorter retention is really intended`,
    fieldPath: '.retention.deleteAfter',
    holds: (self) => notShorter(deleteAfterOf(self), minimumOf(self)),
  }),
  define<ClickHouseSpec>({
    id: 'retention-never-shortened',
    at: 'spec.clickhouse',
    rule: `${allowShortCel('self')} || (${notShorterCel(deleteAfterCel('self'), deleteAfterCel('oldSelf'))})`,
    message:
      'spec.clickhouse.retention.deleteAfter may not be shortened or removed below its current value: the TTL would delete retained logs; set spec.clickhouse.retention.allowShortening: true to do it on purpose',
    fieldPath: '.retention.deleteAfter',
    reason: 'FieldValueForbidden',
    holds: (self, old) =>
      !!self.retention?.allowShortening || notShorter(deleteAfterOf(self), deleteAfterOf(old)),
  }),
  define<ClickHouseSpec>({
    id: 'retention-minimum-never-lowered',
    at: 'spec.clickhouse',
    rule: `${allowShortCel('self')} || (${notShorterCel(minimumCel('self'), minimumCel('oldSelf'))})`,
    message:
      'spec.clickhouse.retention.minimumDeleteAfter may not be lowered or removed below its current value; set spec.clickhouse.retention.allowShortening: true to do it on purpose',
    fieldPath: '.retention.minimumDeleteAfter',
    reason: 'FieldValueForbidden',
    holds: (self, old) => !!self.retention?.allowShortening || notShorter(minimumOf(self), minimumOf(old)),
  }),
  ...REPLICA_RULES,
  define<WorkersSpec>({
    id: 'reserved-worker-env',
    at: 'spec.workers',
    rule: "!has(self.env) || self.env.all(e, !e.name.startsWith('LP_'))",
    message:
      'spec.workers.env must not set names starting with LP_: they are reserved for the operator (LP_CLICKHOUSE_URL or LP_KAFKA_BROKERS would silently redirect rows while status says Ready)',
    fieldPath: '.env',
    reason: 'FieldValueForbidden',
    holds: (self) =>
      (self.env ?? []).every((e) => {
        const name = (e as { name?: unknown })?.name;
        return typeof name !== 'string' || !isReservedEnv(name);
      }),
  }),
  define<IntegritySpec>({
    id: 'integrity-needs-signing-key',
    at: 'spec.integrity',
    rule: '!has(self.enabled) || !self.enabled || has(self.signingKeySecretRef)',
    message:
      'spec.integrity.signingKeySecretRef is required when integrity.enabled is true: checkpoints are signed with that Ed25519 key',
    fieldPath: '.signingKeySecretRef',
    reason: 'FieldValueRequired',
    holds: (self) => !self.enabled || self.signingKeySecretRef !== undefined,
  }),
  define<IntegritySpec>({
    id: 'seal-needs-integrity-and-tsa',
    at: 'spec.integrity',
    rule: '!has(self.seal) || (has(self.enabled) && self.enabled && has(self.tsaUrl))',
    message:
      'spec.integrity.seal needs integrity.enabled (the seal is signed with its key) and integrity.tsaUrl (the seal is timestamped by that TSA)',
    fieldPath: '.seal',
    reason: 'FieldValueRequired',
    holds: (self) => self.seal === undefined || (self.enabled === true && self.tsaUrl !== undefined),
  }),
  ...INGEST_RULES,
  ...INGEST_SPEC_RULES,
];

/** The CEL part of the rules attached at `at`, in table order, as the CRD lists them. */
export function celRulesAt(at: string): CelRule[] {
  return PIPELINE_RULES.filter((r) => r.at === at).map(
    ({ rule, message, messageExpression, fieldPath, reason }) => ({
      rule,
      ...(message !== undefined ? { message } : {}),
      ...(messageExpression !== undefined ? { messageExpression } : {}),
      ...(fieldPath !== undefined ? { fieldPath } : {}),
      ...(reason !== undefined ? { reason } : {}),
    }),
  );
}
