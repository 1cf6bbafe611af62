import { BatchPipeline, heldBytes, MESSAGE_OVERHEAD_BYTES, type BatchPipelineDeps } from './worker-batches';
import { ByteBudget, Slots } from './delivery/flow-control';
import { PartitionState } from './delivery/partition-state';
import type { MessageInput } from './encode/batch';

const counter = () => ({ inc: () => undefined, set: () => undefined, observe: () => undefined });

/** An encoder that writes 10 bytes per message into the buffer the pipeline hands it. */
function fakeEncoder() {
  let out: Buffer = Buffer.alloc(0);
  return {
    format: 'RowBinary',
    get outputCapacity() {
      return out.length;
    },
    swapOutput(b: Buffer) {
      const old = out;
      out = b;
      return old;
    },
    encode(messages: readonly MessageInput[]) {
      const n = messages.length;
      return { data: out.subarray(0, 10 * n), rows: n, lines: n, deadLetters: [], blankLines: 0 };
    },
  };
}

function pipeline(budget: ByteBudget, deliveries: Array<() => void>) {
  const deps = {
    encoder: fakeEncoder(),
    delivery: {
      deliver: () =>
        new Promise((resolve) =>
          deliveries.push(() =>
            resolve({ rowsInserted: 1, deadLetters: [], deduplicated: false, rejectedRows: [] }),
          ),
        ),
    },
    committer: { flush: () => Promise.resolve() },
    budget,
    slots: new Slots(4),
    metrics: new Proxy({}, { get: () => counter() }),
    log: { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined },
    tokenSalt: 'salt',
  } as unknown as BatchPipelineDeps;
  return new BatchPipeline(deps);
}

describe('BatchPipeline byte budget', () => {
  it('counts each message object next to its value bytes and gives every byte back', async () => {
    const budget = new ByteBudget(1 << 30);
    const deliveries: Array<() => void> = [];
    const p = pipeline(budget, deliveries);
    const state = new PartitionState('t', 0, { maxRows: 3, maxBytes: 1 << 20, maxDelayMs: 1000 });
    state.load(0, []);
    const value = Buffer.from('a line of forty bytes, more or less....');
    for (let offset = 0; offset < 2; offset++)
      p.take(state, { topic: 't', partition: 0, offset, value }, 1, 0);
    // Two open messages: their values and their objects.
    expect(budget.bytes).toBe(heldBytes(2 * value.length, 2));
    expect(heldBytes(2 * value.length, 2)).toBe(2 * value.length + 2 * MESSAGE_OVERHEAD_BYTES);
    p.take(state, { topic: 't', partition: 0, offset: 2, value }, 1, 0); // closes a batch of 3
    expect(budget.bytes).toBe(heldBytes(3 * value.length, 3) + 30);
    p.take(state, { topic: 't', partition: 0, offset: 3, value }, 1, 0);
    // Let the journal flush resolve and the delivery be requested, then store the batch.
    while (deliveries.length === 0) await new Promise((r) => setImmediate(r));
    deliveries.shift()!();
    await new Promise((r) => setImmediate(r));
    while (p.inflightBatches > 0) await p.idle();
    expect(budget.bytes).toBe(heldBytes(value.length, 1));
  });

  it('releases a dropped replay range with its message objects', () => {
    const budget = new ByteBudget(1 << 30);
    const p = pipeline(budget, []);
    const state = new PartitionState('t', 0, { maxRows: 100, maxBytes: 1 << 20, maxDelayMs: 1000 });
    state.load(0, [{ firstOffset: 0, lastOffset: 9, ingestMs: 1 }]);
    const value = Buffer.from('x'.repeat(50));
    for (let offset = 0; offset < 4; offset++)
      p.take(state, { topic: 't', partition: 0, offset, value }, 1, 0);
    expect(budget.bytes).toBe(heldBytes(200, 4));
    p.closeOpen([state], 5);
    expect(budget.bytes).toBe(0);
  });
});

describe('BatchPipeline passed-over offsets (transaction markers, aborted records)', () => {
  const limits = { maxRows: 100, maxBytes: 1 << 20, maxDelayMs: 1000 };
  const value = Buffer.from('one line');

  it('commits past a trailing marker only once the data before it is stored', async () => {
    const deliveries: Array<() => void> = [];
    const p = pipeline(new ByteBudget(1 << 30), deliveries);
    const state = new PartitionState('t', 0, limits);
    state.load(0, []);
    for (let offset = 0; offset < 3; offset++)
      p.take(state, { topic: 't', partition: 0, offset, value }, 1, 0);
    state.passOver(3); // the fetch ended in a commit marker at offset 3
    p.foldPassedOver(state);
    expect(state.tracker.watermark()).toBe(0); // the open batch is not even cut yet
    p.tick([state], 5_000);
    p.foldPassedOver(state);
    expect(state.tracker.watermark()).toBe(0); // cut, not stored
    while (deliveries.length === 0) await new Promise((r) => setImmediate(r));
    deliveries.shift()!();
    while (p.inflightBatches > 0) await p.idle();
    expect(state.tracker.watermark()).toBe(4);
    expect(state.nextIn).toBe(4);
  });

  it('commits past a fetch that held nothing at once, and never while a journaled range is pending', () => {
    const p = pipeline(new ByteBudget(1 << 30), []);
    const idle = new PartitionState('t', 0, limits);
    idle.load(7, []);
    const before = idle.version;
    idle.passOver(9);
    p.foldPassedOver(idle);
    expect(idle.tracker.watermark()).toBe(10);
    expect(idle.version).toBe(before + 1);
    const replaying = new PartitionState('t', 1, limits);
    replaying.load(7, [{ firstOffset: 7, lastOffset: 8, ingestMs: 1 }]);
    replaying.passOver(9);
    p.foldPassedOver(replaying);
    expect(replaying.tracker.watermark()).toBe(7);
  });
});
