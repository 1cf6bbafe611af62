/**
 * Shared expectations and accessors for the chart tests (scripts/chart-*.test.ts): what the
 * operator must be granted and how to pick objects out of a `helm template` render.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { CHART_DIR, renderChart, type RenderedObject } from './helm';

/** An RBAC rule as rendered. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}
/** The parts of a rendered container the tests inspect. */
export interface Container {
  name: string;
  image: string;
  env: Array<{ name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }>;
  ports: Array<{ name: string; containerPort: number }>;
  livenessProbe: { httpGet: { path: string; port: string } };
  readinessProbe: { httpGet: { path: string; port: string } };
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext: Record<string, unknown> & { capabilities?: { drop?: string[]; add?: string[] } };
}
/** The parts of a rendered pod spec the tests inspect. */
export interface PodSpec {
  serviceAccountName: string;
  securityContext: Record<string, unknown>;
  containers: Container[];
}

/** Release namespace of every test render. */
export const NS = 'logpipeline-system';
/** Release name of every test render. */
export const RELEASE = 'lp';
/** The chart's fullname for RELEASE. */
export const FULLNAME = 'lp-logpipeline-operator';
/** Chart.yaml, for the appVersion the images are tagged with. */
export const chart = parse(fs.readFileSync(path.join(CHART_DIR, 'Chart.yaml'), 'utf8')) as {
  appVersion: string;
};

/** The grants the operator needs on the objects it reconciles, as "group/resource" -> verbs. */
export const RECONCILE_GRANTS: Record<string, string[]> = {
  'logpipeline.io/logpipelines': ['get', 'list', 'watch', 'update', 'patch'],
  'logpipeline.io/logpipelines/status': ['get', 'update', 'patch'],
  'logpipeline.io/logpipelines/finalizers': ['update'],
  'apps/deployments': ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  'apps/deployments/scale': ['get', 'update', 'patch'],
  '/configmaps': ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  'policy/poddisruptionbudgets': ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  '/services': ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  'autoscaling/horizontalpodautoscalers': ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  '/secrets': ['get', 'list', 'watch'],
  '/pods': ['get', 'list', 'watch'],
  '/events': ['create', 'patch'],
};

/** Renders the chart as release RELEASE in NS. */
export function render(values: object = {}): RenderedObject[] {
  return renderChart(values, { releaseName: RELEASE, namespace: NS });
}

/** The first object of that kind (and name/namespace); throws listing what was rendered. */
export function find(
  objects: RenderedObject[],
  kind: string,
  name?: string,
  namespace?: string,
): RenderedObject {
  const hit = objects.find(
    (o) =>
      o.kind === kind &&
      (!name || o.metadata.name === name) &&
      (!namespace || o.metadata.namespace === namespace),
  );
  if (!hit)
    throw new Error(
      `no ${kind} ${namespace ?? ''}/${name ?? '*'} in: ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`,
    );
  return hit;
}

/**
 * Flattens rules to "group/resource" -> sorted verbs; throws on a wildcard. A grant given twice shows
 * up as a repeated verb, so comparing with the expected table also catches overlapping rules.
 */
export function grants(rules: PolicyRule[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const r of rules) {
    if ([...r.verbs, ...r.resources, ...r.apiGroups].includes('*'))
      throw new Error(`wildcard in ${JSON.stringify(r)}`);
    for (const g of r.apiGroups)
      for (const res of r.resources) out[`${g}/${res}`] = [...(out[`${g}/${res}`] ?? []), ...r.verbs].sort();
  }
  return out;
}

/** The same grants with each verb list sorted, for comparisons. */
export function sortedGrants(g: Record<string, string[]>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(g).map(([k, v]) => [k, [...v].sort()]));
}

/** The operator Deployment's pod spec. */
export function operatorPod(objects: RenderedObject[]): PodSpec {
  const dep = find(objects, 'Deployment', FULLNAME, NS) as unknown as {
    spec: { template: { spec: PodSpec } };
  };
  return dep.spec.template.spec;
}

/** A container's env as name -> value ("fieldRef:<path>" for downward-API values). */
export function envOf(c: Container): Record<string, string> {
  return Object.fromEntries(
    c.env.map((e) => [e.name, e.value ?? `fieldRef:${e.valueFrom?.fieldRef?.fieldPath}`]),
  );
}
