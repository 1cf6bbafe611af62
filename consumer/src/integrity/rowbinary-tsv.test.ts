import { BatchEncoder, MessageInput } from '../encode/batch';
import { REFERENCE_COLUMNS } from '../encode/reference-columns';
import { generateSampleLines } from '../../../test/fixtures/samples';
import { BatchDigester } from '../../../common/src/integrity/canonical';
import { RowBinaryToTsv } from './rowbinary-tsv';

const INGEST = Date.UTC(2024, 0, 15, 12, 0, 0, 789);

describe('integrity digest of RowBinary batches', () => {
  it('equals the digest of the TabSeparated batch of the same lines', () => {
    const lines = [
      Buffer.from('date=2024-01-15 time=10:00:00 srcip=10.0.0.1 dstip=2001:db8::5 msg="tab\there \\\\ nl"'),
      ...generateSampleLines('mix', 2000, { seed: 9, malformedRatio: 0.05 }),
    ];
    const messages: MessageInput[] = lines.map((value, i) => ({
      value,
      topic: 'fw',
      partition: 1,
      offset: 500 + i,
    }));
    const opts = { parser: { format: 'auto' as const, timezone: 'UTC' }, columns: REFERENCE_COLUMNS };
    const tsv = new BatchEncoder(opts).encode(messages, INGEST);
    const tsvDigest = new BatchDigester(REFERENCE_COLUMNS);
    expect(tsvDigest.addTsv(Buffer.from(tsv.data))).toBeNull();
    const want = tsvDigest.finish();
    const rb = new BatchEncoder({ ...opts, format: 'RowBinary' }).encode(messages, INGEST);
    const d = new BatchDigester(REFERENCE_COLUMNS);
    expect(d.addTsv(new RowBinaryToTsv(REFERENCE_COLUMNS).convert(rb.data))).toBeNull();
    expect(d.finish()).toEqual(want);
    expect(want.rows).toBeGreaterThan(1800);
  });
});
