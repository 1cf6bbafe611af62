/* eslint-disable @typescript-eslint/no-require-imports */
import { batchMessages, fastBatchClass, installFastFetchBatch } from './fetch-batch';

type Batch = Record<string, unknown> & {
  isEmpty(): boolean;
  isEmptyIncludingFiltered(): boolean;
  isEmptyDueToFiltering(): boolean;
  isEmptyControlRecord(): boolean;
  isEmptyDueToLogCompactedMessages(): boolean;
  firstOffset(): string | null;
  lastOffset(): string;
  offsetLag(): string;
  offsetLagLow(): string;
};
type BatchClass = new (topic: string, fetchedOffset: string, data: object) => Batch;
const Original = require('kafkajs/src/consumer/batch') as BatchClass;
const Fast = fastBatchClass(Original) as BatchClass;

interface Msg {
  offset: string;
  key: Buffer | null;
  isControlRecord: boolean;
  batchContext: { producerId: string; inTransaction: boolean };
}

function messages(first: bigint, n: number, control: (i: number) => boolean = () => false): Msg[] {
  return Array.from({ length: n }, (_, i) => ({
    offset: String(first + BigInt(i)),
    key: control(i) ? Buffer.from([0, 0, 0, 0]) : null,
    isControlRecord: control(i),
    batchContext: { producerId: '7', inTransaction: control(i) || i % 3 === 0 },
  }));
}

/** Everything a Batch exposes, for comparing the two classes. */
function view(b: Batch) {
  return {
    fields: {
      fetchedOffset: b.fetchedOffset,
      topic: b.topic,
      partition: b.partition,
      highWatermark: b.highWatermark,
      rawMessages: b.rawMessages,
      messagesWithinOffset: b.messagesWithinOffset,
      messages: b.messages,
    },
    isEmpty: b.isEmpty(),
    isEmptyIncludingFiltered: b.isEmptyIncludingFiltered(),
    isEmptyDueToFiltering: b.isEmptyDueToFiltering(),
    isEmptyControlRecord: b.isEmptyControlRecord(),
    isEmptyDueToLogCompactedMessages: b.isEmptyDueToLogCompactedMessages(),
    firstOffset: b.firstOffset(),
    lastOffset: b.lastOffset(),
    offsetLag: b.offsetLag(),
    offsetLagLow: b.offsetLagLow(),
  };
}

function same(fetchedOffset: string, data: object) {
  const a = new Original('t', fetchedOffset, data);
  const b = new Fast('t', fetchedOffset, data);
  expect(b).toBeInstanceOf(Original);
  expect(view(b)).toEqual(view(a));
}

describe('fast fetch Batch', () => {
  const base = { partition: 2, highWatermark: '1000', abortedTransactions: [] };

  it('equals kafkajs’s Batch for every shape of fetch', () => {
    same('100', { ...base, messages: messages(100n, 50) }); // the usual: nothing below the fetch offset
    same('110', { ...base, messages: messages(100n, 50) }); // a record batch started before it
    same('200', { ...base, messages: messages(100n, 50) }); // all below (compacted / re-fetch)
    same('100', { ...base, messages: [] }); // empty fetch
    same('0', { ...base, highWatermark: '0', messages: [] });
    same('100', { ...base, messages: messages(100n, 10, (i) => i === 9) }); // a commit marker at the end
    same('105', { ...base, messages: messages(100n, 10, (i) => i === 9 || i === 2) });
    same('109', { ...base, messages: messages(100n, 10, (i) => i === 9) }); // only a control record left
    same('100', { ...base, abortedTransactions: undefined, messages: messages(100n, 5) });
  });

  it('shares the fetched array when nothing is dropped (no per-message copy)', () => {
    const raw = messages(100n, 20);
    const b = new Fast('t', '100', { ...base, messages: raw });
    expect(b.messages).toBe(raw);
    expect(b.messagesWithinOffset).toBe(raw);
  });

  it('leaves aborted transactions and offsets past 2^53 to kafkajs’s own constructor', () => {
    const aborted = { ...base, abortedTransactions: [{ producerId: '7', firstOffset: '103' }] };
    same('100', { ...aborted, messages: messages(100n, 10, (i) => i === 8) });
    const big = 2n ** 60n;
    same(String(big + 3n), { ...base, highWatermark: String(big + 100n), messages: messages(big, 10) });
    expect(batchMessages(String(big), messages(big, 2))).toBeUndefined();
    expect(batchMessages('9007199254740990', messages(9007199254740990n, 5))).toBeUndefined();
  });

  it('reports false where it cannot replace the module (jest’s registry): kafkajs’s Batch stays', () => {
    require('kafkajs');
    expect(installFastFetchBatch()).toBe(false);
    expect(require('kafkajs/src/consumer/batch')).toBe(Original);
  });
});
