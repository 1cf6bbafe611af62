import { createHash } from 'node:crypto';
import { BatchEncoder, type MessageInput } from '../encode/batch';
import { REFERENCE_COLUMNS } from '../encode/reference-columns';
import { generateSampleLines } from '../../../test/fixtures/samples';
import { BatchDigester } from '../../../common/src/integrity/canonical';
import type { CanonicalColumn } from '../../../common/src/integrity/canonical-ops';
import { RowBinaryCanonical } from '../../../common/src/integrity/canonical-rowbinary';
import { ChainState } from './chain-state';
import { RowBinaryToTsv } from './rowbinary-tsv';

/** The old route: RowBinary -> TSV text -> canonical digest. */
function viaTsv(columns: readonly CanonicalColumn[], body: Buffer, time = 'ts', sortByOffset?: string) {
  const d = new BatchDigester(columns, { timeColumn: time, sortByOffset });
  const err = d.addTsv(Buffer.from(new RowBinaryToTsv(columns).convert(body)));
  if (err !== null) throw new Error(err);
  return d.finish();
}

/** The new route: RowBinary rows canonicalised directly. */
function direct(columns: readonly CanonicalColumn[], body: Buffer, time = 'ts', sortByOffset?: string) {
  const d = new BatchDigester(columns, { timeColumn: time, sortByOffset, scratchBytes: 4096 });
  const err = d.addRowBinary(body, new RowBinaryCanonical(columns, time));
  if (err !== null) throw new Error(err);
  return d.finish();
}

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A minimal RowBinary writer for hand-made rows. */
class Rows {
  private parts: Buffer[] = [];
  varString(s: string | Buffer): void {
    const b = typeof s === 'string' ? Buffer.from(s, 'utf8') : s;
    const len: number[] = [];
    let n = b.length;
    do {
      len.push((n & 0x7f) | (n >= 0x80 ? 0x80 : 0));
      n = Math.floor(n / 128);
    } while (n > 0);
    this.parts.push(Buffer.from(len), b);
  }
  byte(v: number): void {
    this.parts.push(Buffer.of(v & 255));
  }
  int(bits: number, signed: boolean, v: bigint): void {
    const b = Buffer.alloc(bits / 8);
    if (bits === 64) {
      if (signed) b.writeBigInt64LE(v);
      else b.writeBigUInt64LE(v);
    } else if (signed) b.writeIntLE(Number(v), 0, bits / 8);
    else b.writeUIntLE(Number(v), 0, bits / 8);
    this.parts.push(b);
  }
  raw(b: Buffer): void {
    this.parts.push(b);
  }
  body(): Buffer {
    return Buffer.concat(this.parts);
  }
}

const EDGE_COLUMNS: CanonicalColumn[] = [
  { name: 'ts', type: 'DateTime64(3)' },
  { name: 'kafka_offset', type: 'UInt64', source: 'kafka_offset' },
  { name: 'kafka_line', type: 'UInt32', source: 'kafka_line' },
  { name: 'msg', type: 'String' },
  { name: 'note', type: 'Nullable(String)' },
  { name: 'lc', type: 'LowCardinality(String)' },
  { name: 'act', type: "Enum8('allow' = 1, 'deny' = -2, 'tab\\tname' = 3, 'ünï' = 4)" },
  { name: 'big', type: "Enum16('low' = -300, 'high' = 1000)" },
  { name: 'i8', type: 'Int8', source: 'field:i8' },
  { name: 'u8', type: 'UInt8' },
  { name: 'i16', type: 'Int16', source: 'static:x' },
  { name: 'u16', type: 'UInt16', source: 'dst_port' },
  { name: 'i32', type: 'Nullable(Int32)' },
  { name: 'u32', type: 'UInt32' },
  { name: 'i64', type: 'Int64' },
  { name: 'u64', type: 'UInt64', source: 'field:u64' },
  { name: 'dt', type: 'DateTime' },
  { name: 'dt0', type: 'DateTime64(0)' },
  { name: 'dt6', type: "DateTime64(6, 'UTC')" },
  { name: 'dt9', type: 'Nullable(DateTime64(9))' },
  { name: 'ip4', type: 'IPv4' },
  { name: 'ip6', type: 'IPv6' },
  { name: 'nip', type: 'Nullable(IPv6)' },
];

