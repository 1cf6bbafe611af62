/**
 * Fuzz: over a million random and mutated lines (truncation, byte flips, inserted quotes,
 * backslashes, NULs, invalid UTF-8, newlines) through `auto` and every explicit format. Nothing may
 * throw; every line is either parsed (with sane values) or dead-lettered with a snake_case reason;
 * the batch encoder accounts for every line and emits well-formed TSV.
 */
import { BatchEncoder, MessageInput } from '../encode/batch';
import { REFERENCE_COLUMNS } from '../encode/reference-columns';
import { LineParser } from './parser';
import { FORMAT_NAMES, ParsedRecord } from './record';
import { generateSampleLines, mutateLine, randomBytes, Rng } from '../../../test/fixtures/samples';
import { isPlausibleTimestamp } from './time';

const TOTAL_LINES = 1_000_000;
const REASON = /^[a-z0-9_]+(:[a-z0-9_.]+)?$/;

function spanOk(rec: ParsedRecord, span: ParsedRecord['device']): boolean {
  if (span.start < 0) return true;
  const limit = span.scratch ? rec.scratchLen : rec.lineEnd;
  const floor = span.scratch ? 0 : rec.lineStart;
  return span.start >= floor && span.end <= limit && span.end >= span.start;
}

const validVersion = (v: number): boolean => v === 0 || v === 4 || v === 6;

/** Invariants every parsed record must satisfy, whatever the input. */
function checkRecord(rec: ParsedRecord, line: Buffer): void {
  const ok =
    (rec.timestamp !== rec.timestamp || isPlausibleTimestamp(rec.timestamp)) &&
    rec.srcPort >= -1 &&
    rec.srcPort <= 65535 &&
    rec.dstPort >= -1 &&
    rec.dstPort <= 65535 &&
    validVersion(rec.srcIpVersion) &&
    validVersion(rec.dstIpVersion) &&
    (rec.srcIpVersion === 0) === rec.srcIp.start < 0 &&
    rec.action >= 0 &&
    rec.action <= 6 &&
    rec.severity >= -1 &&
    rec.severity <= 7 &&
    spanOk(rec, rec.device) &&
    spanOk(rec, rec.srcIp) &&
    spanOk(rec, rec.dstIp) &&
    spanOk(rec, rec.rule) &&
    spanOk(rec, rec.message) &&
    spanOk(rec, rec.natSrcIp) &&
    spanOk(rec, rec.natDstIp) &&
    rec.natSrcPort <= 65535 &&
    rec.natDstPort <= 65535;
  if (!ok) throw new Error(`record invariant broken for line ${JSON.stringify(line.toString('latin1'))}`);
}

describe('fuzz', () => {
  const r = new Rng(20240115);
  const seeds = FORMAT_NAMES.flatMap((f) => generateSampleLines(f, 1500, { seed: 99 }));

  it(`parses or dead-letters ${TOTAL_LINES} random and mutated lines without throwing`, () => {
    const auto = new LineParser({
      format: 'auto',
      timezone: 'Europe/Istanbul',
      collectFields: true,
      maxLineBytes: 2048,
    });
    const declarative = {
      kv: {
        fields: { src_ip: ['srcip', 'src'], dst_ip: ['dstip'], timestamp: ['eventtime'], action: ['action'] },
      },
      csv: {
        fields: { src_ip: 7, dst_ip: 8, timestamp: 1 },
        layoutField: 3,
        layouts: { THREAT: { src_ip: 7 } },
      },
      structuredData: {
        sdId: 'junos@2636.1.1.1.2.40',
        fields: { src_ip: ['source-address'], timestamp: ['x'] },
      },
    };
    const explicit = [
      ...FORMAT_NAMES.map(
        (format) => new LineParser({ format, timezone: 'America/New_York', collectFields: true }),
      ),
      ...(['kv', 'csv', 'structured-data'] as const).map(
        (format) => new LineParser({ format, timezone: 'UTC', collectFields: true, ...declarative }),
      ),
      new LineParser({
        format: 'auto',
        collectFields: true,
        rules: [
          { match: { prefix: 'date=' }, kv: declarative.kv },
          { match: { contains: ',TRAFFIC,' }, csv: declarative.csv },
          { structuredData: declarative.structuredData },
        ],
      }),
    ];
    let parsed = 0;
    let dead = 0;
    const reasons = new Map<string, number>();
    const run = (parser: LineParser, line: Buffer): void => {
      let reason: string | null;
      try {
        reason = parser.parse(line, 0, line.length);
      } catch (err) {
        throw new Error(`threw ${(err as Error).message} on ${JSON.stringify(line.toString('latin1'))}`);
      }
      if (reason === null) {
        parsed++;
        checkRecord(parser.record, line);
      } else {
        dead++;
        if (!REASON.test(reason)) throw new Error(`bad reason ${reason}`);
        reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
      }
    };
    for (let i = 0; i < TOTAL_LINES; i++) {
      const line = r.chance(0.15) ? randomBytes(r, 400) : mutateLine(seeds[r.int(0, seeds.length - 1)], r);
      run(auto, line);
      run(explicit[i % explicit.length], line);
    }
    expect(parsed + dead).toBe(TOTAL_LINES * 2);
    expect(parsed).toBeGreaterThan(TOTAL_LINES * 0.2);
    for (const reason of [
      'invalid_utf8',
      'unknown_format',
      'bad_kv',
      'bad_csv',
      'bad_cef',
      'bad_json',
      'invalid_ip',
      'empty_line',
    ]) {
      expect([reason, reasons.get(reason) ?? 0]).not.toEqual([reason, 0]);
    }
  });

  it('accounts for every line of multi-line messages and writes well-formed TSV', () => {
    const encoder = new BatchEncoder({
      parser: { format: 'auto', timezone: 'Europe/Istanbul', maxLineBytes: 1024 },
      columns: [
        ...REFERENCE_COLUMNS,
        { name: 'f', type: 'Nullable(UInt32)', source: 'field:duration' },
        { name: 'g', type: 'Nullable(IPv4)', source: 'field:transip' },
      ],
    });
    const messages: MessageInput[] = [];
    let expectedLines = 0;
    for (let m = 0; m < 40_000; m++) {
      const parts: Buffer[] = [];
      const n = r.int(1, 5);
      for (let k = 0; k < n; k++)
        parts.push(
          r.chance(0.5)
            ? seeds[r.int(0, seeds.length - 1)]
            : mutateLine(seeds[r.int(0, seeds.length - 1)], r),
        );
      const value = Buffer.concat(parts.flatMap((p, k) => (k === 0 ? [p] : [Buffer.of(10), p])));
      // Lines are what splitting on LF gives, minus one empty segment after a final LF.
      const segments =
        value.length === 0
          ? 1
          : value.toString('latin1').split('\n').length - (value[value.length - 1] === 10 ? 1 : 0);
      expectedLines += segments;
      messages.push({ value, topic: 't', partition: 0, offset: m });
    }
    const out = encoder.encode(messages, Date.UTC(2024, 0, 15));
    expect(out.lines).toBe(expectedLines);
    // Issue 12: blank lines are counted, not dead-lettered.
    expect(out.rows + out.deadLetters.length + out.blankLines).toBe(expectedLines);
    const text = out.data.toString('latin1');
    const rows = text.split('\n');
    expect(rows.pop()).toBe('');
    expect(rows.length).toBe(out.rows);
    const columns = encoder.plan.names.length;
    for (const row of rows)
      if (row.split('\t').length !== columns) throw new Error(`malformed row ${JSON.stringify(row)}`);
  });
});
