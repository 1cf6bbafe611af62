/**
 * The generated RowBinary row writer: byte-identical to the closure loop it replaces (rows, row
 * index and dead-letter reasons) on a plan with every type and source, and its source text cannot
 * be changed by anything a LogPipeline spells (column names, sources, field keys, static values).
 */
import { generateSampleLines } from '../../../test/fixtures/samples';
import { COLUMNS, EDGE_LINES, INGEST, STATIC } from '../../../test/fixtures/rowbinary-columns';
import { LINE_UTF8_VALID, LineParser } from '../parse/parser';
import { createTimeZone } from '../parse/timezone';
import { ColumnInput, ColumnPlan, compileColumnPlan } from './column-plan';
import { REFERENCE_COLUMNS } from './reference-columns';
import { buildRowWriterSource } from './rowbinary-codegen';
import { RowBinaryRowWriter } from './rowbinary-writer';

const tz = createTimeZone('Europe/Istanbul');

/** Extra standard sources in other types than the reference plan uses. */
const OTHER_TYPES: ColumnInput[] = [
  { name: 'sender4', type: 'IPv4', source: 'sender_ip' },
  { name: 'sender_text', type: 'Nullable(String)', source: 'sender_ip' },
  { name: 'action_text', type: 'String', source: 'action' },
  { name: 'action_num', type: 'Int16', source: 'action' },
  { name: 'vendor_enum', type: "Enum8('fortigate' = 1, 'paloalto' = 2)", source: 'vendor' },
  { name: 'device_n', type: 'Nullable(String)', source: 'device' },
  { name: 'dst4', type: 'Nullable(IPv4)', source: 'dst_ip' },
  { name: 'rule_num', type: 'Nullable(UInt32)', source: 'rule' },
  { name: 'bytes_text', type: 'String', source: 'bytes' },
  { name: 'partition8', type: 'UInt8', source: 'kafka_partition' },
  { name: 'offset32', type: 'Int32', source: 'kafka_offset' },
  { name: 'ingest_s', type: 'DateTime', source: 'ingest_time' },
  { name: 'raw_n', type: 'Nullable(String)', source: 'raw' },
  { name: 'topic_text', type: 'String', source: 'kafka_topic' },
];

function planOf(columns: readonly ColumnInput[]): ColumnPlan {
  const scratch = new RowBinaryRowWriter({ columns: [], names: [], needsFields: false }, tz, 256);
  return compileColumnPlan(columns, STATIC, (col, value) => scratch.encodeStatic(col, value) as Buffer);
}

describe('generated RowBinary row writer', () => {
  it('writes the same bytes, rows and dead-letter reasons as the closure loop', () => {
    const plan = planOf([...COLUMNS, ...OTHER_TYPES]);
    const parser = new LineParser({ format: 'auto', timezone: 'Europe/Istanbul', collectFields: true });
    parser.setReferenceTime(INGEST);
    const generated = new RowBinaryRowWriter(plan, tz, 1024);
    const loop = new RowBinaryRowWriter(plan, tz, 1024, false);
    const lines = [
      ...EDGE_LINES.map((l) => Buffer.from(l)),
      ...generateSampleLines('mix', 2000, { seed: 5, malformedRatio: 0.1 }),
    ];
    let rows = 0;
    const reasons = new Set<string>();
    lines.forEach((line, i) => {
      const parsed = parser.parse(line, 0, line.length, LINE_UTF8_VALID);
      if (parsed !== null) return;
      const results = [generated, loop].map((w) => {
        w.row.ingestTimeMs = INGEST;
        w.row.topic = Buffer.from('fw\\logs');
        w.row.partition = 5;
        w.row.offset = i * 2_000_003; // beyond Int32 from line 1074 on
        w.row.line = i % 3;
        w.row.sender =
          i % 4 === 0 ? Buffer.from('192.0.2.9') : i % 4 === 1 ? Buffer.from('2001:db8::1') : Buffer.alloc(0);
        return w.writeRow(parser.record);
      });
      expect(results[0]).toBe(results[1]);
      if (results[0] === null) rows++;
      else reasons.add(results[0]);
    });
    // Both outcomes were exercised: stored rows and values that do not fit their column.
    expect(rows).toBeGreaterThan(100);
    expect(reasons).toContain('bad_value:offset32');
    expect(reasons).toContain('bad_value:dst4');
    expect(reasons.size).toBeGreaterThan(5);
    expect(generated.out.rowIndex()).toEqual(loop.out.rowIndex());
    expect(
      generated.out.buf.subarray(0, generated.out.pos).equals(loop.out.buf.subarray(0, loop.out.pos)),
    ).toBe(true);
  });

  it('writes every column of the reference plan inline (no closure writer left)', () => {
    expect(buildRowWriterSource(planOf(REFERENCE_COLUMNS)).fallbacks).toEqual([]);
  });

  it('builds the same source whatever the columns are called or hold', () => {
    const benign = planOf([...COLUMNS, ...OTHER_TYPES]);
    const hostile = planOf([...COLUMNS, ...OTHER_TYPES]);
    const evil = "x'); }); process.exit(7); (function(){ `${globalThis}` //\n*/";
    hostile.columns.forEach((c, i) => {
      c.name = `${evil}${i}`;
      c.badValue = `bad_value:${evil}`;
      c.sourceText = `field:${evil}`;
      if (c.fieldKey !== null) c.fieldKey = Buffer.from(evil);
      if (c.staticValue !== null) c.staticValue = Buffer.from(evil);
    });
    hostile.names = hostile.columns.map((c) => c.name);
    const source = buildRowWriterSource(hostile).source;
    expect(source).toBe(buildRowWriterSource(benign).source);
    expect(source).not.toContain('process');
    expect(source).not.toContain('field:');
  });
});