const STRINGS = [
  '',
  'plain',
  'tab\there',
  'nl\nand\rcr',
  'back\\slash',
  '\\N',
  'ünïcödé 🔥 日本',
  'x'.repeat(200),
  'long\t'.repeat(4000),
];
const INTS: Record<string, bigint[]> = {
  i8: [-128n, -1n, 0n, 127n],
  u8: [0n, 255n],
  i16: [-32768n, 0n, 32767n],
  u16: [0n, 65535n],
  i32: [-2147483648n, -1n, 0n, 2147483647n],
  u32: [0n, 4294967295n],
  i64: [
    -(2n ** 63n),
    -(2n ** 53n) - 1n,
    -(2n ** 53n),
    -1n,
    0n,
    2n ** 53n - 1n,
    2n ** 53n + 1n,
    2n ** 63n - 1n,
  ],
  u64: [0n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 64n - 1n],
};

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)];
}

/** `n` random rows of EDGE_COLUMNS (offsets ascending, a few rows per offset). */
function edgeRows(n: number, seed: number): Buffer {
  const r = rng(seed);
  const w = new Rows();
  for (let i = 0; i < n; i++) {
    w.int(64, true, BigInt(1_700_000_000_000 + Math.floor(r() * 1e9)));
    w.int(64, false, BigInt(1000 + Math.floor(i / 3)));
    w.int(32, false, BigInt(i % 3));
    w.varString(pick(r, STRINGS) + String(i));
    if (r() < 0.3) w.byte(1);
    else {
      w.byte(0);
      w.varString(pick(r, STRINGS));
    }
    w.varString(pick(r, ['a', 'b\\c', '']));
    w.int(8, true, BigInt(pick(r, [1, -2, 3, 4])));
    w.int(16, true, BigInt(pick(r, [-300, 1000])));
    for (const [name, bits, signed] of [
      ['i8', 8, true],
      ['u8', 8, false],
      ['i16', 16, true],
      ['u16', 16, false],
    ] as const)
      w.int(bits, signed, pick(r, INTS[name]));
    if (r() < 0.2) w.byte(1);
    else {
      w.byte(0);
      w.int(32, true, pick(r, INTS.i32));
    }
    w.int(32, false, pick(r, INTS.u32));
    w.int(64, true, pick(r, INTS.i64));
    w.int(64, false, pick(r, INTS.u64));
    w.int(32, false, BigInt(pick(r, [0, 1, 1_700_000_000, 4294967295])));
    w.int(64, true, BigInt(pick(r, [0, 1_700_000_000, 999_999_999_999_999])));
    w.int(64, true, BigInt(pick(r, [0, 1, 999_999, 1_700_000_000_123_456, 1_700_000_000_999_999])));
    if (r() < 0.25) w.byte(1);
    else {
      w.byte(0);
      w.int(64, true, pick(r, [0n, 1n, 999_999_999n, 1_700_000_000_123_456_789n, 2n ** 63n - 1n]));
    }
    w.int(32, false, BigInt(pick(r, [0, 0x0a000001, 0xffffffff, 0xc0a80101])));
    const ip6 = Buffer.alloc(16);
    for (let k = 0; k < 16; k++) ip6[k] = pick(r, [0, 0xff, Math.floor(r() * 256)]);
    w.raw(ip6);
    if (r() < 0.5) w.byte(1);
    else {
      w.byte(0);
      w.raw(Buffer.from('00000000000000000000ffff0a000001', 'hex'));
    }
  }
  return w.body();
}

