/* eslint-disable @typescript-eslint/no-require-imports */
import { CompressionTypes } from 'kafkajs';
import { registerKafkaCodecs } from './codecs';
import { decodeRecordBatch } from './record-decoder';
import { RecordRun } from './record-run';
import { BATCH_NOT_DECODABLE, type BatchNotDecodable } from './record-wire';
import { FetchCursor } from './fetch-cursor';
import { batchMessages, withMessageObjects } from './fetch-batch';

type Enc = { buffer: Buffer };
const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0') as {
  RecordBatch: (o: object) => Promise<Enc>;
};
const Record = require('kafkajs/src/protocol/recordBatch/record/v0') as (o: object) => Enc;
const Decoder = require('kafkajs/src/protocol/decoder') as new (b: Buffer) => unknown;
const original = require('kafkajs/src/protocol/recordBatch/v0/decoder') as (
  d: unknown,
) => Promise<{ records: Array<Record<string, unknown>> }>;
const { lookupCodecByAttributes } = require('kafkajs/src/protocol/message/compression') as {
  lookupCodecByAttributes(a: number): { decompress(b: Buffer): Promise<Buffer> } | null;
};
const { KafkaJSPartialMessageError } = require('kafkajs/src/errors') as {
  KafkaJSPartialMessageError: new (m: string) => Error;
};
const Long = require('kafkajs/src/utils/long') as { fromValue(v: string | number): unknown };

/** Records of every shape: null value, keys, headers (repeated, empty), gaps in the offsets. */
function records(n: number, gap = 1): Enc[] {
  const out: Enc[] = [];
  for (let i = 0; i < n; i++) {
    const headers: Record<string, unknown> =
      i % 5 === 0
        ? { 'lp-sender': Buffer.from(`10.0.0.${i}`), tag: [Buffer.from('a'), Buffer.from('b')] }
        : {};
    out.push(
      Record({
        offsetDelta: i * gap,
        timestampDelta: i % 3 === 0 ? i * 1000 : -i,
        key: i % 4 === 0 ? Buffer.from(`k${i}`) : null,
        value: i % 11 === 0 ? null : Buffer.from(`<134>line ${i} ${'x'.repeat(i * 37)}`),
        headers,
      }),
    );
  }
  return out;
}

async function batch(compression: number, firstOffset: string, n: number, gap = 1): Promise<Buffer> {
  const enc = await RecordBatch({
    compression,
    firstOffset: Long.fromValue(firstOffset),
    firstTimestamp: 1_764_000_000_000,
    maxTimestamp: 1_764_000_005_000,
    // A compacted batch keeps its original last offset: leave room past the last record.
    lastOffsetDelta: (n - 1) * gap + (gap > 1 ? 3 : 0),
    records: records(n, gap),
  });
  return enc.buffer;
}

async function asRun(buffer: Buffer): Promise<RecordRun> {
  const out = await decodeRecordBatch(
    new Decoder(buffer) as never,
    lookupCodecByAttributes,
    KafkaJSPartialMessageError,
    true,
  );
  const list = out.records as unknown[];
  expect(list).toHaveLength(1);
  expect(list[0]).toBeInstanceOf(RecordRun);
  return list[0] as RecordRun;
}

const CODECS: Array<[string, number]> = [
  ['none', CompressionTypes.None],
  ['gzip', CompressionTypes.GZIP],
  ['lz4', CompressionTypes.LZ4],
  ['snappy', CompressionTypes.Snappy],
  ['zstd', CompressionTypes.ZSTD],
];

