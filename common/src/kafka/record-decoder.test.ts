/* eslint-disable @typescript-eslint/no-require-imports */
import { CompressionTypes } from 'kafkajs';
import { registerKafkaCodecs } from './codecs';
import { decodeRecordBatch } from './record-decoder';

type Enc = { buffer: Buffer };
const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0') as {
  RecordBatch: (o: object) => Promise<Enc>;
};
const Record = require('kafkajs/src/protocol/recordBatch/record/v0') as (o: object) => Enc;
const Decoder = require('kafkajs/src/protocol/decoder') as new (b: Buffer) => {
  buffer: Buffer;
  offset: number;
};
const original = require('kafkajs/src/protocol/recordBatch/v0/decoder') as (d: unknown) => Promise<unknown>;
const { lookupCodecByAttributes } = require('kafkajs/src/protocol/message/compression') as {
  lookupCodecByAttributes(a: number): { decompress(b: Buffer): Promise<Buffer> } | null;
};
const { KafkaJSPartialMessageError } = require('kafkajs/src/errors') as {
  KafkaJSPartialMessageError: new (m: string) => Error;
};
const Long = require('kafkajs/src/utils/long') as { fromValue(v: string | number): unknown };

/** Records with every shape the wire allows: null key/value, repeated and empty headers, big deltas. */
function records(n: number): Enc[] {
  const out: Enc[] = [];
  for (let i = 0; i < n; i++) {
    const headers: Record<string, unknown> =
      i % 5 === 0
        ? { 'lp-sender': Buffer.from(`10.0.0.${i % 250}`), tag: [Buffer.from('a'), Buffer.from('b')] }
        : i % 7 === 0
          ? { empty: Buffer.alloc(0), ü: Buffer.from('x') }
          : {};
    out.push(
      Record({
        offsetDelta: i,
        timestampDelta: i % 3 === 0 ? i * 1000 : -i,
        key: i % 4 === 0 ? Buffer.from(`k${i}`) : null,
        value: i % 11 === 0 ? null : Buffer.from(`<134>line ${i} ${'x'.repeat(i % 50)}`),
        headers,
      }),
    );
  }
  return out;
}

async function batch(opts: { compression: number; firstOffset: string; n: number; firstTimestamp?: number }) {
  const enc = await RecordBatch({
    compression: opts.compression,
    firstOffset: Long.fromValue(opts.firstOffset),
    firstTimestamp: opts.firstTimestamp ?? 1_764_000_000_000,
    maxTimestamp: (opts.firstTimestamp ?? 1_764_000_000_000) + 5_000,
    lastOffsetDelta: opts.n - 1,
    records: records(opts.n),
  });
  return enc.buffer;
}

async function both(buffer: Buffer) {
  const a = await original(new Decoder(buffer));
  const b = await decodeRecordBatch(
    new Decoder(buffer) as never,
    lookupCodecByAttributes,
    KafkaJSPartialMessageError,
  );
  return { a, b };
}

describe('fast record-batch decoder', () => {
  beforeAll(() => registerKafkaCodecs());

  it.each([
    ['none', CompressionTypes.None],
    ['gzip', CompressionTypes.GZIP],
    ['lz4', CompressionTypes.LZ4],
    ['snappy', CompressionTypes.Snappy],
    ['zstd', CompressionTypes.ZSTD],
  ])('returns exactly what kafkajs returns (%s)', async (_name, compression) => {
    for (const firstOffset of ['0', '123456789', '9007199254740990', '9223372036854775000']) {
      const { a, b } = await both(await batch({ compression, firstOffset, n: 40 }));
      expect(b).toEqual(a);
      expect((b as { records: unknown[] }).records).toHaveLength(40);
    }
  });

  it('takes the batch timestamp for LOG_APPEND_TIME batches and handles negative first timestamps', async () => {
    const buf = await batch({
      compression: CompressionTypes.None,
      firstOffset: '42',
      n: 30,
      firstTimestamp: -1,
    });
    const appendTime = Buffer.from(buf);
    // attributes: after firstOffset(8) length(4) leaderEpoch(4) magic(1) crc(4)
    appendTime.writeInt16BE(appendTime.readInt16BE(21) | 0x8, 21);
    for (const b of [buf, appendTime]) {
      const r = await both(b);
      expect(r.b).toEqual(r.a);
    }
  });

  it('reads consecutive batches from one fetch buffer and reports a truncated one as partial', async () => {
    const one = await batch({ compression: CompressionTypes.LZ4, firstOffset: '1000', n: 50 });
    const two = await batch({ compression: CompressionTypes.None, firstOffset: '1050', n: 50 });
    const d1 = new Decoder(Buffer.concat([one, two, two.subarray(0, 40)]));
    const d2 = new Decoder(Buffer.concat([one, two, two.subarray(0, 40)]));
    for (let i = 0; i < 2; i++) {
      expect(
        await decodeRecordBatch(d2 as never, lookupCodecByAttributes, KafkaJSPartialMessageError),
      ).toEqual(await original(d1));
    }
    await expect(original(d1)).rejects.toThrow('partial record batch');
    await expect(
      decodeRecordBatch(d2 as never, lookupCodecByAttributes, KafkaJSPartialMessageError),
    ).rejects.toMatchObject({ name: 'KafkaJSPartialMessageError' });
  });
});