describe('integrity digest of RowBinary rows without the TSV round trip', () => {
  it('equals the digest of their TSV text for encoder batches of every format', () => {
    const lines = [
      Buffer.from('date=2024-01-15 time=10:00:00 srcip=10.0.0.1 dstip=2001:db8::5 msg="tab\there \\\\ nl"'),
      ...generateSampleLines('mix', 5000, { seed: 11, malformedRatio: 0.05 }),
    ];
    const messages: MessageInput[] = [];
    for (let i = 0; i < lines.length; i += 7) {
      messages.push({
        value: Buffer.concat(lines.slice(i, i + 7).flatMap((l) => [l, Buffer.of(10)])),
        topic: 'fw',
        partition: 1,
        offset: 500 + i,
      });
    }
    const rb = new BatchEncoder({
      parser: { format: 'auto', timezone: 'UTC' },
      columns: REFERENCE_COLUMNS,
      format: 'RowBinary',
    }).encode(messages, Date.UTC(2024, 0, 15, 12, 0, 0, 789));
    const want = viaTsv(REFERENCE_COLUMNS, Buffer.from(rb.data));
    expect(want.rows).toBeGreaterThan(4500);
    expect(direct(REFERENCE_COLUMNS, Buffer.from(rb.data))).toEqual(want);
    // Without the line column, rows of one offset are hashed sorted: the same either way.
    const noLine = REFERENCE_COLUMNS.filter((c) => c.name !== 'kafka_line');
    const rbNoLine = new BatchEncoder({
      parser: { format: 'auto', timezone: 'UTC' },
      columns: noLine,
      format: 'RowBinary',
    }).encode(messages, Date.UTC(2024, 0, 15, 12, 0, 0, 789));
    const sorted = viaTsv(noLine, Buffer.from(rbNoLine.data), 'ts', 'kafka_offset');
    expect(direct(noLine, Buffer.from(rbNoLine.data), 'ts', 'kafka_offset')).toEqual(sorted);
  });

  it('equals it over escaping, unicode, NULLs, enums, 64-bit extremes, times and addresses', () => {
    for (const seed of [1, 2, 3]) {
      const body = edgeRows(3000, seed);
      const want = viaTsv(EDGE_COLUMNS, body);
      expect(want.rows).toBe(3000);
      expect(direct(EDGE_COLUMNS, body)).toEqual(want);
      expect(direct(EDGE_COLUMNS, body, 'ts', 'kafka_offset')).toEqual(
        viaTsv(EDGE_COLUMNS, body, 'ts', 'kafka_offset'),
      );
    }
  });

  it('hashes rows of one offset sorted by their canonical bytes (independent oracle)', () => {
    const body = edgeRows(2000, 6);
    const reader = new RowBinaryCanonical(EDGE_COLUMNS);
    const out = Buffer.alloc(1 << 20);
    const groups = new Map<string, Buffer[]>();
    const order: string[] = [];
    for (let p = 0; p < body.length;) {
      const end = reader.rowEnd(body, p, body.length);
      const o = reader.write(body, p, out, 0);
      const row = Buffer.from(out.subarray(0, o - 1));
      const offset = row.toString('latin1').split('\t')[1];
      if (!groups.has(offset)) order.push(offset);
      groups.set(offset, [...(groups.get(offset) ?? []), row]);
      p = end;
    }
    const sha = createHash('sha256');
    for (const k of order) for (const r of groups.get(k)!.sort(Buffer.compare)) sha.update(r).update('\n');
    const want = sha.digest('hex');
    expect(direct(EDGE_COLUMNS, body, 'ts', 'kafka_offset').digest).toBe(want);
    expect(viaTsv(EDGE_COLUMNS, body, 'ts', 'kafka_offset').digest).toBe(want);
    expect(direct(EDGE_COLUMNS, body).digest).not.toBe(want);
  });

  it('tracks a DateTime time column exactly like the TSV route', () => {
    const body = edgeRows(500, 4);
    const want = viaTsv(EDGE_COLUMNS, body, 'dt');
    expect(direct(EDGE_COLUMNS, body, 'dt')).toEqual(want);
    expect(want.maxTsMs).toBeGreaterThan(0);
  });

  it('seals the same links with rejected rows left out', () => {
    const body = edgeRows(400, 5);
    const seal = (format: 'RowBinary' | 'TabSeparated', payload: Buffer) => {
      const chain = new ChainState({ pipeline: 'ns/p', table: 't', columns: EDGE_COLUMNS });
      chain.restore(0, []);
      return chain.seal({
        partition: 0,
        firstOffset: 1000,
        lastOffset: 1133,
        insertedAtMs: 1_700_000_000_000,
        batchToken: 'tok',
        tsv: payload,
        format,
        skipRows: [0, 7, 8, 399],
      });
    };
    const tsv = Buffer.from(new RowBinaryToTsv(EDGE_COLUMNS).convert(body));
    const want = seal('TabSeparated', tsv);
    expect(typeof want).toBe('object');
    expect(seal('RowBinary', body)).toEqual(want);
  });

  it('refuses what the TSV route refuses', () => {
    const cols: CanonicalColumn[] = [
      { name: 'ts', type: 'DateTime64(3)' },
      { name: 'act', type: "Enum8('allow' = 1)" },
    ];
    const row = (ticks: bigint, act: number) => {
      const w = new Rows();
      w.int(64, true, ticks);
      w.int(8, true, BigInt(act));
      return w.body();
    };
    for (const bad of [row(-1n, 1), row(1n, 2), row(10n ** 18n, 1), row(1n, 1).subarray(0, 5)]) {
      expect(() => viaTsv(cols, bad)).toThrow();
      const d = new BatchDigester(cols);
      expect(d.addRowBinary(bad, new RowBinaryCanonical(cols))).toMatch(/^row 0: /);
    }
    for (const type of ['Array(String)', 'Float64', 'Map(String, String)'])
      expect(() => new RowBinaryCanonical([...cols, { name: 'x', type }])).toThrow(RangeError);
  });
});
