/**
 * The syslog listeners: UDP (RFC 5426), TCP (RFC 6587, LF and octet-counted, detected per frame)
 * and TLS (RFC 5425, node:tls, optional or required client certificates). Every line goes through
 * a framer into the Packer keyed by the sender's address; packed messages go to the sink (Kafka).
 *
 * Backpressure: the FlowGate closes when Kafka is behind; then every TCP/TLS connection is paused
 * (the kernel window fills and the sender's queue holds the lines) and UDP datagrams are dropped as
 * `queue_full` (UDP has no way to push back; memory never grows). Sources outside
 * allowedSourceCIDRs are refused (`source_denied`). Counts are kept in plain numbers on the hot
 * path and moved into prom-client once a second.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import tls from 'node:tls';
import type { ListenerConfig } from '../../../common/src/ingest-config';
import { FlowGate } from './flow-gate';
import { StreamFramer, frameDatagram, type FrameDropReason, type FrameSink } from './framing';
import type { DropReason, IngestMetrics } from './metrics';
import { Packer, type PackedMessage, type PackingOptions } from './packer';
import { readUdpSocketStats } from './proc-net-udp';

/** A listener of the config file, plus the address to bind (tests bind 127.0.0.1; default all). */
export interface ListenerSpec extends ListenerConfig {
  host?: string;
}

export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
  /** CA bundle client certificates must chain to (clientAuth optional/required). */
  ca?: Buffer;
  clientAuth: 'none' | 'optional' | 'required';
}

export interface ReceiverOptions {
  listeners: ListenerSpec[];
  packing: Partial<PackingOptions>;
  /** Longest frame accepted (default 64 KiB, rsyslog's maxMessageSize is 8 KiB by default). */
  maxFrameBytes?: number;
  /** Empty: every source. */
  allowedSourceCIDRs?: string[];
  tls?: TlsMaterial;
  /** SO_RCVBUF of UDP sockets (capped by net.core.rmem_max; default 4 MiB). */
  udpReceiveBufferBytes?: number;
  /** How long open connections are still read after a stop begins (default 2 s). */
  stopReadGraceMs?: number;
  /** Told why a TLS handshake was refused (counted either way), so the entry point can log it. */
  onTlsRefused?: (listener: string, reason: string) => void;
}

/**
 * Why a TLS client was refused: Node destroys a connection whose client certificate fails
 * verification without an error of its own ("socket hang up"), the verdict is on the socket.
 */
export function tlsRefusalReason(
  err: Error & { code?: string },
  socket?: { authorizationError?: unknown },
): string {
  const verdict = socket?.authorizationError;
  if (verdict) return `client certificate not trusted: ${String(verdict)}`;
  if (err.code === 'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE') return 'no client certificate presented';
  return err.code ? `${err.code}: ${err.message.split('\n')[0]}` : err.message.split('\n')[0];
}

export interface MessageSink {
  enqueue(m: PackedMessage): void;
}

interface Counts {
  lines: number;
  bytes: number;
  drops: Record<DropReason, number>;
}

const newCounts = (): Counts => ({
  lines: 0,
  bytes: 0,
  drops: { queue_full: 0, oversize: 0, framing: 0, source_denied: 0, shutdown: 0 },
});

/** `::ffff:10.1.2.3` -> `10.1.2.3`. */
export function normalizeAddress(a: string | undefined): string {
  if (!a) return 'unknown';
  return a.startsWith('::ffff:') && a.includes('.') ? a.slice(7) : a;
}

/** An allow list of CIDRs (IPv4 and IPv6); an empty list allows everything. */
export function sourceFilter(cidrs: readonly string[] | undefined): (address: string) => boolean {
  if (!cidrs || cidrs.length === 0) return () => true;
  const list = new net.BlockList();
  for (const c of cidrs) {
    const [addr, bits] = c.split('/');
    const type = net.isIPv6(addr) ? 'ipv6' : 'ipv4';
    list.addSubnet(addr, bits === undefined ? (type === 'ipv6' ? 128 : 32) : Number(bits), type);
  }
  const cache = new Map<string, boolean>();
  return (address) => {
    let ok = cache.get(address);
    if (ok === undefined) {
      ok = list.check(address, net.isIPv6(address) ? 'ipv6' : 'ipv4');
      if (cache.size > 65_536) cache.clear();
      cache.set(address, ok);
    }
    return ok;
  };
}

