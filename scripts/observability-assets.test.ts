/**
 * The dashboard and the alert rules: single-sourced (the chart's copies equal the docs'), well
 * formed, and built only from metrics and labels the operator and the workers really export — a
 * renamed metric or label fails here instead of silently emptying a panel or an alert.
 */
import fs from 'node:fs';
import { parse } from 'yaml';
import { WorkerMetrics } from '../consumer/src/observability/metrics';
import { AutoscalerMetrics } from '../operator/src/autoscale/metrics';
import { OperatorMetrics } from '../operator/src/observability/metrics';
import { lintChart, renderChart } from './helm';
import { CHART_DASHBOARD_FILE, DASHBOARD_FILE, DOCS_RULES_FILE, renderDocsRules } from './gen-observability';
import { promqlLabels, promqlMetrics } from './promql-names';

interface Target {
  expr: string;
  datasource?: { uid?: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: Target[];
  datasource?: { uid?: string };
}
interface Rule {
  alert: string;
  expr: string;
  for: string;
  labels: { severity: string };
  annotations: { summary: string };
}

const dashboard = JSON.parse(fs.readFileSync(DASHBOARD_FILE, 'utf8')) as {
  uid: string;
  panels: Panel[];
  templating: { list: Array<{ name: string; query?: string | { query: string } }> };
};
const rules = (
  parse(fs.readFileSync(DOCS_RULES_FILE, 'utf8')) as { groups: Array<{ rules: Rule[] }> }
).groups.flatMap((g) => g.rules);
const queries: Array<{ where: string; expr: string }> = [
  ...dashboard.panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({ where: `panel "${p.title}"`, expr: t.expr })),
  ),
  ...rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })),
];

/** Exported metric names (histograms with their series suffixes) and each one's label names. */
async function exportedMetrics(): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  const operator = new OperatorMetrics({ defaultMetrics: true }).registry;
  // The autoscaler registers its families on the operator's registry (controller/parts/index.ts).
  new AutoscalerMetrics(operator);
  const registries = [operator, new WorkerMetrics(true).registry];
  for (const registry of registries) {
    for (const json of await registry.getMetricsAsJSON()) {
      const name = json.name;
      const metric = registry.getSingleMetric(name) as unknown as { labelNames?: string[] } | undefined;
      const own = metric?.labelNames ?? [];
      const worker = name.startsWith('logpipeline_worker_');
      // Target labels Prometheus adds; the PodMonitor adds `pipeline` to worker series, and a series'
      // own `namespace` (logpipeline_condition) becomes exported_namespace beside the target's.
      const labels = new Set([
        ...own,
        'namespace',
        'job',
        'instance',
        'pod',
        'container',
        'service',
        'endpoint',
      ]);
      if (worker) labels.add('pipeline');
      if (own.includes('namespace')) labels.add('exported_namespace');
      const type = String(json.type);
      const names = type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name];
      for (const n of names)
        out.set(n, new Set(type === 'histogram' && n.endsWith('_bucket') ? [...labels, 'le'] : labels));
    }
  }
  // Prometheus' own per-target series.
  out.set('up', new Set(['job', 'namespace', 'instance', 'pod', 'service', 'endpoint']));
  return out;
}

describe('single source', () => {
  it('the chart ships the docs dashboard byte for byte (run `npm run docs:observability`)', () => {
    expect(fs.readFileSync(CHART_DASHBOARD_FILE, 'utf8') === fs.readFileSync(DASHBOARD_FILE, 'utf8')).toBe(
      true,
    );
  });

  it('docs/alerts/logpipeline-rules.yaml is the chart rules rendered now (run `npm run docs:observability`)', () => {
    const expected = renderDocsRules();
    if (fs.readFileSync(DOCS_RULES_FILE, 'utf8') !== expected) {
      throw new Error(
        'docs/alerts/logpipeline-rules.yaml differs from charts/logpipeline-operator/files/prometheus-rules.yaml rendered with the chart defaults: run `npm run docs:observability` and commit the result',
      );
    }
  });

  it('the chart lints with the dashboard and the rules on', () => {
    expect(lintChart({ grafanaDashboard: { enabled: true }, prometheusRule: { enabled: true } })).toMatch(
      /0 chart\(s\) failed/,
    );
  });

  it('the chart renders the dashboard ConfigMap for the Grafana sidecar only when asked', () => {
    expect(renderChart({}).some((o) => o.kind === 'ConfigMap')).toBe(false);
    const cm = renderChart({
      grafanaDashboard: { enabled: true, annotations: { grafana_folder: 'Logs' } },
    }).find((o) => o.kind === 'ConfigMap') as unknown as {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
      data: Record<string, string>;
    };
    expect(cm.metadata.labels.grafana_dashboard).toBe('1');
    expect(cm.metadata.annotations).toEqual({ grafana_folder: 'Logs' });
    expect(JSON.parse(cm.data['logpipeline.json'])).toEqual(dashboard);
  });
});

