/**
 * The CEL expressions the cross-field rules are built from (validate-rules.ts), each with the
 * offline mirror `validatePipeline` runs: durations in milliseconds, one-time bindings, and the
 * defaulted values of partitions and retention the rules compare.
 */
import {
  DEFAULT_DELETE_AFTER,
  DEFAULT_FIREWALL_MINIMUM_DELETE_AFTER,
  DEFAULT_PARTITIONS,
  defaultMinimumDeleteAfter,
} from './defaults';
import { DURATION_PATTERN, parseDuration } from './duration';
import type { ClickHouseSpec, KafkaSpec } from './types';

/** Largest value of CEL's int (and of a Go duration in nanoseconds). */
const INT64_MAX = 9_223_372_036_854_775_807n;

/**
 * CEL that converts a duration expression `x` (a string matching DURATION_PATTERN) to milliseconds.
 * CEL's duration() parses Go durations (h/m/s/ms) but not days, so the optional leading `<n>d` is cut
 * off at the single 'd' and counted separately. Building a Go duration string instead ("<24n>h...")
 * would need string(int), which the apiserver's cost estimator treats as unbounded and rejects.
 */
export function celDurationMs(x: string): string {
  return (
    `(${x}.contains('d') ? int(${x}.substring(0, ${x}.indexOf('d'))) * 86400000 + ` +
    `duration('0s' + ${x}.substring(${x}.indexOf('d') + 1)).getMilliseconds() : duration(${x}).getMilliseconds())`
  );
}

/**
 * Offline mirror of celDurationMs: milliseconds, or undefined where CEL would fail (not a duration,
 * int64 overflow of the day part, or a Go duration beyond 2562047h).
 */
export function celDurationMsMirror(text: string): number | undefined {
  if (parseDuration(text) === undefined) return undefined;
  const cut = text.indexOf('d');
  const dayMs = cut < 0 ? 0n : BigInt(text.slice(0, cut)) * 86_400_000n;
  let restNs = 0n;
  const unitNs: Record<string, bigint> = {
    ms: 1_000_000n,
    s: 1_000_000_000n,
    m: 60_000_000_000n,
    h: 3_600_000_000_000n,
  };
  for (const m of text.slice(cut + 1).matchAll(/(\d+)(ms|s|m|h)/g)) restNs += BigInt(m[1]) * unitNs[m[2]];
  if (dayMs > INT64_MAX || restNs > INT64_MAX || dayMs + restNs / 1_000_000n > INT64_MAX) return undefined;
  return Number(dayMs + restNs / 1_000_000n);
}

/**
 * CEL: `body` with `name` bound to `value`, evaluated once: a one-element list's all(). Kubernetes
 * before 1.30 has no cel.bind (the chart supports 1.27). Why bind: the apiserver copies a schema
 * node's property table on every field step (`unstructuredMap.Find` → `Structural.Properties()`),
 * on every write of the object, status writes included, so a composite repeated in a rule costs a
 * step per repetition (issue 18: the retention rules stepped ~900 times per write, ~1/2 of CEL).
 */
export function celLet(value: string, name: string, body: string): string {
  return `[${value}].all(${name}, ${body})`;
}

/** CEL (on a spec value): the topic's partitions with their default. */
export const PARTITIONS_CEL = `(has(self.kafka.topic) && has(self.kafka.topic.partitions) ? self.kafka.topic.partitions : ${DEFAULT_PARTITIONS})`;
/** CEL (on a spec value): `count` <= the topic's partitions with their default (spec.kafka stepped into once). */
export const withinPartitionsCel = (count: string) =>
  celLet(
    'self.kafka',
    'kafka',
    `${count} <= (has(kafka.topic) && has(kafka.topic.partitions) ? kafka.topic.partitions : ${DEFAULT_PARTITIONS})`,
  );
/** Offline mirror of PARTITIONS_CEL. */
export const partitionsOf = (k: KafkaSpec) => k.topic?.partitions ?? DEFAULT_PARTITIONS;

/** CEL: `<base>.topic.<field>` if set, else '' (so "unset" compares as a value of its own). */
export const topicFieldOr = (base: string, field: string) =>
  `(has(${base}.topic) && has(${base}.topic.${field}) ? ${base}.topic.${field} : '')`;

/** CEL (on a spec.clickhouse.retention value): deleteAfter with its default. */
export const DELETE_AFTER_CEL = `(has(self.deleteAfter) ? self.deleteAfter : '${DEFAULT_DELETE_AFTER}')`;

/** CEL (on a spec.clickhouse value `x`): the retention override is set. */
export const allowShortCel = (x: string) =>
  `(has(${x}.retention) && has(${x}.retention.allowShortening) && ${x}.retention.allowShortening)`;
/** CEL: deleteAfter with its default. */
export const deleteAfterCel = (x: string) =>
  `(has(${x}.retention) && has(${x}.retention.deleteAfter) ? ${x}.retention.deleteAfter : '${DEFAULT_DELETE_AFTER}')`;
/** CEL: minimumDeleteAfter with its preset default. */
export const minimumCel = (x: string) =>
  `(has(${x}.retention) && has(${x}.retention.minimumDeleteAfter) ? ${x}.retention.minimumDeleteAfter : ` +
  `(has(${x}.preset) && ${x}.preset == 'custom' ? '0s' : '${DEFAULT_FIREWALL_MINIMUM_DELETE_AFTER}'))`;
/**
 * CEL: `a` and `b` are durations (else the pattern reports them) and a >= b in milliseconds; each
 * evaluated once (celDurationMs names its argument six times).
 */
export const notShorterCel = (a: string, b: string) =>
  celLet(
    a,
    'longer',
    celLet(
      b,
      'shorter',
      `!longer.matches('${DURATION_PATTERN}') || !shorter.matches('${DURATION_PATTERN}') || ` +
        `${celDurationMs('longer')} >= ${celDurationMs('shorter')}`,
    ),
  );

/** Offline mirror of deleteAfterCel. */
export const deleteAfterOf = (c: ClickHouseSpec) => c.retention?.deleteAfter ?? DEFAULT_DELETE_AFTER;
/** Offline mirror of minimumCel. */
export const minimumOf = (c: ClickHouseSpec) =>
  c.retention?.minimumDeleteAfter ?? defaultMinimumDeleteAfter(c.preset);
/** Offline mirror of notShorterCel. */
export function notShorter(a: string, b: string): boolean {
  if (parseDuration(a) === undefined || parseDuration(b) === undefined) return true;
  const am = celDurationMsMirror(a);
  const bm = celDurationMsMirror(b);
  return am !== undefined && bm !== undefined && am >= bm;
}