export class SyslogReceiver {
  readonly packer: Packer;
  private readonly servers: Array<net.Server | tls.Server> = [];
  private readonly udp: Array<{ spec: ListenerSpec; socket: dgram.Socket }> = [];
  /** Open connections and their framers (ended by stop() before the packer closes). */
  private readonly sockets = new Map<net.Socket, StreamFramer>();
  private readonly counts = new Map<string, Counts>();
  private readonly allowed: (a: string) => boolean;
  private readonly maxFrame: number;
  private flushTimer?: NodeJS.Timeout;
  private stopping = false;
  /** Bound ports by listener name (port 0 in the spec picks one: tests). */
  readonly ports = new Map<string, number>();

  constructor(
    private readonly opts: ReceiverOptions,
    private readonly gate: FlowGate,
    private readonly sink: MessageSink,
    private readonly metrics?: IngestMetrics,
  ) {
    this.maxFrame = opts.maxFrameBytes ?? 64 * 1024;
    this.allowed = sourceFilter(opts.allowedSourceCIDRs);
    this.packer = new Packer((m) => {
      this.metrics?.messagesPacked.inc({ cause: m.cause });
      this.sink.enqueue(m);
    }, opts.packing);
    gate.on('close', () => {
      for (const s of this.sockets.keys()) s.pause();
      this.metrics?.pausedConnections.set(this.sockets.size);
    });
    gate.on('open', () => {
      if (this.stopping) return;
      for (const s of this.sockets.keys()) s.resume();
      this.metrics?.pausedConnections.set(0);
    });
  }

  async start(): Promise<void> {
    for (const spec of this.opts.listeners) {
      this.counts.set(spec.name, newCounts());
      if (spec.transport === 'udp') await this.startUdp(spec);
      else await this.startStream(spec);
    }
    this.flushTimer = setInterval(() => this.publish(), 1_000);
    this.flushTimer.unref();
  }

  /** Lines and drops so far (tests, exit log). */
  snapshot(): Record<string, Counts> {
    return Object.fromEntries([...this.counts].map(([k, v]) => [k, { ...v, drops: { ...v.drops } }]));
  }

