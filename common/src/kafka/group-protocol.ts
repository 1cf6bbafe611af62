/**
 * Group-coordinator requests kafkajs 2.2.4 does not speak, built with kafkajs's own Encoder and
 * Decoder and sent on kafkajs's broker connections, so SASL, TLS, reconnects and request
 * timeouts stay kafkajs's:
 * - FindCoordinator v4 (KIP-699): the coordinators of many groups in one request;
 * - OffsetFetch v8 (KIP-709): the committed offsets of many groups in one request (kafkajs: v1-v4,
 *   one group per request), so an observer round costs O(coordinators), not O(groups);
 * - OffsetCommit v7: a commit whose generation id and member id are fixed when it is built. kafkajs's
 *   consumer.commitOffsets re-sends a failed commit after a rejoin under the *new* generation, so a
 *   revoked partition's state could replace its new owner's cut journal; a commit built here for
 *   generation G is refused by the broker (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID) once G is over.
 * Callers check `brokerSupports` (the broker's ApiVersions, read by kafkajs at connect) first and
 * keep kafkajs's own request as the fallback. FindCoordinator v4 and OffsetFetch v8 are flexible
 * versions: request header v2 (the header's tagged fields are the first byte of our payload, since
 * kafkajs writes header v1) and response header v1 (its tagged fields are read first).
 */

/** The kafkajs Encoder methods used here (kafkajs/src/protocol/encoder.js). */
export interface KafkaEncoder {
  writeInt8(v: number): KafkaEncoder;
  writeInt16(v: number): KafkaEncoder;
  writeInt32(v: number): KafkaEncoder;
  writeInt64(v: string | number): KafkaEncoder;
  writeBoolean(v: boolean): KafkaEncoder;
  writeString(v: string | null): KafkaEncoder;
  writeUVarInt(v: number): KafkaEncoder;
  writeUVarIntString(v: string | null): KafkaEncoder;
}
/** The kafkajs Decoder methods used here (kafkajs/src/protocol/decoder.js). */
export interface KafkaDecoder {
  readInt16(): number;
  readInt32(): number;
  readBoolean(): boolean;
  readInt64(): { toString(): string };
  readString(): string | null;
  readUVarIntString(): string | null;
  readUVarIntArray<T>(reader: (d: KafkaDecoder) => T): T[] | null;
  readArray<T>(reader: (d: KafkaDecoder) => T): T[];
  readTaggedFields(): unknown;
}
/* eslint-disable @typescript-eslint/no-require-imports -- kafkajs ships its protocol codec as plain JS modules */
const Encoder = require('kafkajs/src/protocol/encoder') as new () => KafkaEncoder;
const Decoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => KafkaDecoder;
const { createErrorFromCode } = require('kafkajs/src/protocol/error') as {
  createErrorFromCode(code: number): Error & { type: string; retriable: boolean };
};
/* eslint-enable @typescript-eslint/no-require-imports */

/** Kafka API keys used here. */
export const API_KEYS = { OffsetCommit: 8, OffsetFetch: 9, FindCoordinator: 10 } as const;

/** A request as kafkajs's Connection.send takes it. */
export interface ProtocolRequest<T> {
  request: { apiKey: number; apiVersion: number; apiName: string; encode(): Promise<KafkaEncoder> };
  response: { decode(payload: Buffer): Promise<unknown>; parse(decoded: unknown): Promise<T> };
}

/** The parts of a kafkajs Broker used here (kafkajs 2.2.4 is pinned). */
export interface ProtocolBroker {
  nodeId?: number | null;
  versions?: Record<number, { minVersion: number; maxVersion: number }> | null;
  connectionPool?: { send(req: ProtocolRequest<unknown>): Promise<unknown> };
}

/** A Kafka protocol error with kafkajs's `type` (e.g. ILLEGAL_GENERATION) and `retriable` flag. */
export type KafkaProtocolError = Error & { type: string; retriable: boolean };

/** The error kafkajs would raise for `code` (0: none). */
export function protocolError(code: number): KafkaProtocolError | undefined {
  return code === 0 ? undefined : createErrorFromCode(code);
}

/** True when the broker (kafkajs read its ApiVersions at connect) accepts `version` of `apiKey`. */
export function brokerSupports(broker: ProtocolBroker, apiKey: number, version: number): boolean {
  const v = broker.versions?.[apiKey];
  return !!v && v.minVersion <= version && version <= v.maxVersion;
}

/**
 * Sends `req` through the broker's kafkajs connection: its private send (which also drops a
 * closed connection so the next request reconnects), else the connection pool.
 */
export async function sendProtocolRequest<T>(broker: ProtocolBroker, req: ProtocolRequest<T>): Promise<T> {
  const key = Object.getOwnPropertySymbols(Object.getPrototypeOf(broker) ?? {}).find(
    (s) => s.description === 'private:Broker:sendRequest',
  );
  const send = key && (broker as Record<symbol, unknown>)[key];
  if (typeof send === 'function') return (await (send as (r: unknown) => Promise<T>).call(broker, req)) as T;
  if (!broker.connectionPool) throw new Error('kafkajs internals changed: broker has no connection pool');
  return (await broker.connectionPool.send(req as ProtocolRequest<unknown>)) as T;
}

function compactArray<T>(e: KafkaEncoder, items: readonly T[], write: (item: T) => void): void {
  e.writeUVarInt(items.length + 1);
  for (const item of items) write(item);
}
const tags = (e: KafkaEncoder) => e.writeUVarInt(0);
const readAll = <T>(d: KafkaDecoder, reader: (d: KafkaDecoder) => T): T[] => d.readUVarIntArray(reader) ?? [];

