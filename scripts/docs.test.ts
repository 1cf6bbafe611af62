/**
 * The hand-written docs stay true to the code: every condition and Event reason the operator can
 * set is explained, the autoscaling examples are what the autoscaler computes, and every relative
 * link and anchor in docs/ resolves.
 */
import fs from 'node:fs';
import path from 'node:path';
import { recommendReplicas } from '../operator/src/autoscale/recommend';
import { stabilize, type Sample } from '../operator/src/autoscale/stabilize';
import { parseDuration } from '../operator/src/api/duration';
import { CONDITION_TYPES } from '../operator/src/status/conditions';
import { anchor } from './gen-config-reference';
import { REPO_ROOT } from './helm';

const DOCS = path.join(REPO_ROOT, 'docs');
const read = (file: string) => fs.readFileSync(path.join(DOCS, file), 'utf8');

/** Directories whose string literals may become a condition or Event reason. */
const REASON_SOURCES = ['controller', 'apply', 'status', 'desired', 'autoscale', 'compliance/retention.ts'];

/**
 * CamelCase literals in those sources that are not reasons: Kubernetes kinds, ClickHouse types and
 * engines, codec names, error class names, and the Kubernetes client's internal error reasons
 * (they reach logs, never a condition).
 */
const NOT_REASONS = new Set([
  // Pod literals read by status/workers-starting.ts and pod-view.ts: a Pod condition type and the
  // kubelet's routine waiting reasons, which are never a cause (WorkerNeverReady names that case).
  'PodScheduled',
  'ContainerCreating',
  'PodInitializing',
  // Kafka write APIs counted by apply/kafka-writes.ts (labels, not reasons).
  'AlterConfigs',
  'CreatePartitions',
  'CreateTopics',
  'DeleteTopics',
  'OwnerRecordCommit',
  // Kafka API names: labels of logpipeline_operator_kafka_requests_total, not reasons.
  'Metadata',
  'ListOffsets',
  'OffsetFetch',
  'GroupCoordinator',
  'FindCoordinator',
  'DescribeConfigs',
  'FallbackToLogsOnError',
  'ConfigMap',
  'PodDisruptionBudget',
  'HorizontalPodAutoscaler',
  'DeleteOptions',
  'RollingUpdate',
  'ClusterIP',
  'NodePort',
  'LoadBalancer',
  'LogPipeline',
  'CustomResourceDefinition',
  'DateTime',
  'DateTime64',
  'FixedString',
  'LowCardinality',
  'MergeTree',
  'ReplicatedMergeTree',
  'DoubleDelta',
  'IfNotPresent',
  'RuntimeDefault',
  'NoSchedule',
  'PreferNoSchedule',
  'NoExecute',
  'SchemaError',
  'KafkaApplyError',
  'ClickHouseApplyError',
  'LeadershipLostError',
  'KubeApiError',
  'TransportError',
  'TimeoutError',
  'WatchFailed',
  'TabSeparatedWithNames',
  'WorkersReady',
  'TopicReady',
  'TableReady',
]);
/** Single-word reasons (the CamelCase scan cannot tell them from other words). */
const SINGLE_WORD_REASONS = ['Stable', 'Activated'];

function sourceFiles(entry: string): string[] {
  const full = path.join(REPO_ROOT, 'operator', 'src', entry);
  if (!fs.statSync(full).isDirectory()) return [full];
  return fs.readdirSync(full).flatMap((f) => sourceFiles(path.join(entry, f)));
}

/** Reasons the operator's code can set, found lexically. */
function operatorReasons(): string[] {
  const found = new Set<string>(SINGLE_WORD_REASONS);
  for (const file of REASON_SOURCES.flatMap(sourceFiles).filter(
    (f) => f.endsWith('.ts') && !f.endsWith('.test.ts'),
  )) {
    for (const m of fs.readFileSync(file, 'utf8').matchAll(/'([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)'/g))
      if (!NOT_REASONS.has(m[1])) found.add(m[1]);
  }
  // Built from part names: readyCondition's `${part}NotReady` / `${part}Pending`, finalize's `${part}Deleted`.
  for (const type of CONDITION_TYPES.filter((t) => t.endsWith('Ready') && t !== 'Ready')) {
    const part = type.replace(/Ready$/, '');
    found.add(`${part}NotReady`).add(`${part}Pending`);
  }
  found.add('TableDeleted');
  return [...found].sort();
}