  /**
   * Graceful stop: stop accepting, read open connections a little longer, end them (an unterminated
   * last line still counts), cut every open message. The caller then drains the sink.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const s of this.servers) s.close();
    for (const u of this.udp) u.socket.close();
    if (this.sockets.size > 0) {
      if (!this.gate.closed) for (const s of this.sockets.keys()) s.resume();
      await new Promise((r) => setTimeout(r, this.opts.stopReadGraceMs ?? 2_000));
      // End the framers now ('close' comes a tick later, after the packer is closed).
      for (const [s, framer] of [...this.sockets]) {
        this.sockets.delete(s);
        framer.end();
        s.destroy();
      }
    }
    this.packer.flushAll('shutdown', true);
    if (this.flushTimer) clearInterval(this.flushTimer);
    this.publish();
  }

  private sinkFor(listener: string, sender: string): FrameSink {
    const c = this.counts.get(listener)!;
    const packer = this.packer;
    return {
      frame(buf, start, end) {
        if (packer.add(sender, buf, start, end)) c.lines++;
        else c.drops.oversize++;
      },
      drop(reason: FrameDropReason) {
        c.drops[reason]++;
      },
    };
  }

  private startStream(spec: ListenerSpec): Promise<void> {
    const onConnection = (socket: net.Socket) => {
      const sender = normalizeAddress(socket.remoteAddress);
      const c = this.counts.get(spec.name)!;
      if (this.stopping || !this.allowed(sender)) {
        c.drops.source_denied++;
        socket.destroy();
        return;
      }
      const framer = new StreamFramer(this.sinkFor(spec.name, sender), this.maxFrame, spec.framing ?? 'auto');
      this.sockets.set(socket, framer);
      this.metrics?.connections.inc({ listener: spec.name });
      if (this.gate.closed) socket.pause();
      socket.on('data', (chunk: Buffer) => {
        c.bytes += chunk.length;
        framer.push(chunk);
      });
      socket.on('error', () => undefined); // resets are normal; 'close' follows
      socket.once('close', () => {
        if (this.sockets.delete(socket)) framer.end();
        this.metrics?.connections.dec({ listener: spec.name }); // stop() leaves the close to this
      });
      socket.setKeepAlive(true, 60_000);
    };
    let server: net.Server | tls.Server;
    if (spec.transport === 'tls') {
      const t = this.opts.tls;
      if (!t) throw new Error(`listener ${spec.name}: tls transport without tls material`);
      server = tls.createServer(
        {
          cert: t.cert,
          key: t.key,
          ca: t.ca,
          requestCert: t.clientAuth !== 'none',
          rejectUnauthorized: t.clientAuth === 'required',
          minVersion: 'TLSv1.2',
        },
        onConnection,
      );
      server.on('tlsClientError', (err, socket) => {
        this.metrics?.tlsHandshakeFailures.inc({ listener: spec.name });
        this.opts.onTlsRefused?.(spec.name, tlsRefusalReason(err, socket));
      });
    } else {
      server = net.createServer(onConnection);
    }
    this.servers.push(server);
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port: spec.port, host: spec.host ?? '::', ipv6Only: false }, () => {
        const a = server.address();
        this.ports.set(spec.name, typeof a === 'object' && a ? a.port : spec.port);
        resolve();
      });
    });
  }

  private startUdp(spec: ListenerSpec): Promise<void> {
    const host = spec.host ?? '::';
    const socket = dgram.createSocket({
      type: net.isIPv4(host) ? 'udp4' : 'udp6',
      ipv6Only: false,
      recvBufferSize: this.opts.udpReceiveBufferBytes ?? 4 * 1024 * 1024,
    });
    const c = this.counts.get(spec.name)!;
    const sinks = new Map<string, FrameSink>();
    socket.on('message', (msg, rinfo) => {
      c.bytes += msg.length;
      const sender = normalizeAddress(rinfo.address);
      if (!this.allowed(sender)) {
        c.drops.source_denied++;
        return;
      }
      if (this.gate.closed) {
        c.drops.queue_full++;
        return;
      }
      let sink = sinks.get(sender);
      if (!sink) {
        if (sinks.size > 65_536) sinks.clear();
        sink = this.sinkFor(spec.name, sender);
        sinks.set(sender, sink);
      }
      frameDatagram(msg, sink, this.maxFrame);
    });
    socket.on('error', () => undefined);
    this.udp.push({ spec, socket });
    return new Promise((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(spec.port, host, () => {
        this.ports.set(spec.name, socket.address().port);
        resolve();
      });
    });
  }

  /** Moves the hot-path counts into prom-client and reads the kernel's UDP drop counters. */
  private publish(): void {
    const m = this.metrics;
    if (!m) return;
    for (const [name, c] of this.counts) {
      const prev = this.published.get(name) ?? newCounts();
      m.linesIn.inc({ listener: name }, c.lines - prev.lines);
      m.bytesIn.inc({ listener: name }, c.bytes - prev.bytes);
      for (const r of Object.keys(c.drops) as DropReason[])
        if (c.drops[r] > prev.drops[r])
          m.drops.inc({ listener: name, reason: r }, c.drops[r] - prev.drops[r]);
      this.published.set(name, { ...c, drops: { ...c.drops } });
    }
    for (const u of this.udp) {
      const port = this.ports.get(u.spec.name);
      const k = port === undefined ? undefined : readUdpSocketStats(port);
      if (k) {
        m.kernelDrops.set({ listener: u.spec.name }, k.drops);
        m.kernelRxQueue.set({ listener: u.spec.name }, k.rxQueueBytes);
      }
    }
    m.bytesHeld.set(this.gate.bytes);
    m.openSenders.set(this.packer.openSenders);
  }

  private readonly published = new Map<string, Counts>();
}

export type { FlowGate };
