/**
 * A wire tap for kafkajs clients in tests and benchmarks: a socket factory (kafkajs's
 * `socketFactory` option, plain TCP like kafkajs's default) that counts the bytes each socket
 * receives (by the API of the request answered) and reads the requests written to it, so a test can see what a client really asked a
 * real broker: here, the topics every Metadata request named. Nothing is changed on the wire.
 */
import net from 'node:net';
import type { ISocketFactory } from 'kafkajs';

/** Kafka's Metadata API key. */
const METADATA = 3;

/** What one Metadata request asked for: the topics it named, or 'all' (a null array: every topic). */
export type MetadataAsk = string[] | 'all';

/** What the tapped clients sent and received. */
export interface WireTap {
  socketFactory: ISocketFactory;
  /** Every Metadata request written, in order. */
  metadata: MetadataAsk[];
  /** Bytes received on every tapped socket. */
  bytesReceived: number;
  /** Bytes of the responses received, by the API name of their request (`Metadata`, `ListOffsets`, `api 9`...). */
  receivedByApi: Map<string, number>;
}

/** Names of the API keys a lag observer sends (others are named by key). */
const API_NAMES: Record<number, string> = {
  2: 'ListOffsets',
  3: 'Metadata',
  9: 'OffsetFetch',
  10: 'FindCoordinator',
  18: 'ApiVersions',
};

/**
 * The Metadata ask of one request frame (size, header v1, body), undefined for other APIs.
 * Metadata v1-v8 start their body with the topic array; -1 (null) asks for every topic (v0, which
 * kafkajs never sends to a v1+ broker, meant that with an empty array).
 */
export function metadataAsk(frame: Buffer): MetadataAsk | undefined {
  if (frame.readInt16BE(4) !== METADATA) return undefined;
  let at = 12;
  const clientId = frame.readInt16BE(at);
  at += 2 + Math.max(0, clientId);
  const count = frame.readInt32BE(at);
  at += 4;
  if (count < 0) return 'all';
  const topics: string[] = [];
  for (let i = 0; i < count; i++) {
    const len = frame.readInt16BE(at);
    topics.push(frame.toString('utf8', at + 2, at + 2 + len));
    at += 2 + len;
  }
  return topics;
}

/** Splits a socket's written stream into request frames (each prefixed by its int32 size). */
function frames(onFrame: (frame: Buffer) => void): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
      const size = 4 + pending.readInt32BE(0);
      onFrame(pending.subarray(0, size));
      pending = pending.subarray(size);
    }
  };
}

/**
 * Follows a socket's received stream frame by frame without keeping it: `onFrame` gets each
 * response's correlation id and size (megabyte answers arrive in many chunks).
 */
export function responseHeads(
  onFrame: (correlationId: number, bytes: number) => void,
): (chunk: Buffer) => void {
  let head: Buffer = Buffer.alloc(0);
  let skip = 0;
  return (chunk) => {
    let at = 0;
    while (at < chunk.length) {
      if (skip > 0) {
        const n = Math.min(skip, chunk.length - at);
        skip -= n;
        at += n;
        continue;
      }
      const take = chunk.subarray(at, at + 8 - head.length);
      head = head.length ? Buffer.concat([head, take]) : take;
      at += take.length;
      if (head.length < 8) continue;
      const size = head.readInt32BE(0);
      onFrame(head.readInt32BE(4), 4 + size);
      skip = size - 4;
      head = Buffer.alloc(0);
    }
  };
}

/** A new tap: pass `tap.socketFactory` as the kafkajs client config's `socketFactory`. */
export function wireTap(): WireTap {
  const tap: WireTap = {
    metadata: [],
    bytesReceived: 0,
    receivedByApi: new Map(),
    socketFactory: ({ host, port, onConnect }) => {
      const socket = net.connect({ host, port }, onConnect);
      // Responses carry only the correlation id of their request: remember each request's API.
      const apiOf = new Map<number, string>();
      const split = frames((frame) => {
        const key = frame.readInt16BE(4);
        apiOf.set(frame.readInt32BE(8), API_NAMES[key] ?? `api ${key}`);
        const ask = metadataAsk(frame);
        if (ask) tap.metadata.push(ask);
      });
      const answers = responseHeads((corr, bytes) => {
        const api = apiOf.get(corr) ?? 'unknown';
        apiOf.delete(corr);
        tap.receivedByApi.set(api, (tap.receivedByApi.get(api) ?? 0) + bytes);
      });
      const write = socket.write.bind(socket) as (chunk: unknown, ...rest: unknown[]) => boolean;
      socket.write = ((chunk: unknown, ...rest: unknown[]) => {
        split(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string, 'binary'));
        return write(chunk, ...rest);
      }) as typeof socket.write;
      socket.on('data', (chunk: Buffer) => {
        tap.bytesReceived += chunk.length;
        answers(chunk);
      });
      return socket;
    },
  };
  return tap;
}