describe('docs/operations.md and docs/autoscaling.md', () => {
  it('explain every condition and Event reason the operator sets', () => {
    const reasons = operatorReasons();
    expect(reasons.length).toBeGreaterThan(60);
    const text = read('operations.md') + read('autoscaling.md');
    const missing = reasons.filter((r) => !text.includes(`\`${r}\``));
    if (missing.length > 0) {
      throw new Error(
        `reasons not documented: ${missing.join(', ')}. Explain them in the troubleshooting tables of docs/operations.md ` +
          '(or docs/autoscaling.md for the Scaling condition); if a literal is not a reason, add it to NOT_REASONS in scripts/docs.test.ts',
      );
    }
  });
});

describe('docs/autoscaling.md', () => {
  const text = read('autoscaling.md');

  it('worked examples are what recommendReplicas computes', () => {
    const table = text.slice(text.indexOf('| smoothed lag |'));
    const rows = table
      .split('\n')
      .slice(2)
      .filter((l) => l.startsWith('| ') && /\d/.test(l));
    expect(rows.length).toBeGreaterThanOrEqual(6);
    const num = (c: string) => (c === '–' ? undefined : Number(c));
    for (const row of rows) {
      const c = row
        .split('|')
        .slice(1, -1)
        .map((x) => x.trim());
      const got = recommendReplicas({
        smoothedLag: Number(c[0]),
        instantLag: Number(c[1]),
        rate: Number(c[2]),
        current: Number(c[3]),
        consumers: Number(c[4]),
        partitions: Number(c[5]),
        minReplicas: Number(c[6]),
        maxReplicas: Number(c[7]),
        lagPerReplica: num(c[8]),
        targetDrainTimeMs: c[9] === '–' ? undefined : parseDuration(c[9]),
        activationLag: Number(c[10]),
      });
      expect({ row, replicas: got.replicas, reason: got.reason }).toEqual({
        row,
        replicas: Number(c[11]),
        reason: c[12],
      });
    }
  });

  it('the stabilization example is what stabilize does with the default windows and steps', () => {
    const behavior = {
      scaleUpWindowMs: 0,
      scaleDownWindowMs: 300_000,
      maxScaleUpStep: 4,
      maxScaleDownStep: 1,
    };
    let history: Sample[] = [];
    let current = 10;
    for (let t = -600_000; t < 0; t += 15_000)
      history = stabilize(history, { at: t, replicas: 10 }, current, behavior).history;
    const changes: string[] = [];
    for (let t = 0; t <= 450_000; t += 15_000) {
      const out = stabilize(history, { at: t, replicas: 4 }, current, behavior);
      history = out.history;
      if (out.replicas !== current) changes.push(`${out.replicas} at ${t / 1000}s`);
      current = out.replicas;
    }
    expect(changes).toEqual(['9 at 300s', '8 at 315s', '7 at 330s', '6 at 345s', '5 at 360s', '4 at 375s']);
    expect(text).toContain('9 at 300s, 8 at 315s, … 4 at 375s');
  });
});

describe('links in docs/', () => {
  const files = fs.readdirSync(DOCS).filter((f) => f.endsWith('.md'));

  it.each(files)('%s: relative links point at existing files and headings', (file) => {
    const text = read(file)
      .replace(/```[\s\S]*?```/g, '')
      .replace(/``.*?``|`[^`\n]*`/g, '');
    const broken: string[] = [];
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1];
      if (/^[a-z]+:/.test(target)) continue;
      const [rel, hash] = target.split('#');
      const resolved = rel ? path.resolve(DOCS, rel) : path.join(DOCS, file);
      if (!fs.existsSync(resolved)) {
        broken.push(target);
        continue;
      }
      if (hash && resolved.endsWith('.md')) {
        const headings = [...fs.readFileSync(resolved, 'utf8').matchAll(/^#+ (.+)$/gm)].map((h) =>
          anchor(h[1].replace(/`/g, '')),
        );
        if (!headings.includes(hash)) broken.push(target);
      }
    }
    expect(broken).toEqual([]);
  });
});
