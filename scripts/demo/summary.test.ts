import { summaryJson, summaryLines, type SummaryFacts } from './summary';

const facts: SummaryFacts = {
  pipeline: 'demo/firewall',
  targetRate: 20_000,
  linesPerMessage: 50,
  producedLines: 1_200_000,
  producedMessages: 24_000,
  producedBytes: 400 * 1024 * 1024,
  malformedLines: 6_000,
  failedSends: 0,
  insertedRows: 1_194_500,
  deadLetters: 5_500,
  productionMs: 60_000,
  endToEndMs: 64_000,
  drainMs: 4_000,
  maxReplicas: 3,
  interrupted: false,
  queryIpMentions: 41,
  queryIpRecords: 40,
  legalQuery: {
    ip: '192.168.4.17',
    from: '2026-12-02T10:00:00.000Z',
    to: '2026-12-02T10:02:00.000Z',
    rows: 40,
    latencyMs: 12.345,
    sample: [
      '2026-12-02 10:00:01.000  192.168.4.17:51000 -> 93.184.216.4:443  tcp accept  fortigate/FG100F-IST1',
    ],
    sql: 'SELECT …',
  },
};

describe('summary', () => {
  it('reports accounting, throughput and the legal query as JSON', () => {
    expect(summaryJson(facts)).toEqual({
      demoSummary: true,
      pipeline: 'demo/firewall',
      produced: 1_200_000,
      producedMessages: 24_000,
      producedBytes: 400 * 1024 * 1024,
      malformed: 6_000,
      failedSends: 0,
      inserted: 1_194_500,
      deadLettered: 5_500,
      complete: true,
      productionSeconds: 60,
      producedPerSecond: 20_000,
      endToEndSeconds: 64,
      drainSeconds: 4,
      throughputPerSecond: 18_750,
      maxReplicas: 3,
      interrupted: false,
      receiver: null,
      legalQuery: {
        ip: '192.168.4.17',
        from: '2026-12-02T10:00:00.000Z',
        to: '2026-12-02T10:02:00.000Z',
        rows: 40,
        latencyMs: 12.3,
        mentions: 41,
        expected: 40,
      },
    });
  });

  it('prints the same facts for people', () => {
    const text = summaryLines(facts).join('\n');
    expect(text).toContain(
      'produced       1,200,000 lines in 24,000 messages of 50 lines, 400.0 MiB before LZ4',
    );
    expect(text).toContain('20,000 lines/s over 60s (target 20,000/s); 6,000 deliberately malformed');
    expect(text).toContain('inserted       1,194,500 rows (99.54%)');
    expect(text).toContain('dead-lettered  5,500 lines (0.46%)');
    expect(text).toContain('every produced line is stored or dead-lettered');
    expect(text).toContain(
      '64s from first send to last row (drain after production: 4s), 18,750 lines/s through the pipeline',
    );
    expect(text).toContain(
      'all records of 192.168.4.17 between 2026-12-02T10:00:00.000Z and 2026-12-02T10:02:00.000Z',
    );
    expect(text).toContain(
      '40 records in 12.3 ms (as expected: the well-formed lines sent with it as source or destination; ' +
        '1 more line mentions it in other fields)',
    );
    expect(text).toContain('192.168.4.17:51000 -> 93.184.216.4:443');
  });

  it('says MISMATCH when the legal query returns other than the records sent', () => {
    const text = summaryLines({ ...facts, queryIpRecords: 41, queryIpMentions: 41 }).join('\n');
    expect(text).toContain('40 records in 12.3 ms (MISMATCH: expected 41: the well-formed lines sent');
    expect(text).not.toContain('more line');
    expect(summaryJson({ ...facts, queryIpRecords: 41 }).legalQuery).toMatchObject({
      rows: 40,
      expected: 41,
    });
  });

  it('explains a shortfall when everything was processed', () => {
    const text = summaryLines({ ...facts, insertedRows: facts.insertedRows - 1 }).join('\n');
    expect(text).toContain('MISMATCH: 1,199,999 stored + dead-lettered vs 1,200,000 produced (-1)');
    expect(text).toContain('the group committed every message');
    expect(summaryLines(facts).join('\n')).not.toContain('the group committed every message');
  });

  it('flags a mismatch, a drain that never finished and a failed legal query', () => {
    const bad: SummaryFacts = {
      ...facts,
      insertedRows: 1_000_000,
      endToEndMs: undefined,
      drainMs: undefined,
      legalQuery: undefined,
      legalQueryError: 'Table missing',
      interrupted: true,
    };
    const json = summaryJson(bad);
    expect(json.complete).toBe(false);
    expect(json.endToEndSeconds).toBeNull();
    expect(json.throughputPerSecond).toBeNull();
    expect(json.legalQuery).toEqual({ error: 'Table missing' });
    const text = summaryLines(bad).join('\n');
    expect(text).toContain('summary of demo/firewall (interrupted)');
    expect(text).toContain('MISMATCH: 1,005,500 stored + dead-lettered vs 1,200,000 produced (-194,500)');
    expect(text).toContain('not everything was stored within the drain timeout');
    expect(text).toContain('legal query    failed: Table missing');
  });
});
