/**
 * Sends packed messages to the pipeline's topic: one kafkajs idempotent producer (acks=all, one
 * request in flight per broker, as kafkajs requires for idempotence), the sender's address in the
 * `sender` header. With `valueEncoding` (the receiver's default) each packed value is compressed
 * HERE, once, as it is queued (zstd or an LZ4 block, named in VALUE_ENCODING_HEADER; the worker
 * decodes it) and its pooled buffer goes straight back to the packer: kafkajs then copies and
 * checksums ~1/8 of the bytes and compresses nothing (the record batch is sent uncompressed). That
 * was most of the receiver's CPU when kafkajs compressed the batch (bench/ingest-kafka.ts). One send loop: each `send()` carries as many queued messages as
 * fit `partitionBudgetBytes` per partition (a partition's messages form ONE record batch, which the
 * broker holds to the topic's max.message.bytes), partitions chosen round-robin (no key: one busy
 * firewall must not make one hot partition; the worker needs no per-device order).
 *
 * Bytes queued or in flight are held in the FlowGate until Kafka acknowledges them. A failed send
 * (kafkajs gave up its own retries) keeps the messages at the head of the queue and is retried
 * after a backoff: nothing packed is dropped while the process lives. Within one send kafkajs's
 * retries reuse the idempotent sequence numbers (no duplicates); a send retried by this loop after
 * an ambiguous failure (timeout) may duplicate that send's messages: at-least-once there.
 *
 * A send Kafka refuses as too large (the topic's max.message.bytes lowered after start) is not
 * retried as is: the limit is re-read, record batches get smaller, and a value refused alone is
 * split in two by lines (too-large.ts); only a single line that can never fit is dropped, reported.
 */
import { SENDER_HEADER } from '../../../common/src/ingest-config';
import {
  VALUE_ENCODING_HEADER,
  VALUE_ENCODING_NAMES,
  encodeValue,
  type ValueEncoding,
} from '../../../common/src/kafka/value-codec';
import type { FlowGate } from './flow-gate';
import type { PackedMessage } from './packer';
import { isTooLarge, splitOutgoing } from './too-large';

/** The part of a kafkajs Producer this uses (a fake in tests). */
export interface SendFn {
  (record: {
    topic: string;
    acks: -1;
    compression: number;
    messages: Array<{ partition: number; value: Buffer; headers: Record<string, string> }>;
  }): Promise<unknown>;
}

export interface KafkaSinkOptions {
  topic: string;
  /** kafkajs CompressionTypes value of the record batch (None = 0 when values are encoded here). */
  compression: number;
  /** Compress each value here with this codec (and mark it with VALUE_ENCODING_HEADER). */
  valueEncoding?: ValueEncoding;
  /** Current partition count of the topic (refreshed by the caller from metadata). */
  partitions: () => number;
  /** Uncompressed bytes per partition per send: 0.9 x the topic's max.message.bytes. */
  partitionBudgetBytes: number;
  /** Messages per send at most (bounds one request). */
  maxMessagesPerSend?: number;
  backoffMs?: (attempt: number) => number;
  /** Re-reads the per-partition budget (0.9 x max.message.bytes) after Kafka refused a send as too large. */
  readLimit?: () => Promise<number>;
}

/** A packed message as queued for Kafka: `value` is what goes on the wire (compressed or not). */
export interface OutgoingMessage {
  sender: string;
  lines: number;
  firstLineMs: number;
  /** Bytes of the packed (uncompressed) body. */
  plainBytes: number;
  value: Buffer;
  headers: Record<string, string>;
  /** Gives the packer's buffer back (already done when the value was compressed here). */
  release(): void;
}

const NOOP = () => undefined;
/** Shortest time between two reads of the topic's limit after too-large refusals. */
const LIMIT_REREAD_MS = 10_000;

export interface SinkEvents {
  sent(messages: readonly OutgoingMessage[], seconds: number): void;
  failed(err: unknown, attempt: number): void;
  /** A value Kafka refused alone as too large was split in two. */
  split(m: OutgoingMessage): void;
  /** A single line Kafka refuses even alone was given up (its bytes released). */
  dropped(m: OutgoingMessage): void;
}

export class KafkaSink {
  private readonly queue: OutgoingMessage[] = [];
  private running = false;
  private rr = 0;
  private idle: Array<() => void> = [];
  /** Date.now() of the last acknowledged send / failed send (readiness). */
  lastAckMs = 0;
  lastFailureMs = 0;
  private limitReadMs = -Infinity;

  constructor(
    private readonly send: SendFn,
    private readonly gate: FlowGate,
    private readonly opts: KafkaSinkOptions,
    private readonly events: Partial<SinkEvents> = {},
  ) {}

  /** Lowers the per-partition budget once the topic's max.message.bytes is known. */
  setPartitionBudget(bytes: number): void {
    this.opts.partitionBudgetBytes = bytes;
  }

  /** Messages waiting or in flight. */
  get pending(): number {
    return this.queue.length;
  }

  enqueue(m: PackedMessage): void {
    const out = this.outgoing(m);
    this.gate.acquire(out.value.length);
    this.queue.push(out);
    if (!this.running) void this.loop();
  }

