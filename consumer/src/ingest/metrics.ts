/**
 * The receiver's Prometheus metrics (`logpipeline_ingest_*`). Labels are bounded: listener names
 * from the spec, transports, fixed drop reasons and cut causes; never sender addresses (a /16 of
 * senders would explode the series), never line content.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Why a line or datagram did not reach Kafka. */
export type DropReason = 'queue_full' | 'oversize' | 'framing' | 'source_denied' | 'shutdown';

export class IngestMetrics {
  readonly registry = new Registry();
  readonly linesIn: Counter<'listener'>;
  readonly bytesIn: Counter<'listener'>;
  readonly drops: Counter<'listener' | 'reason'>;
  readonly kernelDrops: Gauge<'listener'>;
  readonly kernelRxQueue: Gauge<'listener'>;
  readonly connections: Gauge<'listener'>;
  readonly pausedConnections: Gauge;
  readonly tlsHandshakeFailures: Counter<'listener'>;
  readonly messagesPacked: Counter<'cause'>;
  readonly linesProduced: Counter;
  readonly messagesProduced: Counter;
  readonly bytesProduced: Counter;
  readonly wireBytesProduced: Counter;
  readonly produceFailures: Counter;
  readonly tooLarge: Counter<'action'>;
  readonly produceSeconds: Histogram;
  readonly lineLatency: Histogram;
  readonly bytesHeld: Gauge;
  readonly openSenders: Gauge;

  constructor(defaults = true) {
    const registers = [this.registry];
    const p = 'logpipeline_ingest_';
    const L = ['listener'] as const;
    this.linesIn = new Counter({
      name: `${p}lines_received_total`,
      help: 'Lines framed from the network.',
      labelNames: L,
      registers,
    });
    this.bytesIn = new Counter({
      name: `${p}bytes_received_total`,
      help: 'Bytes read from sockets.',
      labelNames: L,
      registers,
    });
    this.drops = new Counter({
      name: `${p}dropped_total`,
      help: 'Lines (UDP: datagrams) the receiver dropped, by reason (queue_full, oversize, framing, source_denied, shutdown).',
      labelNames: ['listener', 'reason'],
      registers,
    });
    this.kernelDrops = new Gauge({
      name: `${p}udp_kernel_drops`,
      help: 'Datagrams the kernel dropped for a full socket buffer (/proc/net/udp "drops"; a counter the kernel keeps).',
      labelNames: L,
      registers,
    });
    this.kernelRxQueue = new Gauge({
      name: `${p}udp_rx_queue_bytes`,
      help: 'Bytes waiting in the UDP socket receive queue.',
      labelNames: L,
      registers,
    });
    this.connections = new Gauge({
      name: `${p}connections`,
      help: 'Open TCP/TLS connections.',
      labelNames: L,
      registers,
    });
    this.pausedConnections = new Gauge({
      name: `${p}paused_connections`,
      help: 'Connections not read because Kafka is behind (backpressure).',
      registers,
    });
    this.tlsHandshakeFailures = new Counter({
      name: `${p}tls_handshake_failures_total`,
      help: 'TLS handshakes that failed (bad or missing client certificate, protocol).',
      labelNames: L,
      registers,
    });
    this.messagesPacked = new Counter({
      name: `${p}messages_packed_total`,
      help: 'Kafka messages packed, by what cut them (lines, bytes, linger, evict, shutdown).',
      labelNames: ['cause'],
      registers,
    });
    this.linesProduced = new Counter({
      name: `${p}lines_produced_total`,
      help: 'Lines in messages Kafka acknowledged.',
      registers,
    });
    this.messagesProduced = new Counter({
      name: `${p}messages_produced_total`,
      help: 'Messages Kafka acknowledged.',
      registers,
    });
    this.bytesProduced = new Counter({
      name: `${p}bytes_produced_total`,
      help: 'Uncompressed bytes of acknowledged message values.',
      registers,
    });
    this.wireBytesProduced = new Counter({
      name: `${p}wire_bytes_produced_total`,
      help: 'Bytes of acknowledged message values as sent (after the value codec).',
      registers,
    });
    this.produceFailures = new Counter({
      name: `${p}produce_failures_total`,
      help: "Sends that failed after the client's retries (retried by the receiver).",
      registers,
    });
    this.tooLarge = new Counter({
      name: `${p}too_large_total`,
      help: 'Values Kafka refused alone as too large (max.message.bytes lowered after start), by action: split (in two, by lines) or dropped (a single line that can never fit).',
      labelNames: ['action'],
      registers,
    });
    this.produceSeconds = new Histogram({
      name: `${p}produce_seconds`,
      help: 'Duration of one acknowledged send.',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.lineLatency = new Histogram({
      name: `${p}line_latency_seconds`,
      help: "From a message's first line read to Kafka's ack.",
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.bytesHeld = new Gauge({
      name: `${p}bytes_held`,
      help: 'Packed bytes queued or in flight to Kafka (the backpressure gauge).',
      registers,
    });
    this.openSenders = new Gauge({
      name: `${p}open_senders`,
      help: 'Senders with a partly packed message.',
      registers,
    });
    if (defaults) collectDefaultMetrics({ register: this.registry, prefix: p });
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  contentType(): string {
    return this.registry.contentType;
  }
}
