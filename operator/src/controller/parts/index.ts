/** Registers the Kafka topic and ClickHouse table parts on a manager; returns a closer for shutdown. */
import { KafkaAdminPool } from '../../apply/kafka-client';
import type { Manager } from '../manager';
import { ClickHousePool, createTablePart } from './table-part';
import { createTopicPart } from './topic-part';

/** Shared clients of the external parts (one admin per Kafka cluster, one HTTP client per ClickHouse user). */
export interface ExternalClients {
  kafka: KafkaAdminPool;
  clickhouse: ClickHousePool;
  close(): Promise<void>;
}

/** Registers the Topic and Table parts on `manager` and returns their shared clients. */
export function registerExternalParts(manager: Manager): ExternalClients {
  const kafka = new KafkaAdminPool();
  const clickhouse = new ClickHousePool();
  manager.reconciler.registerPart(createTopicPart(kafka, () => manager.pipelines.list()));
  manager.reconciler.registerPart(createTablePart(clickhouse));
  return {
    kafka,
    clickhouse,
    close: async () => {
      await Promise.allSettled([kafka.close(), clickhouse.close()]);
    },
  };
}
