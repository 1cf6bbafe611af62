/**
 * Issue 16 review finding, proved on the unfixed code first (Worker.plainValue + decodeValue): a zstd
 * value of 2 KB inflated to 64 MiB with no bound; a value that did not decode was kept as sent, so
 * 100 messages became 200 dead letters with parser reasons (invalid_utf8, unknown_format); and the
 * worker logged one warning per message (100). The assertions state the fixed behaviour.
 */
import zlib from 'node:zlib';
import { encodeValue } from '../../common/src/kafka/value-codec';
import { BatchEncoder, type MessageInput } from './encode/batch';
import { REFERENCE_COLUMNS } from './encode/reference-columns';
import { WorkerMetrics } from './observability/metrics';
import { reasonLabel } from './sink/dead-letter';
import { rowSources } from './sink/row-lines';
import { DECODE_SUMMARY_EVERY_MS, ValueIntake } from './worker-values';
import { BATCH_NOT_DECODABLE, type BatchNotDecodable } from '../../common/src/kafka/record-decoder';

const BOUND = 16 << 20;
const zstd = zlib as unknown as { zstdCompressSync(b: Buffer): Buffer };
const LINE =
  '<134>Dec  3 10:00:00 fw01 kernel: IN=eth0 OUT=eth1 SRC=10.0.0.1 DST=10.0.0.2 PROTO=TCP SPT=1 DPT=2';

function encoder(): BatchEncoder {
  return new BatchEncoder({
    parser: { format: 'auto', timezone: 'UTC' },
    columns: REFERENCE_COLUMNS.map((c) => ({ name: c.name, type: c.type, source: c.source! })),
    staticFields: {},
  });
}

function harness(now = () => 0) {
  const metrics = new WorkerMetrics(false);
  const warn = jest.fn();
  const log = { warn, info: jest.fn(), error: jest.fn(), debug: jest.fn() };
  const intake = new ValueIntake(BOUND, metrics, log as never, now);
  /** What the worker's eachBatch hands the pipeline for one Kafka message. */
  const take = (offset: number, value: Buffer, encoding?: string): MessageInput => {
    const headers = encoding === undefined ? {} : { 'content-encoding': Buffer.from(encoding) };
    const plain = intake.plain({ value, headers, offset: String(offset) }, 0);
    return { topic: 't', partition: 0, offset, value: plain, undecodable: intake.failure };
  };
  const failures = async () =>
    Object.fromEntries(
      (await metrics.valueDecodeFailures.get()).values.map((v) => [v.labels.reason, v.value]),
    );
  return { intake, take, warn, failures };
}