function flexible<T>(
  apiKey: number,
  apiName: string,
  apiVersion: number,
  body: (e: KafkaEncoder) => void,
  decodeBody: (d: KafkaDecoder) => T,
): ProtocolRequest<T> {
  return {
    request: {
      apiKey,
      apiVersion,
      apiName,
      encode: async () => {
        const e = new Encoder();
        tags(e); // request header v2: the header's tagged fields follow kafkajs's client id
        body(e);
        return e;
      },
    },
    response: {
      decode: async (payload) => {
        const d = new Decoder(payload);
        d.readTaggedFields(); // response header v1
        return decodeBody(d);
      },
      parse: async (decoded) => decoded as T,
    },
  };
}

/** One group's coordinator as FindCoordinator v4 answers it. */
export interface CoordinatorAnswer {
  key: string;
  nodeId: number;
  host: string;
  port: number;
  error?: KafkaProtocolError;
}

/** FindCoordinator v4: the coordinators of `groupIds` (key type 0, group) in one request. */
export function findCoordinatorsRequest(groupIds: readonly string[]): ProtocolRequest<CoordinatorAnswer[]> {
  return flexible(
    API_KEYS.FindCoordinator,
    'FindCoordinator',
    4,
    (e) => {
      e.writeInt8(0);
      compactArray(e, groupIds, (g) => e.writeUVarIntString(g));
      tags(e);
    },
    (d) => {
      d.readInt32(); // throttle_time_ms
      const out = readAll(d, (c) => {
        const key = c.readUVarIntString() ?? '';
        const nodeId = c.readInt32();
        const host = c.readUVarIntString() ?? '';
        const port = c.readInt32();
        const error = protocolError(c.readInt16());
        c.readUVarIntString(); // error_message
        c.readTaggedFields();
        return { key, nodeId, host, port, ...(error ? { error } : {}) };
      });
      d.readTaggedFields();
      return out;
    },
  );
}

/** The partitions of some topics a group's offsets are asked for. */
export interface GroupTopics {
  groupId: string;
  topics: Array<{ topic: string; partitions: number[] }>;
}

/** One partition's committed offset ('-1': none) and commit metadata. */
export interface CommittedOffset {
  topic: string;
  partition: number;
  offset: string;
  metadata: string | null;
  error?: KafkaProtocolError;
}

/** One group's answer: its error (e.g. NOT_COORDINATOR) or its partitions. */
export interface GroupOffsetsAnswer {
  groupId: string;
  error?: KafkaProtocolError;
  partitions: CommittedOffset[];
}

/** OffsetFetch v8: the committed offsets of every group in `groups` in one request. */
export function offsetFetchGroupsRequest(
  groups: readonly GroupTopics[],
): ProtocolRequest<GroupOffsetsAnswer[]> {
  return flexible(
    API_KEYS.OffsetFetch,
    'OffsetFetch',
    8,
    (e) => {
      compactArray(e, groups, (g) => {
        e.writeUVarIntString(g.groupId);
        compactArray(e, g.topics, (t) => {
          e.writeUVarIntString(t.topic);
          compactArray(e, t.partitions, (p) => e.writeInt32(p));
          tags(e);
        });
        tags(e);
      });
      e.writeBoolean(false); // require_stable
      tags(e);
    },
    (d) => {
      d.readInt32(); // throttle_time_ms
      const groupsOut = readAll(d, (g) => {
        const groupId = g.readUVarIntString() ?? '';
        const partitions: CommittedOffset[] = [];
        readAll(g, (t) => {
          const topic = t.readUVarIntString() ?? '';
          readAll(t, (p) => {
            const partition = p.readInt32();
            const offset = p.readInt64().toString();
            p.readInt32(); // committed_leader_epoch
            const metadata = p.readUVarIntString();
            const error = protocolError(p.readInt16());
            p.readTaggedFields();
            partitions.push({ topic, partition, offset, metadata, ...(error ? { error } : {}) });
          });
          t.readTaggedFields();
        });
        const error = protocolError(g.readInt16());
        g.readTaggedFields();
        return { groupId, partitions, ...(error ? { error } : {}) };
      });
      d.readTaggedFields();
      return groupsOut;
    },
  );
}

/** A commit bound to one generation of one member. */
export interface GenerationCommit {
  groupId: string;
  generationId: number;
  memberId: string;
  topics: Array<{
    topic: string;
    partitions: Array<{ partition: number; offset: string; metadata: string }>;
  }>;
}

/**
 * OffsetCommit v7 with the generation and member fixed here; resolves only when the broker
 * accepted every partition, else throws the first partition's error (kafkajs's error types).
 */
export function generationCommitRequest(c: GenerationCommit): ProtocolRequest<void> {
  return {
    request: {
      apiKey: API_KEYS.OffsetCommit,
      apiVersion: 7,
      apiName: 'OffsetCommit',
      encode: async () => {
        const e = new Encoder();
        e.writeString(c.groupId).writeInt32(c.generationId).writeString(c.memberId).writeString(null);
        e.writeInt32(c.topics.length);
        for (const t of c.topics) {
          e.writeString(t.topic).writeInt32(t.partitions.length);
          for (const p of t.partitions)
            e.writeInt32(p.partition).writeInt64(p.offset).writeInt32(-1).writeString(p.metadata);
        }
        return e;
      },
    },
    response: {
      decode: async (payload) => {
        const d = new Decoder(payload);
        d.readInt32(); // throttle_time_ms
        return d.readArray((t) => {
          t.readString();
          return t.readArray((p) => {
            p.readInt32(); // partition_index
            return p.readInt16();
          });
        });
      },
      parse: async (decoded) => {
        for (const codes of decoded as number[][])
          for (const code of codes) {
            const error = protocolError(code);
            if (error) throw error;
          }
      },
    },
  };
}
