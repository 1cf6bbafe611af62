/**
 * Reads what the live view shows from the real components: row counts from ClickHouse, consumer
 * lag from Kafka, conditions/replicas/lag from the LogPipeline's status. Each source is polled
 * independently; one that fails reports its error and the others still count.
 */
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { registerKafkaCodecs } from '../../common/src/kafka/codecs';
import { qualifiedName } from '../../common/src/sql/identifiers';
import { readPipeline } from './stack';
import type { Sample } from './stats';

/** Where the pipeline's data and status live. */
export interface CollectorTarget {
  kubeconfig: string;
  namespace: string;
  name: string;
  kafkaBootstrap: string;
  topic: string;
  groupId: string;
  clickhouse: { url: string; username: string; password: string };
  database: string;
  table: string;
  /** Absent when the pipeline has no dead-letter table. */
  deadLetterTable?: string;
}

/** The fields of a Sample the collector fills. */
export type Observed = Omit<Sample, 'atMs' | 'producedLines' | 'producedMessages' | 'producedBytes'>;

/** Consumer lag in messages: high watermark minus the committed offset (or the low mark if none). */
export function consumerLag(
  topicOffsets: ReadonlyArray<{ partition: number; high: string; low: string }>,
  committed: ReadonlyArray<{ partition: number; offset: string }>,
): number {
  let lag = 0;
  for (const p of topicOffsets) {
    const c = Number(committed.find((x) => x.partition === p.partition)?.offset ?? -1);
    lag += Math.max(0, Number(p.high) - (c >= 0 ? c : Number(p.low)));
  }
  return lag;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message.split('\n')[0].slice(0, 160) : String(err);
}

/** Polls the three sources; `close()` releases the clients. */
export class Collector {
  private readonly ch: ClickHouseClient;
  private readonly admin: Admin;
  private readonly custom: CustomObjectsApi;
  private adminConnected = false;
  private readonly countQuery: string;

  /** Builds the clients (connections are made on first use). */
  constructor(private readonly target: CollectorTarget) {
    this.ch = createClient({
      url: target.clickhouse.url,
      username: target.clickhouse.username,
      password: target.clickhouse.password,
      request_timeout: 15_000,
      log: { level: ClickHouseLogLevel.OFF },
    });
    registerKafkaCodecs();
    this.admin = new Kafka({
      clientId: 'logpipeline-demo-stats',
      brokers: [target.kafkaBootstrap],
      logLevel: logLevel.NOTHING,
    }).admin();
    const kc = new KubeConfig();
    kc.loadFromFile(target.kubeconfig);
    this.custom = kc.makeApiClient(CustomObjectsApi);
    // Identifiers come from the resolved spec and are validated and quoted, never pasted raw.
    const rows = `(SELECT count() FROM ${qualifiedName(target.database, target.table)})`;
    const dlq = target.deadLetterTable
      ? `(SELECT count() FROM ${qualifiedName(target.database, target.deadLetterTable)})`
      : '0';
    this.countQuery = `SELECT ${rows} AS rows, ${dlq} AS dlq`;
  }

  /** Rows in the table and in the dead-letter table. */
  async counts(): Promise<{ insertedRows: number; deadLetters: number }> {
    const rs = await this.ch.query({ query: this.countQuery, format: 'JSONEachRow' });
    const [row] = await rs.json<{ rows: string; dlq: string }>();
    return { insertedRows: Number(row.rows), deadLetters: Number(row.dlq) };
  }

  /** The group's lag on the topic, in messages. */
  async lag(): Promise<number> {
    if (!this.adminConnected) {
      await this.admin.connect();
      this.adminConnected = true;
    }
    const [offsets, committed] = await Promise.all([
      this.admin.fetchTopicOffsets(this.target.topic),
      this.admin.fetchOffsets({ groupId: this.target.groupId, topics: [this.target.topic] }),
    ]);
    return consumerLag(offsets, committed[0]?.partitions ?? []);
  }

  /** Conditions, replicas and the operator's lag figure from the LogPipeline. */
  async status(): Promise<Observed> {
    const lp = await readPipeline(this.custom, this.target.namespace, this.target.name);
    const st = lp?.status;
    return {
      conditions: (st?.conditions ?? []).map((c) => ({
        type: c.type,
        status: c.status,
        reason: c.reason,
        message: c.message,
      })),
      replicasDesired: st?.workers?.desired,
      replicasCurrent: st?.workers?.current,
      replicasReady: st?.workers?.ready,
      statusLag: st?.lag?.total,
    };
  }

  /** One poll of every source; failures become `errors` entries instead of rejections. */
  async poll(): Promise<Observed> {
    const [counts, lag, status] = await Promise.allSettled([this.counts(), this.lag(), this.status()]);
    const out: Observed = { errors: [] };
    if (counts.status === 'fulfilled') Object.assign(out, counts.value);
    else out.errors!.push(`ClickHouse: ${message(counts.reason)}`);
    if (lag.status === 'fulfilled') out.lagMessages = lag.value;
    else out.errors!.push(`Kafka: ${message(lag.reason)}`);
    if (status.status === 'fulfilled') Object.assign(out, status.value);
    else out.errors!.push(`Kubernetes: ${message(status.reason)}`);
    return out;
  }

  /** Closes the ClickHouse and Kafka clients. */
  async close(): Promise<void> {
    await Promise.allSettled([this.ch.close(), this.adminConnected ? this.admin.disconnect() : undefined]);
  }

  /** The ClickHouse client (the legal query reuses it). */
  get clickhouse(): ClickHouseClient {
    return this.ch;
  }
}
