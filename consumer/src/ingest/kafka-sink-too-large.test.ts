/**
 * The receiver read the topic's max.message.bytes once, at start. Lowered outside the spec later,
 * a send whose record batch exceeds it is refused by the broker (MESSAGE_TOO_LARGE, not retriable)
 * and the sink retried the same send for ever: Kafka intake stopped (TCP paused, UDP dropped) until
 * a restart. Proved on the unfixed code (drain never finished); the assertions state the fix: the
 * sink re-reads the limit, sends fewer values per record batch, splits a value refused alone by
 * lines, and drops (counts) only a single line that can never fit.
 */
import { createHash } from 'node:crypto';
import { decodeValue } from '../../../common/src/kafka/value-codec';
import { FlowGate } from './flow-gate';
import { KafkaSink, type OutgoingMessage } from './kafka-sink';
import type { PackedMessage } from './packer';

/** What kafkajs's producer.send throws for a refused batch (a KafkaJSNonRetriableError around the protocol error). */
function tooLarge(): Error {
  const cause = Object.assign(
    new Error('The request included a message larger than the max message size the server will accept'),
    {
      name: 'KafkaJSProtocolError',
      type: 'MESSAGE_TOO_LARGE',
      code: 10,
      retriable: false,
    },
  );
  return Object.assign(new Error(cause.message), {
    name: 'KafkaJSNonRetriableError',
    retriable: false,
    cause,
  });
}

const packed = (lines: string[], released: string[], id: string): PackedMessage => ({
  sender: '10.0.0.1',
  value: Buffer.from(lines.join('\n')),
  lines: lines.length,
  cause: 'lines',
  firstLineMs: 0,
  release: () => released.push(id),
});

/** A broker whose topic limit is `limit()` bytes per partition's record batch (values only). */
function broker(limit: () => number) {
  const stored: Array<{ partition: number; value: Buffer; headers: Record<string, string> }> = [];
  let refused = 0;
  const send = async (rec: {
    messages: Array<{ partition: number; value: Buffer; headers: Record<string, string> }>;
  }) => {
    const per = new Map<number, number>();
    for (const m of rec.messages) per.set(m.partition, (per.get(m.partition) ?? 0) + m.value.length);
    if ([...per.values()].some((b) => b > limit())) {
      refused++;
      throw tooLarge();
    }
    stored.push(...rec.messages);
  };
  return { send, stored, refused: () => refused };
}

/** A log line of ~150 bytes that compresses about 2x (hex digests), like real firewall lines more than 'xxx'. */
const line = (i: number) =>
  `<134>Dec  3 10:00:00 fw01 kernel: line ${i} ${createHash('sha256').update(String(i)).digest('hex')}`;

describe('KafkaSink when the topic limit is lowered under it', () => {
  it.each([undefined, 'zstd', 'lz4'] as const)(
    'recovers without a restart: smaller record batches, split values, every line once (%s)',
    async (valueEncoding) => {
      let limitBytes = 1 << 20;
      const b = broker(() => limitBytes);
      const gate = new FlowGate(64 << 20, 1 << 20);
      const released: string[] = [];
      const events = { split: 0, dropped: [] as OutgoingMessage[] };
      const sink = new KafkaSink(
        b.send,
        gate,
        {
          topic: 't',
          compression: 0,
          valueEncoding,
          partitions: () => 1,
          partitionBudgetBytes: 900_000,
          backoffMs: () => 1,
          readLimit: async () => Math.floor(limitBytes * 0.9),
        },
        { split: () => events.split++, dropped: (m) => events.dropped.push(m) },
      );
      // Values of ~75 KB raw, ~40 KB compressed: at 1 KB (8 KB raw) even one value must be split.
      limitBytes = valueEncoding ? 1024 : 8 * 1024;
      const all: string[] = [];
      for (let k = 0; k < 8; k++) {
        const lines = Array.from({ length: 600 }, (_, i) => line(k * 600 + i));
        all.push(...lines);
        sink.enqueue(packed(lines, released, `m${k}`));
      }
      expect(await sink.drain(4_000)).toBe(true);
      expect(b.refused()).toBeGreaterThan(0);
      expect(events.split).toBeGreaterThan(0);
      expect(events.dropped).toHaveLength(0);
      const got = b.stored.flatMap((m) => decodeValue(m.value, m.headers).toString().split('\n'));
      expect(got).toEqual(all);
      expect(b.stored.every((m) => m.headers.sender === '10.0.0.1')).toBe(true);
      expect(released.sort()).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7']);
      expect(gate.bytes).toBe(0);
    },
  );

  it('drops (and reports) only a single line that can never fit, then carries on', async () => {
    const b = broker(() => 200);
    const gate = new FlowGate(1 << 20, 1024);
    const dropped: OutgoingMessage[] = [];
    const sink = new KafkaSink(
      b.send,
      gate,
      { topic: 't', compression: 0, partitions: () => 1, partitionBudgetBytes: 10_000, backoffMs: () => 1 },
      { dropped: (m) => dropped.push(m) },
    );
    sink.enqueue(packed(['short one', 'y'.repeat(500), 'short two'], [], 'a'));
    sink.enqueue(packed(['after'], [], 'b'));
    expect(await sink.drain(4_000)).toBe(true);
    expect(dropped.map((m) => [m.lines, m.plainBytes])).toEqual([[1, 500]]);
    expect(b.stored.map((m) => m.value.toString())).toEqual(['short one', 'short two', 'after']);
    expect(gate.bytes).toBe(0);
  });

  it('other failures are retried as before: nothing split, nothing dropped', async () => {
    let fail = 3;
    const stored: Buffer[] = [];
    const sink = new KafkaSink(
      async (rec) => {
        if (fail-- > 0)
          throw Object.assign(new Error('Connection error'), { name: 'KafkaJSConnectionError' });
        stored.push(...rec.messages.map((m) => m.value));
      },
      new FlowGate(1 << 20, 1024),
      { topic: 't', compression: 0, partitions: () => 1, partitionBudgetBytes: 10, backoffMs: () => 1 },
      { split: () => fail++, dropped: () => fail++ },
    );
    sink.enqueue(packed(['a', 'b'], [], 'a'));
    expect(await sink.drain(4_000)).toBe(true);
    expect(stored.map((v) => v.toString())).toEqual(['a\nb']);
  });
});
