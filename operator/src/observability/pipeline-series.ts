/**
 * Gauge families with one series per pipeline, kept as rows the owner updates in place and
 * rendered straight to the Prometheus text format. prom-client keeps an object per series (labels
 * object, hash key, value) and rebuilds every label string at each scrape (Object.entries, escaping,
 * a WeakMap entry per series): at 1000 pipelines x 14 series that was a fifth of the operator's
 * steady CPU and a third of its allocation. Here the label text of a row is escaped once, setting a
 * value allocates nothing, and a scrape concatenates one string per series.
 *
 * A family registers on a prom-client registry like any metric: `get()` answers in prom-client's
 * shape (JSON, other registries), and `PipelineSeriesRegistry` asks it for its text directly.
 */
import { Registry, type Metric, type MetricObjectWithValues, type MetricValue } from 'prom-client';

/** The label text of a series, `namespace="ns",name="fw"` (values escaped as the text format wants). */
export function labelText(labels: Record<string, string>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`)
    .join(',');
}

/** What a family reads of one row: its label text and, per series of the row, a value. */
export interface RowSource<R> {
  rows(): Iterable<R>;
  labels(row: R): string;
  /** Calls `emit` once per series of the row (extra label text or '' and the value). */
  values(row: R, emit: (extraLabels: string, value: number) => void): void;
}

/** A family rendered from rows (see the module comment); type gauge. */
export class RowFamily<R> {
  readonly type = 'gauge';
  readonly aggregator = 'sum';
  private readonly head: string;

  constructor(
    readonly name: string,
    readonly help: string,
    /** The label names of its series, as prom-client metrics declare them. */
    readonly labelNames: readonly string[],
    private readonly source: RowSource<R>,
    registers: Registry[] = [],
  ) {
    this.head = `# HELP ${name} ${help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}\n# TYPE ${name} gauge`;
    for (const r of registers) r.registerMetric(this as unknown as Metric);
  }

  /** The family in the Prometheus text format (no trailing newline, as prom-client renders one). */
  prometheusText(): string {
    const lines = [this.head];
    const prefix = `${this.name}{`;
    for (const row of this.source.rows()) {
      const labels = this.source.labels(row);
      this.source.values(row, (extra, value) => {
        lines.push(`${prefix}${labels}${extra}} ${formatValue(value)}`);
      });
    }
    return lines.join('\n');
  }

  /** prom-client's shape (for getMetricsAsJSON and registries that format themselves). */
  get(): Promise<MetricObjectWithValues<MetricValue<string>>> {
    const values: Array<MetricValue<string>> = [];
    for (const row of this.source.rows()) {
      const labels = parseLabels(this.source.labels(row));
      this.source.values(row, (extra, value) =>
        values.push({ labels: { ...labels, ...parseLabels(extra.replace(/^,/, '')) }, value }),
      );
    }
    const metric = { name: this.name, help: this.help, type: 'gauge', aggregator: 'sum', values };
    return Promise.resolve(metric as unknown as MetricObjectWithValues<MetricValue<string>>);
  }

  /** The rows belong to their owner; nothing to reset here. */
  reset(): void {}
}

/** A registry that lets RowFamily render itself (everything else as prom-client renders it). */
export class PipelineSeriesRegistry extends Registry {
  /** prom-client's per-metric formatter (not in its typings), short-cut for row families. */
  async getMetricsAsString(metric: Metric): Promise<string> {
    if (metric instanceof RowFamily && this.contentType === Registry.PROMETHEUS_CONTENT_TYPE)
      return metric.prometheusText();
    return (Registry.prototype as unknown as Formatter).getMetricsAsString.call(this, metric);
  }
}

interface Formatter {
  getMetricsAsString(metric: Metric): Promise<string>;
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'Nan';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function parseLabels(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
    out[m[1]] = m[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  return out;
}
