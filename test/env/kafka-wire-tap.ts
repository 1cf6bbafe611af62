/**
 * A wire tap for kafkajs clients in tests and benchmarks: a socket factory (kafkajs's
 * `socketFactory` option, plain TCP like kafkajs's default) that counts the bytes each socket
 * receives and reads the requests written to it, so a test can see what a client really asked a
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
}

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

/** A new tap: pass `tap.socketFactory` to `new Kafka({ ... })`. */
export function wireTap(): WireTap {
  const tap: WireTap = {
    metadata: [],
    bytesReceived: 0,
    socketFactory: ({ host, port, onConnect }) => {
      const socket = net.connect({ host, port }, onConnect);
      const split = frames((frame) => {
        const ask = metadataAsk(frame);
        if (ask) tap.metadata.push(ask);
      });
      const write = socket.write.bind(socket) as (chunk: unknown, ...rest: unknown[]) => boolean;
      socket.write = ((chunk: unknown, ...rest: unknown[]) => {
        split(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string, 'binary'));
        return write(chunk, ...rest);
      }) as typeof socket.write;
      socket.on('data', (chunk: Buffer) => (tap.bytesReceived += chunk.length));
      return socket;
    },
  };
  return tap;
}
