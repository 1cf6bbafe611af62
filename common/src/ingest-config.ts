/**
 * The syslog receiver's configuration contract (issue 16): the operator renders it from
 * `spec.ingest.syslog` into the receiver's ConfigMap (`ingest.json`), fully defaulted; the
 * receiver (consumer/src/ingest, a third entry point of the worker image) reads it. TLS material is
 * mounted as files from the cert Secret; Kafka credentials arrive as the same SECRET_ENV variables
 * the worker reads. Also holds the header the receiver stamps on every Kafka message, which the
 * worker stores as the `sender_ip` column.
 */
import type { WorkerConfig } from './worker-config';

/** Kafka message header carrying the sending device's address (IPv4 or IPv6 text, no `::ffff:`). */
export const SENDER_HEADER = 'sender';

/** Script of the receiver inside the worker image (the operator sets it as the container command). */
export const RECEIVER_ENTRY = 'dist/consumer/src/ingest/main.js';

/** Where the operator mounts the receiver's config file. */
export const RECEIVER_CONFIG_PATH = '/etc/logpipeline/ingest.json';

/** Where the operator mounts the TLS Secret (tls.crt, tls.key) and the client CA (ca.crt). */
export const RECEIVER_TLS_DIR = '/etc/logpipeline/tls';

/** Transport of one listener: UDP (RFC 5426), TCP (RFC 6587) or TLS (RFC 5425). */
export type ListenerTransport = 'udp' | 'tcp' | 'tls';

/** TCP/TLS framing: `auto` detects octet counting per frame, `lf` only splits at line feeds. */
export type FramingMode = 'auto' | 'lf';

/** One listening socket of the receiver. */
export interface ListenerConfig {
  /** DNS-1123 label; also the Service port name. */
  name: string;
  transport: ListenerTransport;
  /** Port the process binds (the container port; see containerPortFor). */
  port: number;
  /** TCP/TLS only. */
  framing?: FramingMode;
}

/** The receiver's whole configuration, as rendered by the operator. */
export interface IngestConfig {
  pipeline: WorkerConfig['pipeline'];
  /** Same shape as the worker's (brokers, topic, clientId, sasl, tls); groupId is not used. */
  kafka: WorkerConfig['kafka'];
  compression: 'lz4' | 'zstd';
  listeners: ListenerConfig[];
  packing: { maxLines: number; maxBytes: number; lingerMs: number };
  /** Longest syslog frame accepted; longer ones are dropped and counted (`oversize`). */
  maxFrameBytes: number;
  /** Empty: every source address is accepted. */
  allowedSourceCIDRs: string[];
  tls?: { certFile: string; keyFile: string; caFile?: string; clientAuth: 'none' | 'optional' | 'required' };
  /** Bytes packed but not yet acknowledged by Kafka before TCP reads pause and UDP drops. */
  maxBytesHeld: number;
  /** SO_RCVBUF asked for UDP sockets (the kernel caps it at net.core.rmem_max). */
  udpReceiveBufferBytes: number;
  /** Bound of the SIGTERM drain (stop reading, flush, await acks), ms. */
  drainTimeoutMs: number;
  httpPort: number;
}

/** Defaults the operator fills in (packing in the spirit of the seeds: ~1024 lines or 0.1 s). */
export const INGEST_DEFAULTS = {
  compression: 'lz4',
  packing: { maxLines: 1024, maxBytes: 1024 * 1024, lingerMs: 100 },
  maxFrameBytes: 64 * 1024,
  maxBytesHeld: 64 * 1024 * 1024,
  udpReceiveBufferBytes: 4 * 1024 * 1024,
  drainTimeoutMs: 20_000,
  httpPort: 8080,
} as const;

/**
 * The port the receiver binds for a Service port: the image runs as a non-root user that cannot
 * bind below 1024, so 514 becomes 10514 (the Service maps 514 to it); other ports stay.
 */
export function containerPortFor(servicePort: number): number {
  return servicePort < 1024 ? servicePort + 10_000 : servicePort;
}
