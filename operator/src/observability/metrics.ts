/**
 * Operator metrics (prom-client, on a registry of our own): reconcile counts, errors and
 * durations, queue depth, leadership, informer restarts, and one gauge series per pipeline
 * condition (1 True, 0 False, -1 Unknown) that disappears with the pipeline.
 */
import { Counter, Gauge, Histogram, collectDefaultMetrics } from 'prom-client';
import { labelText, PipelineSeriesRegistry, RowFamily } from './pipeline-series';
import { clickhouseStatementCounts } from '../apply/clickhouse-client';
import {
  clickhouseRequests,
  deferredTopicWork,
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
  /** Renders the per-pipeline families itself (pipeline-series.ts), everything else as prom-client does. */
  readonly registry = new PipelineSeriesRegistry();
  private readonly reconciles: Counter<'result'>;
  private readonly errors: Counter;
  private readonly duration: Histogram;
  /** Condition series by pipeline key (namespace/name): label text and value by condition type. */
  private readonly conditions = new Map<string, ConditionRow>();
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
    new RowFamily<ConditionRow>(
      'logpipeline_condition',
      'Pipeline condition status: 1 True, 0 False, -1 Unknown.',
      ['namespace', 'name', 'type'],
      {
        rows: () => this.conditions.values(),
        labels: (r) => r.labels,
        values: (r, emit) => {
          for (const [type, value] of r.byType) emit(type, value);
        },
      },
      registers,
    );
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
      'logpipeline_operator_deferred_topic_work_total',
      'Work on a topic created a moment ago that the broker did not know yet, left to a reconcile 2 s later (topic owner record, topic limit).',
      ['what'],
      deferredTopicWork,
      (what) => ({ what }),
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

  /** Sets the condition series of a pipeline (types it no longer has disappear). */
  setConditions(namespace: string, name: string, conditions: Condition[]): void {
    const key = `${namespace}/${name}`;
    let row = this.conditions.get(key);
    if (!row) this.conditions.set(key, (row = { labels: labelText({ namespace, name }), byType: new Map() }));
    for (const type of row.byType.keys())
      if (!conditions.some((c) => typeLabel(c.type) === type)) row.byType.delete(type);
    for (const c of conditions) row.byType.set(typeLabel(c.type), STATUS_VALUE[c.status] ?? -1);
  }

  /** Removes the series of a deleted pipeline. */
  forgetPipeline(namespace: string, name: string): void {
    this.conditions.delete(`${namespace}/${name}`);
  }
}

/** One pipeline's condition series: its label text and the value by type label text. */
interface ConditionRow {
  labels: string;
  byType: Map<string, number>;
}

/** `,type="Ready"`, built once per condition type (a handful of types in all). */
const typeLabels = new Map<string, string>();
function typeLabel(type: string): string {
  let t = typeLabels.get(type);
  if (!t) typeLabels.set(type, (t = `,${labelText({ type })}`));
  return t;
}
