/**
 * Metrics of the operator at fleet scale (issue 18): how many requests each reconcile sends (one
 * histogram of counts per system, and one per verb/resource, ClickHouse kind and Kafka API), the
 * work queue's lanes and wait time, and what the ClickHouse catalogues and the Event recorder did.
 * Observing a reconcile costs a few map lookups; the label sets are bounded (verbs x resources,
 * statement kinds, protocol APIs).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { catalogueCounts } from '../apply/clickhouse-catalogue';
import { eventResults } from '../apply/event-recorder';
import type { CountMap, RequestScope, RequestSystem } from '../apply/request-counts';

/** Buckets of "requests per reconcile": a steady reconcile sends 0, a creation a few dozen. */
export const REQUESTS_PER_RECONCILE_BUCKETS = [0, 1, 2, 5, 10, 20, 50, 100];
/** Buckets of the queue wait (seconds): from an immediate hand-out to a storm's backlog. */
export const QUEUE_WAIT_BUCKETS = [0.001, 0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300];

/** Live queue numbers read at scrape time. */
export interface QueueSources {
  lanes(): { fast: number; bulk: number };
  inFlight(): number;
}

/** The fleet-scale metrics on `registry`. */
export class FleetMetrics {
  private readonly perSystem: Histogram<'system'>;
  private readonly perLabel: Record<
    RequestSystem,
    { hist: Histogram<string>; split: (l: string) => Record<string, string> }
  >;
  private readonly queueWait: Histogram<'lane'>;
  private queue?: QueueSources;

  constructor(registry: Registry) {
    const registers = [registry];
    const hist = (name: string, help: string, labelNames: string[]) =>
      new Histogram({ name, help, labelNames, buckets: REQUESTS_PER_RECONCILE_BUCKETS, registers });
    this.perSystem = hist(
      'logpipeline_operator_reconcile_requests',
      'Requests one reconcile sent, by system (kube, clickhouse, kafka); observed for every reconcile, zeros included.',
      ['system'],
    ) as Histogram<'system'>;
    const bySpace = (l: string) => ({ verb: l.split(' ')[0], resource: l.split(' ')[1] ?? '' });
    this.perLabel = {
      kube: {
        hist: hist(
          'logpipeline_operator_reconcile_kube_requests',
          'Kubernetes API requests of one reconcile by verb and resource (reconciles that sent at least one).',
          ['verb', 'resource'],
        ),
        split: bySpace,
      },
      clickhouse: {
        hist: hist(
          'logpipeline_operator_reconcile_clickhouse_requests',
          'ClickHouse requests of one reconcile by kind (reconciles that sent at least one).',
          ['kind'],
        ),
        split: (kind) => ({ kind }),
      },
      kafka: {
        hist: hist(
          'logpipeline_operator_reconcile_kafka_requests',
          'Kafka protocol requests of one reconcile by API (reconciles that sent at least one).',
          ['api'],
        ),
        split: (api) => ({ api }),
      },
    };
    this.queueWait = new Histogram({
      name: 'logpipeline_operator_queue_wait_seconds',
      help: 'Time a key waited in the work queue from being added to being handed to a worker, by lane.',
      labelNames: ['lane'],
      buckets: QUEUE_WAIT_BUCKETS,
      registers,
    });
    const queue = () => this.queue;
    new Gauge({
      name: 'logpipeline_operator_queue_lane_depth',
      help: 'Keys ready to reconcile by lane (fast: reconciled before; bulk: never reconciled by this instance).',
      labelNames: ['lane'],
      registers,
      collect() {
        const l = queue()?.lanes() ?? { fast: 0, bulk: 0 };
        this.set({ lane: 'fast' }, l.fast);
        this.set({ lane: 'bulk' }, l.bulk);
      },
    });
    new Gauge({
      name: 'logpipeline_operator_queue_in_flight',
      help: 'Keys being reconciled right now.',
      registers,
      collect() {
        this.set(queue()?.inFlight() ?? 0);
      },
    });
    const counter = (
      name: string,
      help: string,
      label: string,
      map: CountMap,
      filter: (k: string) => string | undefined,
    ) =>
      new Counter({
        name,
        help,
        labelNames: [label],
        registers,
        collect() {
          this.reset();
          for (const [k, n] of map.entries()) {
            const v = filter(k);
            if (v !== undefined) this.inc({ [label]: v }, n);
          }
        },
      });
    counter(
      'logpipeline_operator_clickhouse_catalogue_reads_total',
      'Catalogue reads by result: fresh (snapshot reused), shared (joined a round in flight), round (waited for a new round), probe (a batch of named tables read).',
      'result',
      catalogueCounts,
      (k) => (k.startsWith('read ') ? k.slice(5) : undefined),
    );
    const single = (name: string, help: string, key: string) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(catalogueCounts.get(key));
        },
      });
    single(
      'logpipeline_operator_clickhouse_catalogue_rounds_total',
      'Catalogue rounds read (five queries each, whatever the number of pipelines on the server).',
      'round',
    );
    single(
      'logpipeline_operator_clickhouse_catalogue_invalidations_total',
      'Catalogues marked dirty by our own statements (the next read fetches a fresh round).',
      'invalidation',
    );
    counter(
      'logpipeline_operator_events_total',
      'Events by result: created, aggregated (an existing Event patched), dropped (spam filter or full send queue), failed.',
      'result',
      eventResults,
      (k) => k,
    );
  }

  /** Connects the work queue read at scrape time. */
  setQueue(queue: QueueSources): void {
    this.queue = queue;
  }

  /** Records the requests one reconcile sent. */
  observeReconcile(scope: RequestScope): void {
    for (const system of ['kube', 'clickhouse', 'kafka'] as const) {
      this.perSystem.observe({ system }, scope.total(system));
      const { hist, split } = this.perLabel[system];
      for (const [label, n] of scope.counts[system]) hist.observe(split(label), n);
    }
  }

  /** Records how long a key waited in the queue. */
  observeQueueWait(lane: 'fast' | 'bulk', seconds: number): void {
    this.queueWait.observe({ lane }, seconds);
  }
}
