import { BatchDigester, digestTsv } from './canonical';
import { RowBinaryCanonical } from './canonical-rowbinary';

/** A custom schema whose time column is DateTime (seconds), not DateTime64. */
const SECONDS_COLUMNS = [
  { name: 'ts', type: 'DateTime' },
  { name: 'msg', type: 'String' },
  { name: 'kafka_offset', type: 'UInt64' },
];

/** 2026-01-01T00:00:00Z and one minute later, in epoch seconds. */
const FIRST_S = 1767225600;
const LAST_S = FIRST_S + 60;

function rowBinary(rows: Array<[number, string, number]>): Buffer {
  const parts: Buffer[] = [];
  for (const [ts, msg, offset] of rows) {
    const t = Buffer.alloc(4);
    t.writeUInt32LE(ts);
    const text = Buffer.from(msg);
    const o = Buffer.alloc(8);
    o.writeBigUInt64LE(BigInt(offset));
    parts.push(t, Buffer.from([text.length]), text, o);
  }
  return Buffer.concat(parts);
}

describe('time range of a DateTime (seconds) time column', () => {
  it('is epoch milliseconds on the TSV route', () => {
    const sum = digestTsv(SECONDS_COLUMNS, Buffer.from(`${LAST_S}\tb\t1\n${FIRST_S}\ta\t0\n`));
    expect(sum.minTsMs).toBe(FIRST_S * 1000);
    expect(sum.maxTsMs).toBe(LAST_S * 1000);
  });

  it('is epoch milliseconds on the RowBinary route', () => {
    const d = new BatchDigester(SECONDS_COLUMNS);
    const body = rowBinary([
      [LAST_S, 'b', 1],
      [FIRST_S, 'a', 0],
    ]);
    expect(d.addRowBinary(body, new RowBinaryCanonical(SECONDS_COLUMNS))).toBeNull();
    const sum = d.finish();
    expect(sum.minTsMs).toBe(FIRST_S * 1000);
    expect(sum.maxTsMs).toBe(LAST_S * 1000);
  });

  it('fits the integrity table (DateTime64(3) ends in 2299)', () => {
    const sum = digestTsv(SECONDS_COLUMNS, Buffer.from(`${FIRST_S}\ta\t0\n`));
    expect(sum.maxTsMs).toBeLessThan(Date.UTC(2300, 0, 1));
  });
});