describe('undecodable message values (content-encoding)', () => {
  it('a zstd bomb is refused at the bound, not inflated (unfixed: 64 MiB allocated)', async () => {
    const bomb = zstd.zstdCompressSync(Buffer.alloc(64 << 20, 0x41));
    expect(bomb.length).toBeLessThan(10_000);
    const { take, failures } = harness();
    const m = take(0, bomb, 'zstd');
    expect(m.undecodable).toBe('value not decodable: zstd: exceeds 16777216 bytes');
    expect(m.value).toBe(bomb);
    expect(await failures()).toEqual({ too_large: 1 });
  });

  it('a pipeline with a larger bound (kafka.maxValueBytes) decodes what the default refuses', () => {
    const big = Buffer.alloc(24 << 20, 0x41);
    const intake = new ValueIntake(32 << 20, new WorkerMetrics(false), { warn: jest.fn() } as never);
    const headers = { 'content-encoding': Buffer.from('zstd') };
    expect(intake.plain({ value: zstd.zstdCompressSync(big), headers, offset: '0' }, 0).equals(big)).toBe(
      true,
    );
    expect(intake.failure).toBeUndefined();
  });

  it('an LZ4 size prefix over the bound is refused before anything is allocated', () => {
    const forged = Buffer.alloc(64);
    forged.writeUInt32LE(0xffffffff, 0);
    expect(harness().take(0, forged, 'lz4-block').undecodable).toBe(
      'value not decodable: lz4-block: size prefix 4294967295 exceeds 16777216 bytes',
    );
  });

  it('a truncated or lying LZ4 block is corrupt, never a short value', () => {
    const good = encodeValue(Buffer.from(Array(50).fill(LINE).join('\n')), 'lz4');
    const { take } = harness();
    expect(take(0, good.subarray(0, good.length - 7), 'lz4-block').undecodable).toMatch(
      /^value not decodable: lz4-block: /,
    );
    const lying = Buffer.from(good);
    lying.writeUInt32LE(good.readUInt32LE(0) + 100, 0);
    expect(take(1, lying, 'lz4-block').undecodable).toMatch(
      /^value not decodable: lz4-block: decoded \d+ bytes, size prefix says \d+$/,
    );
    expect(take(2, Buffer.from([1, 2]), 'lz4-block').undecodable).toMatch(/shorter than the size prefix/);
  });

  it('100 corrupt messages: 100 whole dead letters with the codec reason and raw bytes, 1 log line', async () => {
    const { take, warn, failures } = harness();
    const enc = encoder();
    const raw = Buffer.from('\x28\xb5\x2f\xfd garbage\nmore garbage', 'latin1');
    const good = encodeValue(Buffer.from(`${LINE}\n${LINE}`), 'zstd');
    const messages: MessageInput[] = [];
    for (let i = 0; i < 100; i++) messages.push(take(2 * i, raw, 'zstd'), take(2 * i + 1, good, 'zstd'));
    const out = enc.encode(messages, Date.now());
    expect(out.rows).toBe(200);
    expect(out.deadLetters).toHaveLength(100);
    for (const d of out.deadLetters) {
      expect(d.reason).toMatch(/^value not decodable: zstd: /);
      expect(d.line.equals(raw)).toBe(true);
      expect(d.lineIndex).toBe(0);
      expect(Number(d.offset) % 2).toBe(0);
    }
    expect(reasonLabel(out.deadLetters[0].reason)).toBe('value_not_decodable');
    // ClickHouse refusing a row maps back to the right line: the undecodable messages hold none.
    const sources = rowSources(messages, out.deadLetters, out.rows);
    expect(sources).toHaveLength(200);
    expect(sources!.every((s) => s.line.toString() === LINE)).toBe(true);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(await failures()).toEqual({ corrupt: 100 });
  });

  it('an unknown encoding is dead-lettered; identity and no header pass through untouched', async () => {
    const { take, failures } = harness();
    const plain = Buffer.from(LINE);
    expect(take(0, plain, 'gzip').undecodable).toBe('value not decodable: unknown content-encoding "gzip"');
    const identity = take(1, plain, 'identity');
    const none = take(2, plain);
    expect([identity.undecodable, none.undecodable]).toEqual([undefined, undefined]);
    expect(identity.value).toBe(plain);
    expect(none.value).toBe(plain);
    expect(await failures()).toEqual({ unknown_encoding: 1 });
  });

  it('summarises at most once a minute, counting what it did not log', () => {
    let now = 1_000_000;
    const { take, warn } = harness(() => now);
    for (let i = 0; i < 10; i++) take(i, Buffer.from('x'), 'br');
    now += DECODE_SUMMARY_EVERY_MS;
    take(10, Buffer.from('x'), 'br');
    expect(warn).toHaveBeenCalledTimes(2);
    expect(warn.mock.calls[1][1]).toMatchObject({
      messages: 10,
      last: { partition: 0, offset: '10', reason: 'value not decodable: unknown content-encoding "br"' },
    });
  });

  it('the stand-in of an undecodable record batch is one dead letter with the offset range, counted and summarised', async () => {
    const metrics = new WorkerMetrics(false);
    const warn = jest.fn();
    const intake = new ValueIntake(BOUND, metrics, { warn } as never, () => 0);
    const compressed = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3]);
    const cause: BatchNotDecodable = {
      kind: 'too_large',
      message: 'zstd: exceeds 1048576 bytes',
      firstOffset: '7',
      lastOffset: '9',
    };
    for (let i = 0; i < 3; i++) {
      const m = { value: compressed, headers: {}, offset: '9', [BATCH_NOT_DECODABLE]: cause };
      expect(intake.plain(m, 2)).toBe(compressed);
      expect(intake.failure).toBe('record batch not decodable: zstd: exceeds 1048576 bytes (offsets 7-9)');
    }
    expect(reasonLabel(intake.failure!)).toBe('record_batch_not_decodable');
    const counted = (await metrics.batchDecodeFailures.get()).values.map((v) => [v.labels.reason, v.value]);
    expect(counted).toEqual([['too_large', 3]]);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toBe('record batches not decodable: dead-lettered whole');
    // The next ordinary message is not marked.
    intake.plain({ value: Buffer.from(LINE), headers: {}, offset: '10' }, 2);
    expect(intake.failure).toBeUndefined();
  });
});
