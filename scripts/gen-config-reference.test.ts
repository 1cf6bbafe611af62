/**
 * docs/configuration.md is exactly what the generator renders from the committed CRD (so CI catches
 * a schema change without a docs update), it covers every field path and CEL rule of the schema,
 * and the defaults it states agree with resolveSpec — the code that applies them.
 */
import fs from 'node:fs';
import { resolveSpec } from '../operator/src/api/defaults';
import { loadCrd, type JSONSchemaProps } from '../operator/src/api/schema';
import type { LogPipeline } from '../operator/src/api/types';
import {
  anchor,
  CONFIG_REFERENCE_FILE,
  defaultFromDescription,
  renderConfigReference,
  ruleMessage,
  typeName,
} from './gen-config-reference';

const crd = loadCrd();
const rendered = renderConfigReference(crd);
const root = crd.spec.versions[0].schema.openAPIV3Schema;

/** Every field path under `node`, as the reference writes it (array items as `[]`). */
function fieldPaths(node: JSONSchemaProps, at: string): string[] {
  const out: string[] = [];
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    const p = `${at}.${name}`;
    out.push(p);
    if (child.type === 'array' && child.items?.properties) out.push(...fieldPaths(child.items, `${p}[]`));
    else out.push(...fieldPaths(child, p));
  }
  return out;
}

function schemaAt(dotted: string): JSONSchemaProps {
  let node: JSONSchemaProps | undefined = root;
  for (const step of dotted.split('.')) node = node?.properties?.[step];
  if (!node) throw new Error(`no schema node at ${dotted}`);
  return node;
}

