/**
 * The JSON byte scanner against the JSON.parse walk it stands in for: every line gives the same
 * record or the same dead-letter reason on both paths — the generated JSON corpus, the JSON lines
 * of the mixed corpus, and lines built to hit each case the scanner leaves to JSON.parse.
 */
import { generateSampleLines } from '../../../test/fixtures/samples';
import { parseJson, parseWithJsonParse } from './json';
import { hits, scanJsonLine } from './json-scan';
import { KeywordTable } from './keywords';
import { ParsedRecord } from './record';
import { recordToObject } from './to-json';
import { createTimeZone } from './timezone';

const ctx = { tz: createTimeZone('Europe/Istanbul'), refMs: Date.UTC(2024, 0, 20) };

function both(line: Buffer) {
  const results = [parseJson, parseWithJsonParse].map((parse) => {
    const rec = new ParsedRecord();
    rec.reset(line, 0, line.length);
    const reason = parse(line, 0, line.length, rec, ctx);
    return reason === null ? recordToObject(rec) : { deadLetter: reason };
  });
  return { fast: results[0], reference: results[1] };
}

/** Whether the scanner takes the line itself (rather than handing it to JSON.parse). */
function scanned(line: Buffer): boolean {
  const rec = new ParsedRecord();
  return scanJsonLine(line, 0, line.length, rec, new KeywordTable([['source.ip', 3]]), 6);
}

const TRICKY = [
  '{"src_ip":"10.0.0.1","src_ip":"10.0.0.2","message":"duplicate key: last value wins"}',
  '{"source":{"ip":"10.0.0.1"},"source":{"port":5},"message":"duplicate object"}',
  '{"1":"a","src":"10.0.0.9","0":"b"}',
  '{"bytes":[1,2],"message":["a","b"],"src_ip":"10.0.0.1"}',
  '{"bytes":1.5,"src_port":80.0,"ts":1.7e9}',
  '{"bytes":-0,"message":"minus zero"}',
  '{"bytes":12345678901234567890,"message":"beyond 2^53"}',
  '{"bytes":123456789012345,"sentbyte":"7","rcvdbyte":8,"message":"15 digits"}',
  '{"sentbyte":"7","rcvdbyte":8,"bytes_in":true,"message":"parts"}',
  '{"message":"tab\\tquote\\" slash\\/ back\\\\ nl\\n cr\\r bs\\b ff\\f","device":"d\\u00e7\\u4e2d\\u0000x"}',
  '{"message":"surrogate pair \\ud83d\\ude00","device":"lone \\ud800"}',
  '{"message":"bad escape \\x"}',
  '{"message":"bad unicode \\u12G4"}',
  '{"message":"raw control \u0001 char"}',
  '{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"src_ip":"10.0.0.1"}}}}}}},"message":"deep"}',
  '{"a":{"b":{"c":{"d":{"e":{"f":{"message":"depth six"}}}}}}}',
  '{"host":{"name":"h1"},"host.name":"h2","hostname":"h3"}',
  '  {"ts" : 1705312800 , "src" :"10.1.1.1"\t,"dst":null,"dst_ip":"10.2.2.2" }  ',
  '{"ts":1705312800123456,"level":"warning","severity":5,"action":"deny","proto":"6"}',
  '{"ts":"garbage","message":"bad clock"}',
  '{"ts":"garbage",}',
  '{"src_ip":"10.0.0.1"} trailing',
  '{"src_ip":"10.0.0.1"',
  '{"src_ip":"not an ip"}',
  '{"":1,"a":{"":{"src_port":9}},"src_port":"8"}',
  '{}',
  '[]',
  '"just a string"',
  '\ufeff{"src_ip":"10.0.0.1"}',
  '{"__proto__":{"src_ip":"10.0.0.1"},"message":"proto key"}',
  '{"src_ip":"10.0.0.1","message":"emoji 😀 ok","policy":01}',
  '{"event":{"action":"drop","severity":2},"network":{"transport":"udp"},"rule":{"name":"r1"}}',
  '{"source.ip":"10.0.0.1","source":{"ip":"10.0.0.2"}}',
  '{"bytes":true,"bytes_total":false,"total_bytes":"x","network.bytes":null}',
  '{"message":"' + 'x'.repeat(5000) + '"}',
  '{' + Array.from({ length: 80 }, (_, i) => `"k${i}":{"src_ip":"10.0.0.${i % 250}"}`).join(',') + '}',
];

describe('JSON byte scanner', () => {
  it('gives the same record as JSON.parse for every generated JSON line, and takes most of them', () => {
    const lines = generateSampleLines('json', 3000, { seed: 17, malformedRatio: 0.05 });
    let taken = 0;
    for (const line of lines) {
      const { fast, reference } = both(line);
      expect(fast).toEqual(reference);
      if (scanned(line)) taken++;
    }
    expect(taken).toBeGreaterThan(lines.length * 0.8);
  });

  it('agrees with JSON.parse on the JSON lines of the mixed corpus', () => {
    const lines = generateSampleLines('mix', 4000, { seed: 23, malformedRatio: 0.05 }).filter(
      (l) => l[0] === 123,
    );
    expect(lines.length).toBeGreaterThan(50);
    for (const line of lines) {
      const { fast, reference } = both(line);
      expect(fast).toEqual(reference);
    }
  });

  it.each(TRICKY.map((l) => [l.length > 120 ? `${l.slice(0, 100)}…` : l, l]))(
    'agrees with JSON.parse: %s',
    (_name, line) => {
      const { fast, reference } = both(Buffer.from(line, 'utf8'));
      expect(fast).toEqual(reference);
    },
  );

  it('scans plain lines itself and hands unusual ones to JSON.parse', () => {
    expect(scanned(Buffer.from('{"source":{"ip":"10.0.0.1","port":5},"message":"a \\"q\\" \\u00e7"}'))).toBe(
      true,
    );
    expect(hits.count).toBe(1);
    for (const line of [
      '{"src_ip":"a","src_ip":"b"}',
      '{"1":"a"}',
      '{"a":[1]}',
      '{"a":1.5}',
      '{"a":"\\ud83d\\ude00"}',
      '{"a\\u0062":1}',
      '{"a":1} x',
    ])
      expect(scanned(Buffer.from(line))).toBe(false);
  });
});
