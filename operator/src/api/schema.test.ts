import fs from 'node:fs';
import { buildCrd, buildOpenApiSchema, renderCrdYaml, schemaNodeAt } from './schema-crd';
import { CRD_FILE, loadCrd, loadOpenApiSchema } from './schema';
import type { JSONSchemaProps } from './schema-dsl';
import { PIPELINE_RULES } from './validate-rules';
import { DURATION_PATTERN } from './duration';

/** Visits every schema node with its dotted path (`[]` for items, `{}` for map values). */
function walk(node: JSONSchemaProps, path: string, visit: (n: JSONSchemaProps, p: string) => void): void {
  visit(node, path);
  for (const [k, child] of Object.entries(node.properties ?? {}))
    walk(child, path ? `${path}.${k}` : k, visit);
  if (node.items) walk(node.items, `${path}[]`, visit);
  if (node.additionalProperties) walk(node.additionalProperties, `${path}{}`, visit);
}

describe('LogPipeline CRD', () => {
  it('committed YAML is exactly what the TypeScript source renders (run `npm run crd:generate`)', () => {
    expect(fs.readFileSync(CRD_FILE, 'utf8')).toBe(renderCrdYaml());
  });

  it('loadOpenApiSchema returns the v1alpha1 schema from the YAML', () => {
    expect(loadOpenApiSchema()).toEqual(buildOpenApiSchema());
    const crd = loadCrd();
    expect(crd.metadata.name).toBe('logpipelines.logpipeline.io');
    expect(crd.spec.names.shortNames).toEqual(['lp']);
    expect(() => loadOpenApiSchema(CRD_FILE, 'v9')).toThrow(/no version v9/);
  });

  it('documents every field', () => {
    const undocumented: string[] = [];
    walk(buildOpenApiSchema(), '', (n, p) => {
      if (p !== '' && p !== 'metadata' && !p.endsWith('[]') && !p.endsWith('{}') && !n.description)
        undocumented.push(p);
    });
    expect(undocumented).toEqual([]);
  });

  it('bounds every string, list and map of the spec so CEL cost estimation has limits', () => {
    const unbounded: string[] = [];
    walk(buildOpenApiSchema(), '', (n, p) => {
      if (!p.startsWith('spec')) return;
      if (n.type === 'string' && n.maxLength === undefined && n.enum === undefined) unbounded.push(p);
      if (n.type === 'array' && n.maxItems === undefined) unbounded.push(p);
      if (n.additionalProperties && n.maxProperties === undefined) unbounded.push(p);
    });
    expect(unbounded).toEqual([]);
  });

  it('uses the shared duration pattern for every duration field', () => {
    const s = buildOpenApiSchema();
    for (const at of [
      'spec.clickhouse.retention.deleteAfter',
      'spec.clickhouse.retention.moves[].after',
      'spec.workers.batch.maxDelay',
    ]) {
      expect(schemaNodeAt(s, at)?.pattern).toBe(DURATION_PATTERN);
    }
  });

  it('attaches every rule of the table exactly once, where the table says', () => {
    const s = buildOpenApiSchema();
    for (const r of PIPELINE_RULES) {
      const rules = schemaNodeAt(s, r.at)?.['x-kubernetes-validations'] ?? [];
      expect(rules.filter((c) => c.rule === r.rule)).toHaveLength(1);
    }
    let total = 0;
    walk(s, '', (n) => (total += n['x-kubernetes-validations']?.length ?? 0));
    expect(total).toBe(PIPELINE_RULES.length);
  });

  it('states that lagPerReplica is per replica and documents defaults', () => {
    const s = buildOpenApiSchema();
    expect(schemaNodeAt(s, 'spec.workers.autoscaling.lagPerReplica')?.description).toMatch(
      /PER REPLICA \(not a total\)/,
    );
    expect(schemaNodeAt(s, 'spec.clickhouse.retention.deleteAfter')?.description).toMatch(/Default 730d/);
    expect(schemaNodeAt(s, 'spec.kafka.topic.partitions')?.description).toMatch(/Default 6/);
  });

  it('declares status and scale subresources, short name and printer columns', () => {
    const v = (buildCrd().spec as { versions: Array<Record<string, unknown>> }).versions[0];
    expect(v.subresources).toEqual({
      status: {},
      scale: {
        specReplicasPath: '.spec.workers.replicas',
        statusReplicasPath: '.status.workers.current',
        labelSelectorPath: '.status.workers.selector',
      },
    });
    const cols = (v.additionalPrinterColumns as Array<{ name: string; jsonPath: string }>).map((c) => c.name);
    expect(cols).toEqual(['Ready', 'Topic', 'Partitions', 'Replicas', 'Lag', 'Ingest', 'Age']);
  });
});
