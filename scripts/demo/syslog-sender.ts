/**
 * Sends the demo traffic the way a firewall does: syslog over one TCP connection to the pipeline's
 * receiver (spec.ingest.syslog), each line LF-terminated, paced at the target rate. The receiver
 * packs the lines into Kafka messages; "sent" counts lines the socket accepted. Falls behind rather
 * than bursting when the receiver pushes back (TCP backpressure).
 */
import net from 'node:net';
import { messagesDue, type ProducerCounters } from './producer';
import type { TrafficGenerator } from './traffic';

/** Where and how fast to send. */
export interface SyslogSenderOptions {
  host: string;
  port: number;
  rate: number;
  /** Lines generated per step (the generator's unit); each line is its own syslog message. */
  linesPerMessage: number;
}

const TICK_MS = 50;
const LF = Buffer.from('\n');

/** The rate-paced TCP syslog sender; `start()` then `stop()` (same counters as TrafficProducer). */
export class SyslogSender {
  /** What the socket accepted so far (`messages` counts generator chunks). */
  readonly counters: ProducerCounters = { lines: 0, messages: 0, bytes: 0, malformed: 0, failedSends: 0 };
  private socket?: net.Socket;
  private timer?: NodeJS.Timeout;
  private startMs = 0;
  private scheduledLines = 0;
  private blocked = false;

  constructor(
    private readonly opts: SyslogSenderOptions,
    private readonly traffic: TrafficGenerator,
  ) {}

  /** Connects to the receiver and starts pacing. */
  async start(): Promise<void> {
    const socket = net.connect({ host: this.opts.host, port: this.opts.port });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    socket.on('error', (err) => {
      this.counters.failedSends++;
      this.counters.lastError = err.message;
    });
    socket.on('drain', () => (this.blocked = false));
    this.socket = socket;
    this.startMs = Date.now();
    this.timer = setInterval(() => this.tick(), TICK_MS);
  }

  /** Stops sending and closes the connection once everything written was handed to the kernel. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const socket = this.socket;
    if (!socket || socket.destroyed) return;
    await new Promise<void>((resolve) => socket.end(resolve));
  }

  private tick(): void {
    const socket = this.socket;
    if (!socket || this.blocked || socket.destroyed) return;
    const now = Date.now();
    let due = messagesDue(this.opts.rate, now - this.startMs, this.scheduledLines, this.opts.linesPerMessage);
    const perSecond = Math.ceil(this.opts.rate / this.opts.linesPerMessage);
    if (due > perSecond) {
      // More than a second behind: the receiver is the bottleneck; forget the debt instead of bursting.
      this.scheduledLines += (due - perSecond) * this.opts.linesPerMessage;
      due = perSecond;
    }
    if (due === 0) return;
    this.scheduledLines += due * this.opts.linesPerMessage;
    const chunk = this.traffic.next(due, now);
    const parts: Buffer[] = [];
    for (const m of chunk.messages) parts.push(m, LF);
    const data = Buffer.concat(parts);
    this.counters.firstSendMs ??= now;
    this.blocked = !socket.write(data);
    const c = this.counters;
    c.lines += chunk.lines;
    c.messages += chunk.messages.length;
    c.bytes += chunk.bytes;
    c.malformed += chunk.malformed;
    c.lastAckMs = now;
  }
}
