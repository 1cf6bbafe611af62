/**
 * Per-reconcile attribution of Kafka protocol requests. kafkajs reports a request (its REQUEST
 * instrumentation event) when the answer arrives, in the socket's async context, so the reconcile
 * that sent it is lost there. The request's first bytes name its API, and the socket write happens
 * in the sender's context: this socket factory reads the API key of every request written and
 * counts it on the sender's RequestScope (request-counts.ts). Process-wide totals stay with the
 * REQUEST event; this only attributes.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { ISocketFactory } from 'kafkajs';
import { attributeRequest } from './request-counts';

/** kafkajs' keep-alive delay on its sockets (its default socket factory). */
const KEEP_ALIVE_MS = 60_000;

/**
 * Kafka protocol API names by key, from kafkajs' own table (kafkajs 2.2.4 is pinned; kafka-owner.ts
 * relies on its internals too). A key outside it is `Other`: raw SASL tokens are written on the
 * same socket and their bytes must never become a label.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const API_KEYS = require('kafkajs/src/protocol/requests/apiKeys') as Record<string, number>;
const API_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(API_KEYS).map(([name, key]) => [key, name]),
);

/** The API name of an encoded request (int32 size, int16 api key, …), or undefined for a fragment. */
export function requestApiName(chunk: unknown): string | undefined {
  if (!Buffer.isBuffer(chunk) || chunk.length < 6) return undefined;
  const key = chunk.readInt16BE(4);
  return API_NAMES[key] ?? 'Other';
}

/** kafkajs' default socket factory, with every written request attributed to its sender's reconcile. */
export const attributingSocketFactory: ISocketFactory = ({ host, port, ssl, onConnect }) => {
  const socket = ssl
    ? tls.connect({ host, port, ...(net.isIP(host) ? {} : { servername: host }), ...ssl }, onConnect)
    : net.connect({ host, port }, onConnect);
  socket.setKeepAlive(true, KEEP_ALIVE_MS);
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  socket.write = ((...args: unknown[]) => {
    const api = requestApiName(args[0]);
    if (api) attributeRequest('kafka', api);
    return write(...args);
  }) as typeof socket.write;
  return socket;
};