  /** The wire form of `m`: compressed into a fresh buffer (the pooled one is released at once) or as is. */
  private outgoing(m: PackedMessage): OutgoingMessage {
    const base = { sender: m.sender, lines: m.lines, firstLineMs: m.firstLineMs, plainBytes: m.value.length };
    const enc = this.opts.valueEncoding;
    if (!enc) return { ...base, value: m.value, headers: { [SENDER_HEADER]: m.sender }, release: m.release };
    const value = encodeValue(m.value, enc);
    m.release();
    return {
      ...base,
      value,
      headers: { [SENDER_HEADER]: m.sender, [VALUE_ENCODING_HEADER]: VALUE_ENCODING_NAMES[enc] },
      release: NOOP,
    };
  }

  /** Resolves once everything enqueued so far is acknowledged (or the timeout passes: false). */
  drain(timeoutMs: number): Promise<boolean> {
    if (this.queue.length === 0 && !this.running) return Promise.resolve(true);
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(false), timeoutMs);
      this.idle.push(() => {
        clearTimeout(t);
        resolve(true);
      });
    });
  }

  private async loop(): Promise<void> {
    this.running = true;
    let attempt = 0;
    while (this.queue.length > 0) {
      const batch = this.plan();
      const t0 = process.hrtime.bigint();
      try {
        await this.send({
          topic: this.opts.topic,
          acks: -1,
          compression: this.opts.compression,
          messages: batch.map((b) => ({ partition: b.partition, value: b.m.value, headers: b.m.headers })),
        });
      } catch (err) {
        this.lastFailureMs = Date.now();
        this.events.failed?.(err, attempt);
        // Retrying a too-large send as is would fail for ever: shrink it (each step makes progress).
        if (isTooLarge(err)) await this.shrink(batch);
        else await new Promise((r) => setTimeout(r, (this.opts.backoffMs ?? defaultBackoff)(attempt++)));
        continue;
      }
      attempt = 0;
      this.lastAckMs = Date.now();
      const done = this.queue.splice(0, batch.length);
      this.events.sent?.(done, Number(process.hrtime.bigint() - t0) / 1e9);
      for (const m of done) {
        this.gate.release(m.value.length);
        m.release();
      }
    }
    this.running = false;
    for (const f of this.idle.splice(0)) f();
  }

  /**
   * After Kafka refused `batch` as too large: re-read the limit; several values: send at most half
   * of the refused partition bytes per record batch from now on; one value: split it in two by
   * lines, or drop it when it is a single line (the queue's head is batch[0]).
   */
  private async shrink(batch: ReadonlyArray<{ partition: number; m: OutgoingMessage }>): Promise<void> {
    const limit = await this.rereadLimit();
    if (batch.length > 1) {
      const per = new Map<number, number>();
      for (const b of batch) per.set(b.partition, (per.get(b.partition) ?? 0) + b.m.value.length);
      const half = Math.floor(Math.max(...per.values()) / 2);
      this.opts.partitionBudgetBytes = Math.max(1, Math.min(limit ?? half, half));
      return;
    }
    if (limit !== undefined) this.opts.partitionBudgetBytes = Math.min(this.opts.partitionBudgetBytes, limit);
    const head = this.queue[0];
    const halves = splitOutgoing(head, this.opts.valueEncoding);
    this.gate.release(head.value.length);
    head.release();
    if (halves) {
      for (const h of halves) this.gate.acquire(h.value.length);
      this.queue.splice(0, 1, ...halves);
      this.events.split?.(head);
    } else {
      this.queue.shift();
      this.events.dropped?.(head);
    }
  }

  /** The topic's limit read again, at most once per LIMIT_REREAD_MS (a split cascade refuses many sends). */
  private async rereadLimit(): Promise<number | undefined> {
    const now = Date.now();
    if (!this.opts.readLimit || now - this.limitReadMs < LIMIT_REREAD_MS) return undefined;
    this.limitReadMs = now;
    return this.opts.readLimit().catch(() => undefined);
  }

  /** The queue's head that fits one send; partitions round-robin, each within its byte budget. */
  private plan(): Array<{ partition: number; m: OutgoingMessage }> {
    const parts = Math.max(1, this.opts.partitions());
    const used = new Map<number, number>();
    const out: Array<{ partition: number; m: OutgoingMessage }> = [];
    const max = this.opts.maxMessagesPerSend ?? 64;
    for (const m of this.queue) {
      if (out.length >= max) break;
      let placed = false;
      for (let k = 0; k < parts && !placed; k++) {
        const p = (this.rr + k) % parts;
        const u = used.get(p) ?? 0;
        // Always at least one message per send, whatever its size (the packer keeps it under the limit).
        if (u + m.value.length <= this.opts.partitionBudgetBytes || out.length === 0) {
          used.set(p, u + m.value.length);
          out.push({ partition: p, m });
          this.rr = (p + 1) % parts;
          placed = true;
        }
      }
      if (!placed) break;
    }
    return out;
  }
}

function defaultBackoff(attempt: number): number {
  return Math.min(10_000, 200 * 2 ** attempt);
}
