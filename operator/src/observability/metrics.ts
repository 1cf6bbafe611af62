/**
 * Operator metrics (prom-client, on a registry of our own): reconcile counts, errors and
 * durations, queue depth, leadership, informer restarts, and one gauge series per pipeline
 * condition (1 True, 0 False, -1 Unknown) that disappears with the pipeline.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { clickhouseStatementCounts } from '../apply/clickhouse-client';
import {
  clickhouseRequests,
  kafkaRequests,
  kubeRequests,
  reconcilePhaseSeconds,
  type CountMap,
} from '../apply/request-counts';
import type { Condition } from '../api/types';
import { observerRoundRequests, observerRoundSeconds } from '../apply/observer-rounds';
import type { RequestScope } from '../apply/request-counts';
import { FleetMetrics, type QueueSources } from './fleet-metrics';

/** Live numbers the gauges read when scraped. */
export interface MetricSources {
  queueDepth(): number;
  queueWaiting(): number;
  isLeader(): boolean;
  informerErrors(): Record<string, number>;
  /** Lanes and in-flight keys of the work queue (fleet-metrics.ts). */
  queue?: QueueSources;
}

const STATUS_VALUE: Record<Condition['status'], number> = { True: 1, False: 0, Unknown: -1 };

/** The operator's metrics and their registry. */
export class OperatorMetrics {
  readonly registry = new Registry();
  private readonly reconciles: Counter<'result'>;
  private readonly errors: Counter;
  private readonly duration: Histogram;
  private readonly condition: Gauge<'namespace' | 'name' | 'type'>;
  private readonly known = new Map<string, string[]>();
  private sources?: MetricSources;
  /** Per-reconcile request histograms, queue lanes and wait, catalogue and Event counts. */
  readonly fleet: FleetMetrics;

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    this.fleet = new FleetMetrics(this.registry);
    if (opts.defaultMetrics)
      collectDefaultMetrics({ register: this.registry, prefix: 'logpipeline_operator_' });
    this.reconciles = new Counter({
      name: 'logpipeline_operator_reconcile_total',
      help: 'Reconciles by result (success, requeue, error).',
      labelNames: ['result'],
      registers,
    });
    this.errors = new Counter({
      name: 'logpipeline_operator_reconcile_errors_total',
      help: 'Reconciles that threw and were retried with backoff.',
      registers,
    });
    this.duration = new Histogram({
      name: 'logpipeline_operator_reconcile_duration_seconds',
      help: 'Duration of one reconcile.',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.condition = new Gauge({
      name: 'logpipeline_condition',
      help: 'Pipeline condition status: 1 True, 0 False, -1 Unknown.',
      labelNames: ['namespace', 'name', 'type'],
      registers,
    });
    const src = (): MetricSources | undefined => this.sources;
    new Gauge({
      name: 'logpipeline_operator_queue_depth',
      help: 'Keys ready to reconcile.',
      registers,
      collect() {
        this.set(src()?.queueDepth() ?? 0);
      },
    });
    new Gauge({
      name: 'logpipeline_operator_queue_waiting',
      help: 'Keys scheduled for later (requeueAfter, backoff).',
      registers,
      collect() {
        this.set(src()?.queueWaiting() ?? 0);
      },
    });
    new Gauge({
      name: 'logpipeline_operator_leader',
      help: '1 while this instance is the leader.',
      registers,
      collect() {
        this.set(src()?.isLeader() ? 1 : 0);
      },
    });
    new Counter({
      name: 'logpipeline_operator_clickhouse_statements_total',
      help: 'Statements (DDL, user and grant management) sent to ClickHouse, by kind (CREATE TABLE, GRANT, DROP ROLE, …).',
      labelNames: ['kind'],
      registers,
      collect() {
        this.reset();
        for (const [kind, n] of clickhouseStatementCounts()) this.inc({ kind }, n);
      },
    });
    const family = (
      name: string,
      help: string,
      labelNames: string[],
      map: CountMap,
      split: (k: string) => Record<string, string>,
    ) =>
      new Counter({
        name,
        help,
        labelNames,
        registers,
        collect() {
          this.reset();
          for (const [k, n] of map.entries()) this.inc(split(k), n);
        },
      });
    family(
      'logpipeline_operator_kube_requests_total',
      'Kubernetes API requests sent, by verb and resource (subresources as resource/sub).',
      ['verb', 'resource'],
      kubeRequests,
      (k) => ({ verb: k.split(' ')[0], resource: k.split(' ')[1] }),
    );
    family(
      'logpipeline_operator_clickhouse_requests_total',
      'ClickHouse HTTP requests sent, by kind (SELECT <first table>, CREATE TABLE, PING, …).',
      ['kind'],
      clickhouseRequests,
      (kind) => ({ kind }),
    );
    family(
      'logpipeline_operator_kafka_requests_total',
      'Kafka protocol requests sent by the operator, by API (Metadata, DescribeConfigs, OffsetFetch, ListOffsets, …).',
      ['api'],
      kafkaRequests,
      (api) => ({ api }),
    );
    family(
      'logpipeline_operator_reconcile_phase_seconds_total',
      'Wall time spent in each reconcile phase (Topic, Table, children, autoscaler, status).',
      ['phase'],
      reconcilePhaseSeconds,
      (phase) => ({ phase }),
    );
    this.registry.registerMetric(observerRoundSeconds);
    this.registry.registerMetric(observerRoundRequests);
    new Gauge({
      name: 'logpipeline_operator_informer_errors',
      help: 'Errors each informer recovered from (restarts with backoff).',
      labelNames: ['informer'],
      registers,
      collect() {
        for (const [informer, n] of Object.entries(src()?.informerErrors() ?? {})) this.set({ informer }, n);
      },
    });
  }

  /** Connects the live sources read at scrape time. */
  setSources(sources: MetricSources): void {
    this.sources = sources;
    if (sources.queue) this.fleet.setQueue(sources.queue);
  }

  /** Records the requests one reconcile sent (its RequestScope). */
  observeReconcileRequests(scope: RequestScope): void {
    this.fleet.observeReconcile(scope);
  }

  /** Records one reconcile. */
  observeReconcile(result: 'success' | 'requeue' | 'error', seconds: number): void {
    this.reconciles.inc({ result });
    if (result === 'error') this.errors.inc();
    this.duration.observe(seconds);
  }

  /** Sets the condition series of a pipeline. */
  setConditions(namespace: string, name: string, conditions: Condition[]): void {
    const key = `${namespace}/${name}`;
    const types: string[] = [];
    for (const c of conditions) {
      this.condition.set({ namespace, name, type: c.type }, STATUS_VALUE[c.status] ?? -1);
      types.push(c.type);
    }
    for (const t of this.known.get(key) ?? [])
      if (!types.includes(t)) this.condition.remove({ namespace, name, type: t });
    this.known.set(key, types);
  }

  /** Removes the series of a deleted pipeline. */
  forgetPipeline(namespace: string, name: string): void {
    const key = `${namespace}/${name}`;
    for (const type of this.known.get(key) ?? []) this.condition.remove({ namespace, name, type });
    this.known.delete(key);
  }
}
