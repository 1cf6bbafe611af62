/** Registers the Kafka topic and ClickHouse table parts and the lag autoscaler on a manager; returns a closer for shutdown. */
import type { Registry } from 'prom-client';
import { KafkaAdminPool } from '../../apply/kafka-client';
import { KafkaObservers } from '../../autoscale/kafka-observers';
import { AutoscalerMetrics } from '../../autoscale/metrics';
import { workerName } from '../../desired/labels';
import type { Manager } from '../manager';
import { createScalingPart, type LagScaler } from './scaling-part';
import { SealScheduler } from './seal-part';
import { ChainWatch, type ChainWatchOptions } from '../../compliance/chain-watch';
import { withChainWatch } from './chain-part';
import { ClickHousePool } from './clickhouse-pool';
import { createTablePart } from './table-part';
import { createTopicPart } from './topic-part';
import { TopicBatchers } from '../../apply/kafka-topic-batchers';
import { closeUnusedKafkaClients, KafkaConnectionUse } from '../../apply/kafka-connection-use';

/** Shared clients of the external parts (one admin per Kafka cluster, one HTTP client per ClickHouse user). */
export interface ExternalClients {
  kafka: KafkaAdminPool;
  clickhouse: ClickHousePool;
  /** The lag autoscaler (shares both pools). */
  autoscaler: LagScaler;
  /** The per-cluster topic batchers of the Topic part (coalesced Metadata, CreateTopics, owner records). */
  topics: TopicBatchers;
  /** The per-cluster Kafka observers the autoscaler samples through (one round per cluster and interval). */
  observers: KafkaObservers;
  close(): Promise<void>;
}

/** How often the Kafka clients of unused connections are looked for, and how long they are kept unused. */
const CLIENT_SWEEP_MS = 60_000;
const CLIENT_GRACE_MS = 5 * 60_000;

/** Options of registerExternalParts. */
export interface ExternalPartsOptions {
  /** Registry for the autoscaler's metrics (the operator's OperatorMetrics.registry); none when absent. */
  registry?: Registry;
  /** The scheduled seal (clock and delays; tests shorten them). */
  seal?: ConstructorParameters<typeof SealScheduler>[0];
  /** The ChainLinked condition's reads (interval; tests shorten it). */
  chain?: ChainWatchOptions;
}

/** Registers the Topic and Table parts and the autoscaler on `manager` and returns their shared clients. */
export function registerExternalParts(manager: Manager, opts: ExternalPartsOptions = {}): ExternalClients {
  const kafka = new KafkaAdminPool();
  // Drift a catalogue round sees drops the memoized Table outcomes of the pipelines it concerns.
  const clickhouse = new ClickHousePool({
    onTablesChanged: (url, tables) => manager.reconciler.partMemo?.tablesChanged(url, tables),
  });
  const pipelines = (naming?: readonly string[]) => manager.claimants(naming);
  // One coalescing batcher per Kafka cluster: a storm of creations shares its admin requests.
  const topics = new TopicBatchers();
  const connections = new KafkaConnectionUse();
  manager.reconciler.registerPart(createTopicPart(kafka, pipelines, topics, connections));
  manager.reconciler.registerPart(createTablePart(clickhouse));
  const observers = new KafkaObservers();
  const autoscaler = createScalingPart({
    observers,
    connections,
    clickhouse,
    client: manager.client,
    pipelines,
    // Sampling runs in the background (while leading); only a changed outcome costs a reconcile.
    current: (namespace, name) =>
      manager.isLeader()
        ? {
            pipeline: manager.pipelines.get(namespace, name),
            deployment: manager.deployments.get(namespace, workerName(name)),
          }
        : {},
    onChange: (key) => manager.enqueue(key),
    metrics: opts.registry && new AutoscalerMetrics(opts.registry),
  });
  manager.reconciler.setAutoscaler(autoscaler);
  // ChainLinked: background rounds while leading; a changed condition queues the pipeline's reconcile.
  const chain = new ChainWatch({
    onChange: (key) => manager.enqueue(key),
    active: () => manager.isLeader(),
    ...opts.chain,
  });
  manager.reconciler.setSealer(withChainWatch(new SealScheduler(opts.seal), chain, clickhouse));
  // Kafka and ClickHouse clients of credentials no pipeline uses any more (a rotated Secret) are closed.
  const sweep = setInterval(() => {
    const live = new Set<string>();
    for (const lp of pipelines()) if (lp.metadata.uid) live.add(lp.metadata.uid);
    void closeUnusedKafkaClients(connections, live, CLIENT_GRACE_MS, [kafka, topics, observers]);
    void clickhouse.closeUnused(live, CLIENT_GRACE_MS);
  }, CLIENT_SWEEP_MS);
  sweep.unref();
  return {
    kafka,
    clickhouse,
    autoscaler,
    observers,
    topics,
    close: async () => {
      clearInterval(sweep);
      autoscaler.close();
      chain.close();
      await Promise.allSettled([kafka.close(), clickhouse.close(), observers.close(), topics.close()]);
    },
  };
}