describe('docs/configuration.md', () => {
  it('is up to date with the CRD (run `npm run docs:reference` after changing the schema)', () => {
    const committed = fs.existsSync(CONFIG_REFERENCE_FILE)
      ? fs.readFileSync(CONFIG_REFERENCE_FILE, 'utf8')
      : '';
    if (committed !== rendered) {
      throw new Error(
        'docs/configuration.md is out of date with crds/logpipeline.io_logpipelines.yaml: run `npm run docs:reference` and commit the result',
      );
    }
  });

  it('has a row for every field path of spec and status', () => {
    const paths = [...fieldPaths(schemaAt('spec'), 'spec'), ...fieldPaths(schemaAt('status'), 'status')];
    expect(paths.length).toBeGreaterThan(120);
    const missing = paths.filter((p) => !rendered.includes(`| \`${p}\``));
    expect(missing).toEqual([]);
  });

  it('lists every CEL rule with its message', () => {
    const rules: Array<{ rule: string; message?: string; messageExpression?: string }> = [];
    const visit = (node: JSONSchemaProps) => {
      rules.push(...(node['x-kubernetes-validations'] ?? []));
      for (const child of Object.values(node.properties ?? {})) visit(child);
      if (node.items) visit(node.items);
      if (node.additionalProperties) visit(node.additionalProperties);
    };
    visit(root);
    expect(rules.length).toBeGreaterThanOrEqual(15);
    for (const r of rules) {
      expect(rendered).toContain(`  ${r.rule}\n`);
      expect(rendered).toContain(ruleMessage(r));
    }
  });

  it('links every object type to a section that exists', () => {
    const headings = new Set([...rendered.matchAll(/^#+ (.+)$/gm)].map((m) => anchor(m[1])));
    const links = [...rendered.matchAll(/\]\(#([a-z0-9-]+)\)/g)].map((m) => m[1]);
    expect(links.length).toBeGreaterThan(30);
    expect(links.filter((l) => !headings.has(l))).toEqual([]);
    expect(headings.size).toBe([...rendered.matchAll(/^#+ (.+)$/gm)].length);
  });

  it('states the defaults resolveSpec applies', () => {
    // Only the required fields, so every other value is the default.
    const minimal: LogPipeline = {
      apiVersion: 'logpipeline.io/v1alpha1',
      kind: 'LogPipeline',
      metadata: { name: 'fw', namespace: 'logs' },
      spec: {
        kafka: { bootstrapServers: ['kafka:9092'] },
        clickhouse: { url: 'http://clickhouse:8123', database: 'logs', table: 'firewall' },
      },
    };
    const spec = resolveSpec(minimal);
    const a = spec.workers.autoscaling;
    const expected: Record<string, string | number | boolean> = {
      'spec.kafka.topic.partitions': spec.kafka.topic.partitions,
      'spec.kafka.topic.replicationFactor': spec.kafka.topic.replicationFactor,
      'spec.parser.format': spec.parser.format,
      'spec.parser.timezone': spec.parser.timezone,
      'spec.parser.maxLineBytes': spec.parser.maxLineBytes,
      'spec.clickhouse.preset': spec.clickhouse.preset,
      'spec.clickhouse.timeColumn': spec.clickhouse.timeColumn,
      'spec.clickhouse.retention.deleteAfter': spec.clickhouse.retention.deleteAfter,
      'spec.clickhouse.retention.materializeOnChange': spec.clickhouse.retention.materializeOnChange,
      'spec.clickhouse.dedupWindow': spec.clickhouse.dedupWindow,
      'spec.workers.image': spec.workers.image,
      'spec.workers.imagePullPolicy': spec.workers.imagePullPolicy,
      'spec.workers.replicas': spec.workers.replicas,
      'spec.workers.batch.maxRows': spec.workers.batch.maxRows,
      'spec.workers.batch.maxBytes': spec.workers.batch.maxBytes,
      'spec.workers.autoscaling.enabled': a.enabled,
      'spec.workers.autoscaling.minReplicas': a.minReplicas,
      'spec.workers.autoscaling.lagPerReplica': a.lagPerReplica ?? -1,
      'spec.workers.autoscaling.activationLag': a.activationLag,
      'spec.workers.autoscaling.scaleUpStabilization': a.scaleUpStabilization,
      'spec.workers.autoscaling.scaleDownStabilization': a.scaleDownStabilization,
      'spec.workers.autoscaling.maxScaleUpStep': a.maxScaleUpStep,
      'spec.workers.autoscaling.maxScaleDownStep': a.maxScaleDownStep,
      'spec.workers.autoscaling.pollInterval': a.pollInterval,
      'spec.deadLetter.enabled': spec.deadLetter.enabled,
      'spec.integrity.enabled': spec.integrity.enabled,
      'spec.deletionPolicy': spec.deletionPolicy,
    };
    const stated = Object.fromEntries(
      Object.keys(expected).map((p) => [
        p,
        defaultFromDescription(schemaAt(p).description ?? '')
          ?.replace(/`/g, '')
          .split(/[ (]/)[0],
      ]),
    );
    expect(stated).toEqual(Object.fromEntries(Object.entries(expected).map(([p, v]) => [p, String(v)])));
  });
});

describe('reference helpers', () => {
  it.each([
    ['Number of partitions. Default 6. May only grow.', '6'],
    ['Worker image. Default ghcr.io/x/worker:0.1.0.', 'ghcr.io/x/worker:0.1.0'],
    ['Fixed workers. Default 1; 0 pauses consumption.', '1'],
    [
      'CPU. Default requests cpu 500m, memory 512Mi; limits memory 1Gi.',
      'requests cpu 500m, memory 512Mi; limits memory 1Gi',
    ],
    ['Partition key. Default: the preset partition key.', 'the preset partition key'],
    ['What happens: Retain (default; data survives) or Delete.', 'Retain'],
    ['No default here.', undefined],
  ])('reads the default of %j', (description, expected) => {
    expect(defaultFromDescription(description)).toBe(expected);
  });

  it('names types as readers know them', () => {
    expect(typeName({ type: 'array', items: { type: 'string' } })).toBe('[]string');
    expect(typeName({ type: 'object', additionalProperties: { type: 'string' } })).toBe('map[string]string');
    expect(typeName({ type: 'string', pattern: schemaAt('spec.workers.batch.maxDelay').pattern })).toBe(
      'string (duration)',
    );
    expect(typeName({ type: 'integer', format: 'int32' })).toBe('integer (int32)');
    expect(
      typeName({ 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] }),
    ).toBe('int-or-string');
  });

  it('turns a format message expression into readable text', () => {
    expect(
      ruleMessage({ rule: 'x', messageExpression: "'a (%d) must not exceed b (%d)'.format([1, 2])" }),
    ).toBe('a (N) must not exceed b (N)');
  });
});
