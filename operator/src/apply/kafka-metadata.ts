/**
 * Metadata v6 for the topic batcher, with an answer per topic. kafkajs 2.2.4's own Metadata
 * parser throws on the first topic or partition error, so a batch naming one topic that does not
 * exist yet (every new pipeline's) told nothing about the others, and the batcher fell back to
 * a Metadata request for every topic in the cluster: O(N) bytes per batch, O(N²) over a creation
 * storm. Here one request answers the batch: existing topics with their shape, missing ones as
 * missing, any other topic error stays with its topic. Sent on kafkajs's broker connection (SASL,
 * TLS, reconnects and timeouts stay kafkajs's), like common/src/kafka/group-protocol.ts.
 */
import {
  protocolError,
  type KafkaDecoder,
  type KafkaEncoder,
  type ProtocolRequest,
} from '../../../common/src/kafka/group-protocol';
import { topicMetas, type BatchCluster, type TopicMeta } from './kafka-topic-wire';

/* eslint-disable @typescript-eslint/no-require-imports -- kafkajs ships its protocol codec as plain JS modules */
const Encoder = require('kafkajs/src/protocol/encoder') as new () => KafkaEncoder;
const Decoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => KafkaDecoder;
/* eslint-enable @typescript-eslint/no-require-imports */

/** Kafka's Metadata API key and the version sent (the newest kafkajs 2.2.4 speaks too). */
export const METADATA_API_KEY = 3;
export const METADATA_VERSION = 6;
/** UNKNOWN_TOPIC_OR_PARTITION: the topic does not exist (auto-creation is never asked for). */
const UNKNOWN_TOPIC = 3;

/** A topic's answer: its shape, undefined when it does not exist, or the broker's error for it. */
export type TopicAnswer = TopicMeta | undefined | Error;

/** A broker of the cluster as Metadata lists it. */
export interface BrokerAddress {
  nodeId: number;
  host: string;
  port: number;
  rack?: string;
}

/** A partition's leader (-1 with an error code when it has none, e.g. LEADER_NOT_AVAILABLE). */
export interface PartitionLeader {
  partitionId: number;
  leader: number;
  /** The partition's error code (0: none). */
  errorCode: number;
}

/** What one Metadata response says about the cluster and each topic asked for. */
export interface MetadataAnswer {
  clusterId?: string;
  topics: Map<string, TopicAnswer>;
  /** The cluster's live brokers (v6 answers; kafkajs's path leaves it out). */
  brokers?: BrokerAddress[];
  /** Each topic's partitions sorted by id with their leaders (v6 answers, topics without error). */
  leaders?: Map<string, PartitionLeader[]>;
}

/**
 * Metadata v6 for exactly `topics` (an empty list asks for none, only brokers and the cluster id;
 * never "all topics"), with allow_auto_topic_creation false: a broker configured to create topics
 * on first use must not create them for a describe.
 */
export function metadataRequest(topics: readonly string[]): ProtocolRequest<MetadataAnswer> {
  return {
    request: {
      apiKey: METADATA_API_KEY,
      apiVersion: METADATA_VERSION,
      apiName: 'Metadata',
      encode: async () => {
        const e = new Encoder().writeInt32(topics.length);
        for (const t of topics) e.writeString(t);
        return e.writeBoolean(false);
      },
    },
    response: {
      decode: async (payload) => decodeMetadata(payload),
      parse: async (decoded) => decoded as MetadataAnswer,
    },
  };
}

/**
 * Decodes a Metadata v6 response body (after the correlation id). A topic's shape is its partition
 * count and the smallest assigned replica count; partition-level errors (no leader elected yet, a
 * replica offline) do not change that shape, so they are not the describe's concern. The brokers
 * and each answered topic's partition leaders come with it (the lag observer routes ListOffsets
 * by them).
 */
export function decodeMetadata(payload: Buffer): MetadataAnswer {
  const d = new Decoder(payload);
  d.readInt32(); // throttle_time_ms
  const brokers = d.readArray(readBroker);
  const clusterId = d.readString() ?? undefined;
  d.readInt32(); // controller_id
  const topics = new Map<string, TopicAnswer>();
  const leaders = new Map<string, PartitionLeader[]>();
  d.readArray((t) => {
    const code = t.readInt16();
    const name = t.readString() ?? '';
    t.readBoolean(); // is_internal
    const partitions = t.readArray(readPartition);
    const answer = topicAnswer(
      code,
      partitions.map((p) => p.replicas),
    );
    topics.set(name, answer);
    if (answer && !(answer instanceof Error))
      leaders.set(
        name,
        partitions.map((p) => p.leader).sort((a, b) => a.partitionId - b.partitionId),
      );
  });
  return { ...(clusterId ? { clusterId } : {}), topics, brokers, leaders };
}

function readBroker(b: KafkaDecoder): BrokerAddress {
  const nodeId = b.readInt32();
  const host = b.readString() ?? '';
  const port = b.readInt32();
  const rack = b.readString();
  return { nodeId, host, port, ...(rack !== null ? { rack } : {}) };
}

/** A partition's leader and assigned replica count (replica and ISR lists skipped). */
function readPartition(p: KafkaDecoder): { leader: PartitionLeader; replicas: number } {
  const errorCode = p.readInt16();
  const partitionId = p.readInt32();
  const leader = p.readInt32();
  const replicas = p.readArray((r) => r.readInt32()).length;
  p.readArray((r) => r.readInt32()); // isr_nodes
  p.readArray((r) => r.readInt32()); // offline_replicas
  return { leader: { partitionId, leader, errorCode }, replicas };
}

function topicAnswer(code: number, replicas: number[]): TopicAnswer {
  if (code === UNKNOWN_TOPIC) return undefined;
  const error = protocolError(code);
  if (error) return error;
  // No partitions is no shape to compare against (kafkajs would have failed the whole batch).
  if (replicas.length === 0) return new Error('the broker reported the topic without partitions');
  return { partitions: replicas.length, replicas: Math.min(...replicas) };
}

/** kafkajs's broker pool: its metadata cache and its own Metadata request. */
type KafkajsPool = Pick<BatchCluster['brokerPool'], 'refreshMetadata' | 'metadata'>;

/**
 * kafkajs's Metadata for brokers without v6: it throws on any topic error, so when a topic is
 * missing every topic of the cluster is asked for instead (`count` sees each request).
 */
export async function describeWithKafkajs(
  pool: KafkajsPool,
  names: readonly string[],
  count: () => void,
): Promise<MetadataAnswer> {
  try {
    count();
    await pool.refreshMetadata([...names]);
  } catch (err) {
    if ((err as { type?: string }).type !== 'UNKNOWN_TOPIC_OR_PARTITION') throw err;
    count();
    await pool.refreshMetadata([]);
  }
  const meta = pool.metadata;
  return {
    ...(meta?.clusterId ? { clusterId: meta.clusterId } : {}),
    topics: topicMetas(names, meta),
  };
}

/**
 * Fills kafkajs's metadata cache (its controller and group-coordinator lookups read it) when it
 * is empty, once per connection: naming `seen`, a topic a describe found, keeps that answer small
 * and out of other topics' trouble; without one (or when it is gone), every topic is asked for.
 */
export async function fillKafkajsCache(
  pool: KafkajsPool,
  seen: string | undefined,
  count: () => void,
): Promise<void> {
  if (pool.metadata) return;
  if (seen) {
    count();
    const ok = await pool.refreshMetadata([seen]).then(
      () => true,
      () => false,
    );
    if (ok) return;
  }
  count();
  await pool.refreshMetadata([]);
}
