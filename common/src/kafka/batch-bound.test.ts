/**
 * Issue 16 review finding, proved on the unfixed code first (codecs.ts, lz4-codec.ts and
 * record-decoder.ts of 03a5b10): one 8 MiB value in a record batch of 8 KB gzip, 394 KB snappy,
 * 33 KB lz4 or 358 B zstd was decompressed whole (8388608 bytes each), at any size. And a batch
 * that throws fails kafkajs's whole fetch response: with the bound but without the stand-in, the
 * worker of test/worker-batch-decode.test.ts crashed and rejoined 136 times in 4 minutes and
 * committed nothing on either partition. The assertions state the fixed behaviour.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
import { CompressionTypes } from 'kafkajs';
import { compressFrameSync } from 'lz4-napi';
import {
  DEFAULT_MAX_RECORD_BATCH_BYTES,
  recordBatchLimitFor,
  recordBatchOutputLimit,
  setRecordBatchOutputLimit,
} from './batch-bound';
import { registerKafkaCodecs, snappyPreamble } from './codecs';
import { lz4OutputBound } from './lz4-codec';
import { BATCH_NOT_DECODABLE, decodeRecordBatch, type BatchNotDecodable } from './record-decoder';

type Enc = { buffer: Buffer };
const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0') as {
  RecordBatch: (o: object) => Promise<Enc>;
};
const Record = require('kafkajs/src/protocol/recordBatch/record/v0') as (o: object) => Enc;
const Decoder = require('kafkajs/src/protocol/decoder') as new (b: Buffer) => unknown;
const original = require('kafkajs/src/protocol/recordBatch/v0/decoder') as (d: unknown) => Promise<unknown>;
const { lookupCodecByAttributes } = require('kafkajs/src/protocol/message/compression') as {
  lookupCodecByAttributes(a: number): { decompress(b: Buffer): Promise<Buffer> } | null;
};
const { KafkaJSPartialMessageError } = require('kafkajs/src/errors') as {
  KafkaJSPartialMessageError: new (m: string) => Error;
};
const Long = require('kafkajs/src/utils/long') as { fromValue(v: string | number): unknown };

const BOUND = 1 << 20;
const FIRST = '1000';

/** A record batch at offset 1000: one good line, one `big` value of 'A's, one good line. */
async function batch(compression: number, big: number): Promise<Buffer> {
  const values = [Buffer.from('<134>before'), Buffer.alloc(big, 0x41), Buffer.from('<134>after')];
  const enc = await RecordBatch({
    compression,
    firstOffset: Long.fromValue(FIRST),
    firstTimestamp: 1_764_000_000_000,
    maxTimestamp: 1_764_000_000_000,
    lastOffsetDelta: values.length - 1,
    records: values.map((value, offsetDelta) =>
      Record({ offsetDelta, timestampDelta: 0, key: null, value, headers: {} }),
    ),
  });
  return enc.buffer;
}

async function decode(buffer: Buffer) {
  return (await decodeRecordBatch(
    new Decoder(buffer) as never,
    lookupCodecByAttributes,
    KafkaJSPartialMessageError,
  )) as {
    records: Array<Record<string | symbol, unknown>>;
  };
}

const CODECS = {
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
};

beforeAll(() => {
  registerKafkaCodecs();
  setRecordBatchOutputLimit(BOUND);
});
afterAll(() => setRecordBatchOutputLimit(DEFAULT_MAX_RECORD_BATCH_BYTES));

describe.each(Object.entries(CODECS))('%s record batch', (name, compression) => {
  test('a small batch inflating past the bound is one stand-in record at its last offset, not decoded', async () => {
    const bomb = await batch(compression, 8 << 20);
    expect(bomb.length).toBeLessThan(512 << 10); // snappy's ratio tops out near 20x
    const { records } = await decode(bomb);
    expect(records).toHaveLength(1);
    const cause = records[0][BATCH_NOT_DECODABLE] as BatchNotDecodable;
    expect(cause).toEqual({
      kind: 'too_large',
      message: `${name}: exceeds ${BOUND} bytes`,
      firstOffset: FIRST,
      lastOffset: '1002',
    });
    expect(records[0].offset).toBe('1002');
    // The compressed records as they came (what the dead letter keeps), not the inflated bytes.
    expect((records[0].value as Buffer).length).toBeLessThan(bomb.length);
  });

  test('a batch within the bound decodes as before', async () => {
    const { records } = await decode(await batch(compression, BOUND / 2));
    expect(records.map((r) => [r.offset, (r.value as Buffer).length])).toEqual([
      ['1000', 11],
      ['1001', BOUND / 2],
      ['1002', 10],
    ]);
    expect(records[0][BATCH_NOT_DECODABLE]).toBeUndefined();
  });

  test('a corrupt batch is a stand-in with kind corrupt, where kafkajs throws (failing the whole fetch)', async () => {
    const good = await batch(compression, 64 << 10);
    const bad = Buffer.from(good);
    // The compressed records start after the 61-byte batch header: wreck their middle.
    bad.fill(0xff, 61 + 8, bad.length - 8);
    await expect(original(new Decoder(bad))).rejects.toThrow();
    const { records } = await decode(bad);
    expect(records).toHaveLength(1);
    expect(records[0][BATCH_NOT_DECODABLE]).toMatchObject({
      kind: expect.stringMatching(/^(corrupt|too_large)$/),
    });
    expect(records[0].offset).toBe('1002');
  });
});

test('the bound follows kafka.maxValueBytes (4x), default 64 MiB', () => {
  expect(recordBatchLimitFor(undefined)).toBe(64 << 20);
  expect(recordBatchLimitFor(1 << 20)).toBe(4 << 20);
  expect(recordBatchOutputLimit()).toBe(BOUND);
  expect(() => setRecordBatchOutputLimit(0)).toThrow(RangeError);
});

test('the LZ4 bound is blocks x block size, never below the real output', () => {
  const data = Buffer.alloc(300_000, 0x42);
  const frame = compressFrameSync(data);
  const bound = lz4OutputBound(frame);
  expect(bound).toBeGreaterThanOrEqual(data.length);
  expect(lz4OutputBound(Buffer.concat([frame, frame]))).toBe(2 * bound);
  expect(() => lz4OutputBound(frame.subarray(0, frame.length - 6))).toThrow(/truncated/);
});

test('the snappy preamble is read before the decoder allocates', () => {
  expect(snappyPreamble(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x0f]))).toBe(0xf0000000);
  expect(snappyPreamble(Buffer.from([0x05, 0x10]))).toBe(5);
  expect(() => snappyPreamble(Buffer.from([0x80, 0x80]))).toThrow(/preamble/);
});
