/**
 * Autoscaler metrics (prom-client), registered on the operator's registry: per pipeline the lag
 * (total, largest partition, smoothed), the consumption rate, desired and current replicas, and
 * counters of scale events by direction and of polls that held scale-ups because the sink was
 * unhealthy. A pipeline's series disappear with it.
 */
import { Counter, type Registry } from 'prom-client';
import { labelText, RowFamily } from '../observability/pipeline-series';

type Labels = 'namespace' | 'name';

/** One poll's numbers for the gauges. */
export interface PollNumbers {
  total: number;
  maxPartition: number;
  smoothed: number;
  ratePerSecond: number;
  desired: number;
  current: number;
}

/** The gauge names and help texts, in PollNumbers order. */
const GAUGES: Array<[keyof PollNumbers, string, string]> = [
  [
    'total',
    'logpipeline_autoscaler_lag_messages',
    'Consumer-group lag over all partitions (log end minus committed; uncommitted partitions count from the log start).',
  ],
  ['maxPartition', 'logpipeline_autoscaler_lag_max_partition_messages', 'Largest lag of a single partition.'],
  [
    'smoothed',
    'logpipeline_autoscaler_lag_smoothed_messages',
    'EWMA of the total lag (tau = 3 poll intervals): what the autoscaler acts on.',
  ],
  [
    'ratePerSecond',
    'logpipeline_autoscaler_consume_rate_messages_per_second',
    'Smoothed rate at which the group commits messages.',
  ],
  ['desired', 'logpipeline_autoscaler_desired_replicas', 'Worker replicas the autoscaler set.'],
  [
    'current',
    'logpipeline_autoscaler_current_replicas',
    'Worker pods that exist (Deployment status.replicas).',
  ],
];

/** One pipeline's gauges: its label text and the last poll's numbers (updated in place). */
interface Row extends PollNumbers {
  labels: string;
}

/** The autoscaler's metric families. */
export class AutoscalerMetrics {
  /** Rows by namespace and name (no key string built per poll). */
  private readonly rows = new Map<string, Map<string, Row>>();
  private readonly scales: Counter<Labels | 'direction'>;
  private readonly holds: Counter<Labels | 'reason'>;

  /** Registers the families on `registry`. */
  constructor(registry: Registry) {
    const registers = [registry];
    const rows = () => this.allRows();
    for (const [key, name, help] of GAUGES)
      new RowFamily<Row>(
        name,
        help,
        ['namespace', 'name'],
        { rows, labels: (r) => r.labels, values: (r, emit) => emit('', r[key]) },
        registers,
      );
    this.scales = new Counter({
      name: 'logpipeline_autoscaler_scale_events_total',
      help: 'Replica changes made by the autoscaler, by direction (up, down).',
      labelNames: ['namespace', 'name', 'direction'],
      registers,
    });
    this.holds = new Counter({
      name: 'logpipeline_autoscaler_holds_total',
      help: 'Polls in which scale-ups were held because the sink was unhealthy, by reason (table_not_ready, clickhouse_unreachable, inserts_stalled).',
      labelNames: ['namespace', 'name', 'reason'],
      registers,
    });
  }

  /** Sets the gauges of one pipeline. */
  observe(namespace: string, name: string, n: PollNumbers): void {
    let byName = this.rows.get(namespace);
    if (!byName) this.rows.set(namespace, (byName = new Map()));
    let row = byName.get(name);
    if (!row) byName.set(name, (row = { labels: labelText({ namespace, name }), ...n }));
    row.total = n.total;
    row.maxPartition = n.maxPartition;
    row.smoothed = n.smoothed;
    row.ratePerSecond = n.ratePerSecond;
    row.desired = n.desired;
    row.current = n.current;
  }

  /** Counts one scale event. */
  scaled(namespace: string, name: string, direction: 'up' | 'down'): void {
    this.scales.inc({ namespace, name, direction });
  }

  /** Counts one poll that held scale-ups. */
  held(namespace: string, name: string, reason: string): void {
    this.holds.inc({ namespace, name, reason });
  }

  /** Removes every series of a pipeline. */
  forget(namespace: string, name: string): void {
    const byName = this.rows.get(namespace);
    byName?.delete(name);
    if (byName?.size === 0) this.rows.delete(namespace);
    for (const direction of ['up', 'down']) this.scales.remove({ namespace, name, direction });
    for (const reason of ['table_not_ready', 'clickhouse_unreachable', 'inserts_stalled'])
      this.holds.remove({ namespace, name, reason });
  }

  private *allRows(): Iterable<Row> {
    for (const byName of this.rows.values()) yield* byName.values();
  }
}
