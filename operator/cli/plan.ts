/**
 * `logpipeline plan -f pipeline.yaml [--previous live.yaml] [--output json|yaml]`: validates
 * LogPipelines offline with the admission rules (with `--previous`, the stored objects, also the
 * update rules: immutable fields, partitions, retention never shortened) and prints what the operator would create — the topic spec, the ClickHouse DDL
 * and the ConfigMap/Deployment/PodDisruptionBudget — without a cluster. For GitOps CI: exit 1 on
 * invalid input, 2 on usage errors.
 */
import fs from 'node:fs';
import { parseAllDocuments, stringify } from 'yaml';
import { resolveSpec } from '../src/api/defaults';
import { KIND, type LogPipeline } from '../src/api/types';
import { formatValidationError, validatePipeline } from '../src/api/validate';
import { buildTableDDL, buildWorkerColumns, ddlStatements } from '../src/desired/clickhouse';
import { renderWorkerConfig, buildConfigMap } from '../src/desired/configmap';
import { buildDeployment } from '../src/desired/deployment';
import { buildPodDisruptionBudget } from '../src/desired/pdb';
import { buildDeadLetterTopicSpec, buildTopicSpec } from '../src/desired/topic';
import { INVALID_COLUMNS, workerColumnProblems } from '../src/desired/worker-columns';

/** What `plan` prints for one pipeline. */
export interface PipelinePlan {
  pipeline: string;
  valid: boolean;
  errors: string[];
  topic?: unknown;
  deadLetterTopic?: unknown;
  clickhouse?: string[];
  kubernetes?: unknown[];
}

/** Builds the plan of one LogPipeline document (pure). */
export function planPipeline(doc: unknown, previous?: LogPipeline): PipelinePlan {
  const lp = doc as LogPipeline;
  const id = `${lp?.metadata?.namespace ?? 'default'}/${lp?.metadata?.name ?? '?'}`;
  const errors = validatePipeline(doc, previous).map(formatValidationError);
  if (errors.length > 0) return { pipeline: id, valid: false, errors };
  const withNs: LogPipeline = {
    ...lp,
    metadata: { ...lp.metadata, namespace: lp.metadata.namespace ?? 'default' },
  };
  const spec = resolveSpec(withNs);
  const ddl = buildTableDDL(spec);
  const topic = buildTopicSpec(spec);
  const problems = [ddl, topic].filter((r) => !r.ok).map((r) => (r.ok ? '' : `${r.reason}: ${r.message}`));
  if (!ddl.ok || !topic.ok) return { pipeline: id, valid: false, errors: problems };
  const dlq = buildDeadLetterTopicSpec(spec);
  const columns = buildWorkerColumns(ddl.value.tables[0].schema);
  // The worker's own column check, so plan refuses what the worker would refuse at startup.
  const columnErrors = workerColumnProblems(spec, columns).map((e) => `${INVALID_COLUMNS}: ${e}`);
  if (columnErrors.length > 0) return { pipeline: id, valid: false, errors: columnErrors };
  const config = renderWorkerConfig(spec, columns);
  return {
    pipeline: id,
    valid: true,
    errors: [],
    topic: topic.value,
    deadLetterTopic: dlq?.ok ? dlq.value : undefined,
    clickhouse: ddlStatements(ddl.value),
    kubernetes: [buildConfigMap(spec, config), buildDeployment(spec, config), buildPodDisruptionBudget(spec)],
  };
}

interface PlanArgs {
  files: string[];
  previous: string[];
  output: 'text' | 'json' | 'yaml';
}

function parseArgs(argv: string[]): PlanArgs {
  const files: string[] = [];
  const previous: string[] = [];
  let output: 'text' | 'json' | 'yaml' = 'text';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-f' || a === '--file') files.push(argv[++i] ?? '');
    else if (a === '--previous') previous.push(argv[++i] ?? '');
    else if (a === '-o' || a === '--output') output = argv[++i] as typeof output;
    else throw new Error(`unknown argument ${a}`);
  }
  if (files.length === 0 || files.some((f) => !f)) throw new Error('plan needs -f <file> (use - for stdin)');
  if (!['text', 'json', 'yaml'].includes(output)) throw new Error('--output must be text, json or yaml');
  if (previous.some((f) => !f)) throw new Error('--previous needs a file');
  return { files, previous, output };
}

/** The stored LogPipelines of `--previous` files (e.g. `kubectl get lp -o yaml`), by namespace/name. */
function readPrevious(files: readonly string[]): Map<string, LogPipeline> {
  const out = new Map<string, LogPipeline>();
  for (const file of files) {
    for (const doc of parseAllDocuments(fs.readFileSync(file, 'utf8'))) {
      const obj = doc.toJSON() as { kind?: string; items?: unknown[] } | null;
      const items = obj?.kind === 'List' || Array.isArray(obj?.items) ? (obj?.items ?? []) : [obj];
      for (const item of items as LogPipeline[]) {
        if (item?.kind !== KIND) continue;
        out.set(`${item.metadata?.namespace ?? 'default'}/${item.metadata?.name}`, item);
      }
    }
  }
  return out;
}

function renderText(p: PipelinePlan): string {
  if (!p.valid) return `✗ ${p.pipeline} is invalid:\n${p.errors.map((e) => `  - ${e}`).join('\n')}\n`;
  return [
    `✓ ${p.pipeline}`,
    '--- Kafka topic',
    stringify(p.topic).trimEnd(),
    ...(p.deadLetterTopic ? ['--- Dead-letter topic', stringify(p.deadLetterTopic).trimEnd()] : []),
    '--- ClickHouse DDL',
    ...(p.clickhouse ?? []).map((s) => `${s};`),
    '--- Kubernetes objects',
    (p.kubernetes ?? []).map((o) => stringify(o).trimEnd()).join('\n---\n'),
    '',
  ].join('\n');
}

/** Runs `plan`; resolves to the exit code (0 valid, 1 invalid input, 2 usage). */
export async function runPlan(
  argv: string[],
  stdout: NodeJS.WritableStream,
  stderr: NodeJS.WritableStream,
): Promise<number> {
  let args: PlanArgs;
  let previous: Map<string, LogPipeline>;
  try {
    args = parseArgs(argv);
    previous = readPrevious(args.previous);
  } catch (err) {
    stderr.write(`logpipeline plan: ${(err as Error).message}\n`);
    return 2;
  }
  const plans: PipelinePlan[] = [];
  for (const file of args.files) {
    const text = fs.readFileSync(file === '-' ? 0 : file, 'utf8');
    for (const doc of parseAllDocuments(text)) {
      if (doc.errors.length > 0) {
        plans.push({ pipeline: file, valid: false, errors: doc.errors.map((e) => `YAML: ${e.message}`) });
        continue;
      }
      const obj = doc.toJSON();
      if (obj?.kind === KIND)
        plans.push(
          planPipeline(obj, previous.get(`${obj.metadata?.namespace ?? 'default'}/${obj.metadata?.name}`)),
        );
    }
  }
  if (plans.length === 0) {
    stderr.write(`logpipeline plan: no ${KIND} found in ${args.files.join(', ')}\n`);
    return 1;
  }
  if (args.output === 'json') stdout.write(`${JSON.stringify(plans, null, 2)}\n`);
  else if (args.output === 'yaml') stdout.write(stringify(plans));
  else stdout.write(plans.map(renderText).join('\n'));
  return plans.every((p) => p.valid) ? 0 : 1;
}
