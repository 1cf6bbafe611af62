import { decodeValue } from '../../../common/src/kafka/value-codec';
import { FlowGate } from './flow-gate';
import { KafkaSink } from './kafka-sink';
import type { PackedMessage } from './packer';

const msg = (bytes: number, released: string[], id: string): PackedMessage => ({
  sender: '10.0.0.1',
  value: Buffer.alloc(bytes, 0x61),
  lines: 1,
  cause: 'lines',
  firstLineMs: 0,
  release: () => released.push(id),
});

describe('KafkaSink', () => {
  it('spreads messages round-robin within the per-partition budget, header sender, acks=all', async () => {
    const sends: Array<Array<{ partition: number; headers: Record<string, string> }>> = [];
    let unblock!: () => void;
    const first = new Promise<void>((r) => (unblock = r));
    const gate = new FlowGate(10_000, 100);
    const released: string[] = [];
    const sink = new KafkaSink(
      async (rec) => {
        expect(rec.acks).toBe(-1);
        sends.push(rec.messages);
        if (sends.length === 1) await first;
      },
      gate,
      { topic: 't', compression: 3, partitions: () => 2, partitionBudgetBytes: 250 },
    );
    sink.enqueue(msg(200, released, 'a')); // sent alone (loop starts at once)
    for (const id of ['b', 'c', 'd']) sink.enqueue(msg(200, released, id));
    expect(gate.bytes).toBe(800);
    unblock();
    expect(await sink.drain(1_000)).toBe(true);
    expect(sends.map((s) => s.map((m) => m.partition))).toEqual([[0], [1, 0], [1]]);
    expect(sends[0][0].headers).toEqual({ sender: '10.0.0.1' });
    expect(released).toEqual(['a', 'b', 'c', 'd']);
    expect(gate.bytes).toBe(0);
  });

  it('keeps failed messages at the head and retries them; the gate stays closed meanwhile', async () => {
    let fail = 2;
    const gate = new FlowGate(100, 10);
    const released: string[] = [];
    const failures: number[] = [];
    const sink = new KafkaSink(
      async () => {
        if (fail-- > 0) throw new Error('broker down');
      },
      gate,
      { topic: 't', compression: 3, partitions: () => 1, partitionBudgetBytes: 1_000, backoffMs: () => 5 },
      { failed: (_e, attempt) => failures.push(attempt) },
    );
    sink.enqueue(msg(150, released, 'x'));
    expect(gate.closed).toBe(true);
    expect(await sink.drain(1_000)).toBe(true);
    expect(failures).toEqual([0, 1]);
    expect(released).toEqual(['x']);
    expect(gate.closed).toBe(false);
    expect(sink.lastFailureMs).toBeLessThanOrEqual(sink.lastAckMs);
  });

  it('compresses each value once when queued, releases the packer buffer at once, marks the codec', async () => {
    const sent: Array<{ value: Buffer; headers: Record<string, string> }> = [];
    const gate = new FlowGate(1_000_000, 100);
    const released: string[] = [];
    const seen: number[] = [];
    const sink = new KafkaSink(
      async (rec) => {
        expect(rec.compression).toBe(0);
        sent.push(...rec.messages);
      },
      gate,
      { topic: 't', compression: 0, valueEncoding: 'zstd', partitions: () => 1, partitionBudgetBytes: 1e6 },
      { sent: (ms) => seen.push(...ms.map((m) => m.plainBytes)) },
    );
    const m = msg(50_000, released, 'z');
    const plain = Buffer.from(m.value);
    sink.enqueue(m);
    expect(released).toEqual(['z']); // before Kafka's ack: the wire copy is what waits
    expect(gate.bytes).toBeLessThan(1_000);
    expect(await sink.drain(1_000)).toBe(true);
    expect(sent[0].headers).toEqual({ sender: '10.0.0.1', 'content-encoding': 'zstd' });
    expect(decodeValue(sent[0].value, sent[0].headers).equals(plain)).toBe(true);
    expect(seen).toEqual([50_000]);
    expect(gate.bytes).toBe(0);
  });
});
