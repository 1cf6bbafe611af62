/**
 * Sends packed messages to the pipeline's topic: one kafkajs idempotent producer (acks=all, one
 * request in flight per broker, as kafkajs requires for idempotence), LZ4 or zstd, the sender's
 * address in the `sender` header. One send loop: each `send()` carries as many queued messages as
 * fit `partitionBudgetBytes` per partition (a partition's messages form ONE record batch, which the
 * broker holds to the topic's max.message.bytes), partitions chosen round-robin (no key: one busy
 * firewall must not make one hot partition; the worker needs no per-device order).
 *
 * Bytes queued or in flight are held in the FlowGate until Kafka acknowledges them. A failed send
 * (kafkajs gave up its own retries) keeps the messages at the head of the queue and is retried
 * after a backoff: nothing packed is dropped while the process lives. Within one send kafkajs's
 * retries reuse the idempotent sequence numbers (no duplicates); a send retried by this loop after
 * an ambiguous failure (timeout) may duplicate that send's messages: at-least-once there.
 */
import { SENDER_HEADER } from '../../../common/src/ingest-config';
import type { FlowGate } from './flow-gate';
import type { PackedMessage } from './packer';

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
  /** kafkajs CompressionTypes value (LZ4 = 3, ZSTD = 4). */
  compression: number;
  /** Current partition count of the topic (refreshed by the caller from metadata). */
  partitions: () => number;
  /** Uncompressed bytes per partition per send: 0.9 x the topic's max.message.bytes. */
  partitionBudgetBytes: number;
  /** Messages per send at most (bounds one request). */
  maxMessagesPerSend?: number;
  backoffMs?: (attempt: number) => number;
}

export interface SinkEvents {
  sent(messages: readonly PackedMessage[], seconds: number): void;
  failed(err: unknown, attempt: number): void;
}

export class KafkaSink {
  private readonly queue: PackedMessage[] = [];
  private running = false;
  private rr = 0;
  private idle: Array<() => void> = [];
  /** Date.now() of the last acknowledged send / failed send (readiness). */
  lastAckMs = 0;
  lastFailureMs = 0;

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
    this.gate.acquire(m.value.length);
    this.queue.push(m);
    if (!this.running) void this.loop();
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
          messages: batch.map((b) => ({
            partition: b.partition,
            value: b.m.value,
            headers: { [SENDER_HEADER]: b.m.sender },
          })),
        });
      } catch (err) {
        this.lastFailureMs = Date.now();
        this.events.failed?.(err, attempt);
        await new Promise((r) => setTimeout(r, (this.opts.backoffMs ?? defaultBackoff)(attempt++)));
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

  /** The queue's head that fits one send; partitions round-robin, each within its byte budget. */
  private plan(): Array<{ partition: number; m: PackedMessage }> {
    const parts = Math.max(1, this.opts.partitions());
    const used = new Map<number, number>();
    const out: Array<{ partition: number; m: PackedMessage }> = [];
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
