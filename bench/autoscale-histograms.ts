/**
 * The fleet metrics of the scale benchmark between two scrapes (observability/fleet-metrics.ts):
 * requests per reconcile by system and queue wait by lane as count / mean / p50 / p90 (upper
 * bucket bounds), and what the ClickHouse catalogues and the Event recorder did.
 */
import { metric, metricSeries, seriesDelta } from './autoscale-support';

/** A histogram's observations between two scrapes, for one label value. */
export interface HistogramDelta {
  count: number;
  mean: number;
  /** Upper bounds of the buckets holding the median and the 90th percentile. */
  p50: number;
  p90: number;
}

/** The fleet metrics of a phase. */
export interface FleetPhase {
  requestsPerReconcile: Record<string, HistogramDelta>;
  queueWaitSeconds: Record<string, HistogramDelta>;
  catalogue: { reads: Record<string, number>; rounds: number; invalidations: number };
  events: Record<string, number>;
}

/** Per value of the histogram's one label (besides `le`): its observations between two scrapes. */
export function histogramDelta(before: string, after: string, name: string): Record<string, HistogramDelta> {
  const buckets = seriesDelta(metricSeries(before, `${name}_bucket`), metricSeries(after, `${name}_bucket`));
  const sums = seriesDelta(metricSeries(before, `${name}_sum`), metricSeries(after, `${name}_sum`));
  const byLabel = new Map<string, Array<{ le: number; n: number }>>();
  for (const [key, n] of Object.entries(buckets)) {
    const [le, ...rest] = key.split(' ');
    const label = rest.join(' ');
    const list = byLabel.get(label) ?? [];
    list.push({ le: le === '+Inf' ? Infinity : Number(le), n });
    byLabel.set(label, list);
  }
  const out: Record<string, HistogramDelta> = {};
  for (const [label, list] of byLabel) {
    list.sort((x, y) => x.le - y.le);
    const count = list[list.length - 1]?.n ?? 0;
    if (count === 0) continue;
    const at = (q: number) => list.find((b) => b.n >= q * count)?.le ?? Infinity;
    out[label] = {
      count,
      mean: Math.round(((sums[label] ?? 0) / count) * 1000) / 1000,
      p50: at(0.5),
      p90: at(0.9),
    };
  }
  return out;
}

/** The fleet metrics between two scrapes of the operator's /metrics. */
export function fleetPhase(before: string, after: string): FleetPhase {
  const d = (name: string) => metric(after, name).sum - metric(before, name).sum;
  return {
    requestsPerReconcile: histogramDelta(before, after, 'logpipeline_operator_reconcile_requests'),
    queueWaitSeconds: histogramDelta(before, after, 'logpipeline_operator_queue_wait_seconds'),
    catalogue: {
      reads: seriesDelta(
        metricSeries(before, 'logpipeline_operator_clickhouse_catalogue_reads_total'),
        metricSeries(after, 'logpipeline_operator_clickhouse_catalogue_reads_total'),
      ),
      rounds: d('logpipeline_operator_clickhouse_catalogue_rounds_total'),
      invalidations: d('logpipeline_operator_clickhouse_catalogue_invalidations_total'),
    },
    events: seriesDelta(
      metricSeries(before, 'logpipeline_operator_events_total'),
      metricSeries(after, 'logpipeline_operator_events_total'),
    ),
  };
}
