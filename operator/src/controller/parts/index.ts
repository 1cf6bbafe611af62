/** Registers the Kafka topic and ClickHouse table parts and the lag autoscaler on a manager; returns a closer for shutdown. */
import type { Registry } from 'prom-client';
import { KafkaAdminPool } from '../../apply/kafka-client';
import { KafkaObservers } from '../../autoscale/kafka-observer';
import { AutoscalerMetrics } from '../../autoscale/metrics';
import { workerName } from '../../desired/labels';
import type { Manager } from '../manager';
import { createScalingPart, type LagScaler } from './scaling-part';
import { SealScheduler } from './seal-part';
import { ClickHousePool, createTablePart } from './table-part';
import { createTopicPart } from './topic-part';
import { TopicBatchers } from '../../apply/kafka-topic-batch';

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

/** Options of registerExternalParts. */
export interface ExternalPartsOptions {
  /** Registry for the autoscaler's metrics (the operator's OperatorMetrics.registry); none when absent. */
  registry?: Registry;
  /** The scheduled seal (clock and delays; tests shorten them). */
  seal?: ConstructorParameters<typeof SealScheduler>[0];
}

/** Registers the Topic and Table parts and the autoscaler on `manager` and returns their shared clients. */
export function registerExternalParts(manager: Manager, opts: ExternalPartsOptions = {}): ExternalClients {
  const kafka = new KafkaAdminPool();
  // Drift a catalogue round sees drops the memoized Table outcomes of the pipelines it concerns.
  const clickhouse = new ClickHousePool({
    onTablesChanged: (url, tables) => manager.reconciler.partMemo?.tablesChanged(url, tables),
  });
  const pipelines = () => manager.pipelines.list();
  // One coalescing batcher per Kafka cluster: a storm of creations shares its admin requests.
  const topics = new TopicBatchers();
  manager.reconciler.registerPart(createTopicPart(kafka, pipelines, topics));
  manager.reconciler.registerPart(createTablePart(clickhouse));
  const observers = new KafkaObservers();
  const autoscaler = createScalingPart({
    observers,
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
  manager.reconciler.setSealer(new SealScheduler(opts.seal));
  return {
    kafka,
    clickhouse,
    autoscaler,
    observers,
    topics,
    close: async () => {
      autoscaler.close();
      await Promise.allSettled([kafka.close(), clickhouse.close(), observers.close(), topics.close()]);
    },
  };
}
