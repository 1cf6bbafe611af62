/**
 * The owner records' OffsetCommit answered per topic. kafkajs's offsetCommit throws on the first
 * partition error, so one topic of a batch the group coordinator does not know yet (created a moment
 * ago: UNKNOWN_TOPIC_OR_PARTITION) failed the whole batch and the batcher re-sent every record of it
 * alone, one after another (the others had been stored by the first request already). Here one
 * OffsetCommit v7 (the encoding of common/src/kafka/group-protocol.ts, generation -1 and no member:
 * a group no consumer joins) answers each topic with its own error, on kafkajs's coordinator
 * connection (SASL, TLS, reconnects stay kafkajs's).
 */
import {
  API_KEYS,
  brokerSupports,
  generationCommitRequest,
  protocolError,
  sendProtocolRequest,
  type ProtocolBroker,
  type KafkaDecoder,
  type KafkaProtocolError,
  type ProtocolRequest,
} from '../../../common/src/kafka/group-protocol';

import type { CoordinatorBroker } from './kafka-owner';

/* eslint-disable @typescript-eslint/no-require-imports -- kafkajs ships its protocol codec as plain JS modules */
const Decoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => KafkaDecoder;
/* eslint-enable @typescript-eslint/no-require-imports */

/** The OffsetCommit API key and the version sent (group_instance_id, leader epochs). */
export const OWNER_COMMIT_API_KEY = API_KEYS.OffsetCommit;
export const OWNER_COMMIT_VERSION = 7;

/** Each committed topic's first partition error (absent: stored). */
export type OwnerCommitAnswer = Map<string, KafkaProtocolError>;

/** Each record as the commit of offset 0 of its topic's partition 0, the record as the commit's metadata. */
function ownerCommitTopics(records: ReadonlyArray<{ topic: string; record: string }>) {
  return records.map((r) => ({
    topic: r.topic,
    partitions: [{ partition: 0, offset: '0', metadata: r.record }],
  }));
}

/** OffsetCommit v7 of partition 0 of each topic, offset 0 with the record as metadata, answered per topic. */
export function ownerCommitRequest(
  groupId: string,
  records: ReadonlyArray<{ topic: string; record: string }>,
): ProtocolRequest<OwnerCommitAnswer> {
  const { request } = generationCommitRequest({
    groupId,
    generationId: -1,
    memberId: '',
    topics: ownerCommitTopics(records),
  });
  return {
    request,
    response: {
      decode: async (payload) => decodeOwnerCommit(payload),
      parse: async (decoded) => decoded as OwnerCommitAnswer,
    },
  };
}

/** Decodes an OffsetCommit v2-v7 response body into each topic's first partition error. */
export function decodeOwnerCommit(payload: Buffer): OwnerCommitAnswer {
  const d = new Decoder(payload);
  d.readInt32(); // throttle_time_ms
  const out: OwnerCommitAnswer = new Map();
  d.readArray((t) => {
    const topic = t.readString() ?? '';
    t.readArray((p) => {
      p.readInt32(); // partition_index
      const error = protocolError(p.readInt16());
      if (error && !out.has(topic)) out.set(topic, error);
    });
  });
  return out;
}

/**
 * Commits the records on the group's coordinator, answered per topic; a broker without OffsetCommit
 * v7 gets kafkajs's request, which throws on the first partition error (every record then fails).
 */
export async function sendOwnerRecords(
  coordinator: CoordinatorBroker,
  groupId: string,
  records: ReadonlyArray<{ topic: string; record: string }>,
): Promise<OwnerCommitAnswer> {
  const broker = coordinator as unknown as ProtocolBroker;
  if (brokerSupports(broker, OWNER_COMMIT_API_KEY, OWNER_COMMIT_VERSION))
    return sendProtocolRequest(broker, ownerCommitRequest(groupId, records));
  await coordinator.offsetCommit({
    groupId,
    groupGenerationId: -1,
    memberId: '',
    topics: ownerCommitTopics(records),
  });
  return new Map();
}
