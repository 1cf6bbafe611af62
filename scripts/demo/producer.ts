/**
 * Produces the demo traffic into the pipeline's topic at a target rate: LZ4-compressed batches of
 * multi-line messages, round-robin over partitions, idempotent (a retried send is never stored
 * twice, so "produced" stays exact). Falls behind rather than bursting when Kafka cannot keep up.
 */
import { CompressionTypes, Kafka, logLevel, type Producer } from 'kafkajs';
import { registerKafkaCodecs } from '../../common/src/kafka/codecs';
import type { TrafficGenerator } from './traffic';

/** How fast and where to produce. */
export interface ProducerOptions {
  bootstrap: string;
  topic: string;
  partitions: number;
  rate: number;
  linesPerMessage: number;
}

/** Counters of acknowledged traffic. */
export interface ProducerCounters {
  lines: number;
  messages: number;
  bytes: number;
  malformed: number;
  failedSends: number;
  lastError?: string;
  firstSendMs?: number;
  lastAckMs?: number;
}

const TICK_MS = 50;
const MAX_IN_FLIGHT = 4;
const MAX_MESSAGES_PER_SEND = 500;

/** Lines due by `elapsedMs` at `rate`, minus what was already scheduled, in whole messages. */
export function messagesDue(
  rate: number,
  elapsedMs: number,
  scheduledLines: number,
  linesPerMessage: number,
): number {
  const dueLines = Math.floor((rate * elapsedMs) / 1000) - scheduledLines;
  return Math.max(0, Math.floor(dueLines / linesPerMessage));
}

/** The rate-paced producer; `start()` then `stop()`. */
export class TrafficProducer {
  /** What Kafka acknowledged so far. */
  readonly counters: ProducerCounters = { lines: 0, messages: 0, bytes: 0, malformed: 0, failedSends: 0 };
  private readonly producer: Producer;
  private timer?: NodeJS.Timeout;
  private readonly inFlight = new Set<Promise<void>>();
  private startMs = 0;
  private scheduledLines = 0;
  private nextPartition = 0;

  /** Builds the kafkajs producer (LZ4 codec registered). */
  constructor(
    private readonly opts: ProducerOptions,
    private readonly traffic: TrafficGenerator,
  ) {
    registerKafkaCodecs();
    const kafka = new Kafka({
      clientId: 'logpipeline-demo-traffic',
      brokers: [opts.bootstrap],
      logLevel: logLevel.NOTHING,
    });
    this.producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
    });
  }

  /** Connects and starts pacing. */
  async start(): Promise<void> {
    await this.producer.connect();
    this.startMs = Date.now();
    this.timer = setInterval(() => this.tick(), TICK_MS);
  }

  /** Stops producing, waits for sends in flight, disconnects. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    await this.producer.disconnect().catch(() => undefined);
  }

  private tick(): void {
    const now = Date.now();
    let due = messagesDue(this.opts.rate, now - this.startMs, this.scheduledLines, this.opts.linesPerMessage);
    const perSecond = Math.ceil(this.opts.rate / this.opts.linesPerMessage);
    if (due > perSecond) {
      // More than a second behind: Kafka is the bottleneck; forget the debt instead of bursting.
      this.scheduledLines += (due - perSecond) * this.opts.linesPerMessage;
      due = perSecond;
    }
    while (due > 0 && this.inFlight.size < MAX_IN_FLIGHT) {
      const count = Math.min(due, MAX_MESSAGES_PER_SEND);
      due -= count;
      this.scheduledLines += count * this.opts.linesPerMessage;
      this.send(count, now);
    }
  }

  private send(count: number, now: number): void {
    const chunk = this.traffic.next(count, now);
    const messages = chunk.messages.map((value) => {
      const partition = this.nextPartition;
      this.nextPartition = (this.nextPartition + 1) % this.opts.partitions;
      return { partition, value };
    });
    this.counters.firstSendMs ??= now;
    const p = this.producer
      .send({ topic: this.opts.topic, acks: -1, compression: CompressionTypes.LZ4, messages })
      .then(
        () => {
          const c = this.counters;
          c.lines += chunk.lines;
          c.messages += messages.length;
          c.bytes += chunk.bytes;
          c.malformed += chunk.malformed;
          c.lastAckMs = Date.now();
        },
        (err: Error) => {
          this.counters.failedSends++;
          this.counters.lastError = err.message;
        },
      )
      .finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }
}