describe('metric and label names', () => {
  let exported: Map<string, Set<string>>;
  beforeAll(async () => {
    exported = await exportedMetrics();
  });

  it('every dashboard query and alert uses only exported metrics', () => {
    const variableQueries = dashboard.templating.list
      .map((v) => (typeof v.query === 'string' ? v.query : v.query?.query))
      .filter((q): q is string => !!q && q.startsWith('label_values('));
    const all = [...queries, ...variableQueries.map((expr) => ({ where: 'template variable', expr }))];
    const unknown = all.flatMap(({ where, expr }) =>
      promqlMetrics(expr)
        .filter((m) => !exported.has(m))
        .map((m) => `${where}: ${m}`),
    );
    expect(unknown).toEqual([]);
    const used = new Set(all.flatMap(({ expr }) => promqlMetrics(expr)));
    expect(used.size).toBeGreaterThanOrEqual(18);
  });

  it('every label a query filters or groups by exists on the metrics it reads', () => {
    const wrong = queries.flatMap(({ where, expr }) => {
      const available = new Set(promqlMetrics(expr).flatMap((m) => [...(exported.get(m) ?? [])]));
      return promqlLabels(expr)
        .filter((l) => !available.has(l))
        .map((l) => `${where}: label ${l}`);
    });
    expect(wrong).toEqual([]);
  });

  it('covers throughput, lag, workers, insert latency, dead letters and the operator', () => {
    const used = new Set(queries.flatMap(({ expr }) => promqlMetrics(expr)));
    for (const m of [
      'logpipeline_worker_lines_total',
      'logpipeline_worker_rows_inserted_total',
      'logpipeline_worker_partition_lag',
      'logpipeline_worker_insert_duration_seconds_bucket',
      'logpipeline_worker_insert_failures_total',
      'logpipeline_worker_dead_letters_total',
      'logpipeline_operator_reconcile_errors_total',
      'logpipeline_operator_reconcile_duration_seconds_bucket',
      'logpipeline_condition',
      'logpipeline_autoscaler_desired_replicas',
      'logpipeline_autoscaler_current_replicas',
      'logpipeline_autoscaler_lag_messages',
      'logpipeline_autoscaler_holds_total',
    ])
      expect(used).toContain(m);
  });
});

describe('dashboard', () => {
  const panels = dashboard.panels;

  it('has unique panel ids and a query on the templated data source in every panel', () => {
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    for (const p of panels.filter((x) => x.type !== 'row')) {
      expect({ title: p.title, targets: (p.targets ?? []).length > 0 }).toEqual({
        title: p.title,
        targets: true,
      });
      expect(p.datasource?.uid).toBe('${datasource}');
      for (const t of p.targets ?? []) expect(t.datasource?.uid).toBe('${datasource}');
    }
  });

  it('lays panels out on the 24-column grid without overlaps', () => {
    const taken = new Set<string>();
    for (const p of panels) {
      const { x, y, w, h } = p.gridPos;
      expect(x + w).toBeLessThanOrEqual(24);
      for (let i = x; i < x + w; i++)
        for (let j = y; j < y + h; j++) {
          expect({ panel: p.title, cell: `${i},${j}`, free: !taken.has(`${i},${j}`) }).toMatchObject({
            free: true,
          });
          taken.add(`${i},${j}`);
        }
    }
  });

  it('defines every variable its queries use', () => {
    const defined = new Set(dashboard.templating.list.map((v) => v.name));
    const used = new Set(
      queries
        .flatMap(({ expr }) => [...expr.matchAll(/\$(\w+)/g)].map((m) => m[1]))
        .filter((v) => !v.startsWith('__')),
    );
    expect([...used].filter((v) => !defined.has(v))).toEqual([]);
  });
});

describe('alert rules', () => {
  it('are complete: name, expression, duration, severity and a summary', () => {
    expect(rules.length).toBeGreaterThanOrEqual(10);
    expect(new Set(rules.map((r) => r.alert)).size).toBe(rules.length);
    for (const r of rules) {
      expect(r.alert).toMatch(/^LogPipeline[A-Za-z]+$/);
      expect(r.for).toMatch(/^[0-9]+m$/);
      expect(['warning', 'critical']).toContain(r.labels.severity);
      expect(r.annotations.summary.length).toBeGreaterThan(10);
    }
  });
});