describe('record runs (one lazily decompressed object per record batch)', () => {
  beforeAll(() => registerKafkaCodecs());

  it.each(CODECS)('reads every record as kafkajs decodes it (%s)', async (_name, compression) => {
    for (const [firstOffset, gap] of [
      ['0', 1],
      ['123456789', 1],
      ['5000', 7],
    ] as const) {
      const buf = await batch(compression, firstOffset, 60, gap);
      const expected = (await original(new Decoder(buf))).records;
      const run = await asRun(buf);
      expect(run.offset).toBe(String(Number(firstOffset) + 59 * gap + (gap > 1 ? 3 : 0)));
      expect(run.open()).toBeUndefined();
      const seen: Array<Record<string, unknown>> = [];
      while (run.next())
        seen.push({ offset: String(run.recordOffset), value: run.value(), headers: run.recordHeaders });
      expect(seen).toEqual(expected.map((r) => ({ offset: r.offset, value: r.value, headers: r.headers })));
      // kafkajs's own objects (for aborted-transaction filtering) are exactly the original's.
      expect((await asRun(buf)).expand()).toEqual(expected);
    }
  });

  it('leaves a batch compressed until it is opened and drops the decoded bytes when closed', async () => {
    const buf = await batch(CompressionTypes.LZ4, '10', 30);
    const run = await asRun(buf);
    const decoded = (run as unknown as { plain?: Buffer }).plain;
    expect(decoded).toBeUndefined();
    run.open();
    expect(run.next()).toBe(true);
    run.close();
    expect(run.next()).toBe(false);
    expect((run as unknown as { plain: Buffer }).plain).toHaveLength(0);
  });

  it('turns a batch that does not decompress into the one dead-letter stand-in, without throwing', async () => {
    const buf = await batch(CompressionTypes.ZSTD, '200', 20);
    // The compressed payload starts 61 bytes in (header) + 4 (count): corrupt its frame magic.
    buf.writeUInt32BE(0xdeadbeef, 61);
    const run = await asRun(buf);
    const standIn = run.open() as Record<string | symbol, unknown>;
    expect(standIn.offset).toBe('219');
    const cause = standIn[BATCH_NOT_DECODABLE] as BatchNotDecodable;
    expect(cause).toMatchObject({ kind: 'corrupt', firstOffset: '200', lastOffset: '219' });
    expect(run.next()).toBe(false);
    const cursor = new FetchCursor([run], 0);
    expect(cursor.next()).toBe(true);
    expect(cursor.offset).toBe(219);
    expect(cursor.notDecodable).toBe(cause);
    expect(cursor.next()).toBe(false);
  });

  it('keeps kafkajs objects for offsets past 2^53 and for codecs that are not ours', async () => {
    const big = await batch(CompressionTypes.None, '9223372036854775000', 5);
    const out = await decodeRecordBatch(
      new Decoder(big) as never,
      lookupCodecByAttributes,
      KafkaJSPartialMessageError,
      true,
    );
    expect(out).toEqual(await original(new Decoder(big)));
  });

  it('walks runs and message objects alike, skipping records below the fetched offset', async () => {
    const one = await asRun(await batch(CompressionTypes.Snappy, '100', 10));
    const two = await asRun(await batch(CompressionTypes.None, '110', 10, 2));
    const loose = { offset: '140', value: Buffer.from('x'), headers: {} };
    const cursor = new FetchCursor([one, two, loose], 105);
    const offsets: number[] = [];
    const through: number[] = [];
    while (cursor.next()) {
      offsets.push(cursor.offset);
      through.push(cursor.exhaustedThrough);
    }
    expect(offsets).toEqual([105, 106, 107, 108, 109, 110, 112, 114, 116, 118, 120, 122, 124, 126, 128, 140]);
    // Run two ends at 131 (compacted tail): reading past it lets the consumer resolve through 131.
    expect(through.at(-1)).toBe(131);
    expect(through[5]).toBe(109);
  });

  it("expands runs for kafkajs's own Batch and lets the fast Batch filter them by their last offset", async () => {
    const buf = await batch(CompressionTypes.GZIP, '300', 8);
    const run = await asRun(buf);
    const data = { partition: 0, highWatermark: '400', messages: [run] };
    const expanded = withMessageObjects(data);
    expect(expanded.messages).toEqual((await original(new Decoder(buf))).records);
    expect(withMessageObjects({ ...data, messages: [] }).messages).toEqual([]);
    expect(batchMessages('308', [run])?.messages).toEqual([]);
    expect(batchMessages('307', [run])?.messages).toEqual([run]);
  });
});
