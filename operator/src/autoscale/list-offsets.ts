/**
 * ListOffsets answered per partition, for the observer round (kafka-round.ts). kafkajs's parser
 * throws on the first partition error in an answer (a topic deleted since the round's Metadata, a
 * new partition whose leader does not serve it yet, a leader that moved), which failed every topic
 * on that leader for the round. Here the request is kafkajs's own, in the version it negotiated
 * with the broker, sent on kafkajs's broker connection, and its decoded answer is read without
 * that parser: each partition keeps its own error.
 */
import {
  protocolError,
  sendProtocolRequest,
  type KafkaProtocolError,
  type ProtocolBroker,
  type ProtocolRequest,
} from '../../../common/src/kafka/group-protocol';

/* eslint-disable @typescript-eslint/no-require-imports -- kafkajs ships its protocol as plain JS modules */
const { requests, lookup } = require('kafkajs/src/protocol/requests') as {
  requests: { ListOffsets: unknown };
  lookup(versions: NonNullable<ProtocolBroker['versions']>): (
    apiKey: number,
    definition: unknown,
  ) => (args: ListOffsetsArgs) => {
    request: ProtocolRequest<unknown>['request'];
    response: { decode(payload: Buffer): Promise<unknown> };
  };
};
/* eslint-enable @typescript-eslint/no-require-imports */

/** Kafka's ListOffsets API key. */
const LIST_OFFSETS = 2;

/** What is asked: per topic, each partition with its timestamp (-1 log end, -2 log start). */
export interface ListOffsetsArgs {
  isolationLevel?: number;
  topics: Array<{ topic: string; partitions: Array<{ partition: number; timestamp: number }> }>;
}

/** A partition's answer: its offset (a decimal string), or the broker's error for it. */
export interface PartitionOffset {
  partition: number;
  offset?: string;
  error?: KafkaProtocolError;
}

/** ListOffsets as kafkajs's decoders return it (v0 has an offsets array, v1+ one offset). */
interface Decoded {
  responses: Array<{
    topic: string;
    partitions: Array<{ partition: number; errorCode: number; offset?: string; offsets?: string[] }>;
  }>;
}

/** One ListOffsets on `broker`; each partition answered with its offset or its own error. */
export async function listOffsets(
  broker: ProtocolBroker,
  args: ListOffsetsArgs,
): Promise<Array<{ topic: string; partitions: PartitionOffset[] }>> {
  if (!broker.versions) throw new Error('kafkajs internals changed: broker without ApiVersions');
  const protocol = lookup(broker.versions)(LIST_OFFSETS, requests.ListOffsets)(args);
  const decoded = await sendProtocolRequest(broker, {
    request: protocol.request,
    response: { decode: protocol.response.decode, parse: async (d) => d as Decoded },
  });
  return decoded.responses.map((r) => ({
    topic: r.topic,
    partitions: r.partitions.map((p) => {
      const error = protocolError(p.errorCode);
      // v0 answers a list (kafkajs's own listOffsets takes its last entry).
      const offset = p.offset ?? p.offsets?.[p.offsets.length - 1];
      return error ? { partition: p.partition, error } : { partition: p.partition, offset };
    }),
  }));
}
