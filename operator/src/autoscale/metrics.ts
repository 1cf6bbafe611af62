/**
 * Autoscaler metrics (prom-client), registered on the operator's registry: per pipeline the lag
 * (total, largest partition, smoothed), the consumption rate, desired and current replicas, and
 * counters of scale events by direction and of polls that held scale-ups because the sink was
 * unhealthy. A pipeline's series disappear with it.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

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

/** The autoscaler's metric families. */
export class AutoscalerMetrics {
  private readonly gauges: Record<keyof PollNumbers, Gauge<Labels>>;
  private readonly scales: Counter<Labels | 'direction'>;
  private readonly holds: Counter<Labels | 'reason'>;

  /** Registers the families on `registry`. */
  constructor(registry: Registry) {
    const registers = [registry];
    const gauge = (name: string, help: string) =>
      new Gauge({ name, help, labelNames: ['namespace', 'name'], registers });
    this.gauges = {
      total: gauge(
        'logpipeline_autoscaler_lag_messages',
        'Consumer-group lag over all partitions (log end minus committed; uncommitted partitions count from the log start).',
      ),
      maxPartition: gauge(
        'logpipeline_autoscaler_lag_max_partition_messages',
        'Largest lag of a single partition.',
      ),
      smoothed: gauge(
        'logpipeline_autoscaler_lag_smoothed_messages',
        'EWMA of the total lag (tau = 3 poll intervals): what the autoscaler acts on.',
      ),
      ratePerSecond: gauge(
        'logpipeline_autoscaler_consume_rate_messages_per_second',
        'Smoothed rate at which the group commits messages.',
      ),
      desired: gauge('logpipeline_autoscaler_desired_replicas', 'Worker replicas the autoscaler set.'),
      current: gauge(
        'logpipeline_autoscaler_current_replicas',
        'Worker pods that exist (Deployment status.replicas).',
      ),
    };
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
    for (const key of Object.keys(this.gauges) as Array<keyof PollNumbers>)
      this.gauges[key].set({ namespace, name }, n[key]);
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
    for (const g of Object.values(this.gauges)) g.remove({ namespace, name });
    for (const direction of ['up', 'down']) this.scales.remove({ namespace, name, direction });
    for (const reason of ['table_not_ready', 'clickhouse_unreachable', 'inserts_stalled'])
      this.holds.remove({ namespace, name, reason });
  }
}
