import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { LinkRecord } from '../../../common/src/integrity/chain';
import { resolved } from '../../../test/fixtures/clickhouse-testing';
import { buildCanonicalRowsQuery, canonicalExpression, windowCondition } from './canonical-sql';
import { parseArgs, parseTime, UsageError } from './cli-options';
import { buildLegalQuery, buildNatQuery, legalQueryParams, natQueryParams } from './legal-query';
import { lineBlocks, textLines } from './line-stream';
import { checkRetention, RETENTION_BELOW_MINIMUM } from './retention';
import { buildHeadLookupQuery, buildHullQuery, buildLinksQuery } from './verify-queries';
import { retentionFromEngineFull } from './verify-table';
import { FindingSink } from './verify-report';
import { LinkQueue } from './verify-link-queue';
import { RowChecker } from './verify-rows';

describe('canonical SQL', () => {
  it.each([
    ["DateTime64(3, 'UTC')", 'toString(toUnixTimestamp64Milli(`c`))'],
    ['DateTime', 'toString(toUnixTimestamp(`c`))'],
    ['IPv4', 'lower(hex(toIPv6(`c`)))'],
    ['IPv6', 'lower(hex(`c`))'],
    ['UInt64', 'toString(`c`)'],
    ['Nullable(UInt16)', "ifNull(toString(`c`), '\\\\N')"],
  ])('renders %s', (type, sql) => expect(canonicalExpression({ name: 'c', type })).toBe(sql));

  it('escapes strings like the encoder: backslash first, then tab, newline, carriage return', () => {
    expect(canonicalExpression({ name: 'raw', type: 'LowCardinality(String)' })).toBe(
      "replaceAll(replaceAll(replaceAll(replaceAll(toString(`raw`), '\\\\', '\\\\\\\\'), '\\t', '\\\\t'), '\\n', '\\\\n'), '\\r', '\\\\r')",
    );
  });

  it('rejects unsupported types and bad identifiers', () => {
    expect(() => canonicalExpression({ name: 'x', type: 'Float64' })).toThrow();
    expect(() => canonicalExpression({ name: 'x`; DROP', type: 'String' })).toThrow(/must match/);
  });

  it('builds the ordered, windowed row query with numeric literals only', () => {
    const sql = buildCanonicalRowsQuery({
      database: 'logs',
      table: 'fw',
      columns: [{ name: 'ts', type: 'DateTime' }],
      timeColumn: 'ts',
      window: { fromMs: 1000, toMs: 2000 },
      hasLine: true,
    });
    expect(sql).toContain(
      'FROM `logs`.`fw` WHERE `ts` >= fromUnixTimestamp64Milli(toInt64(1000)) AND `ts` <= fromUnixTimestamp64Milli(toInt64(2000))',
    );
    expect(sql).toContain('ORDER BY `kafka_partition`, `kafka_offset`, `kafka_line`');
    expect(sql.endsWith('FORMAT TabSeparatedRaw')).toBe(true);
    // Without a line column the rows of one message are ordered by their canonical text.
    const noLine = buildCanonicalRowsQuery({
      database: 'logs',
      table: 'fw',
      columns: [{ name: 'ts', type: 'DateTime' }],
      timeColumn: 'ts',
      window: {},
      hasLine: false,
    });
    expect(noLine).toContain(
      'ORDER BY `kafka_partition`, `kafka_offset`, concat(toString(toUnixTimestamp(`ts`))) SETTINGS',
    );
    expect(windowCondition('ts', {})).toBe('1');
    expect(() => windowCondition('ts', { fromMs: 1.5 })).toThrow(RangeError);
  });
});

describe('verify queries', () => {
  const t = {
    database: 'logs',
    table: 'fw',
    integrityTable: 'fw_integrity',
    checkpointTable: 'fw_checkpoints',
  };
  it('filter by table, pipeline and window overlap', () => {
    expect(buildLinksQuery({ ...t, pipeline: 'isp/fw' }, { fromMs: 5 })).toContain(
      "WHERE table_name = 'fw' AND pipeline = 'isp/fw' AND `max_ts` >= fromUnixTimestamp64Milli(toInt64(5)) ORDER BY `partition`, first_offset",
    );
    expect(buildHullQuery(t, {})).toContain("WHERE table_name = 'fw' AND 1");
    expect(
      buildHeadLookupQuery(t, [
        { partition: 1, lastOffset: 9 },
        { partition: 2, lastOffset: 19 },
      ]),
    ).toContain('IN ((1, 9), (2, 19))');
  });
  it('refuses a pipeline name that is not namespace/name', () => {
    expect(() => buildLinksQuery({ ...t, pipeline: "x' OR 1=1 --" }, {})).toThrow(/namespace\/name/);
    expect(() => buildHeadLookupQuery(t, [{ partition: -1, lastOffset: 0 }])).toThrow(RangeError);
  });
  it('reads the delete delay from engine_full', () => {
    expect(
      retentionFromEngineFull(
        'MergeTree PARTITION BY toYYYYMMDD(ts) ORDER BY (src_ip, ts) TTL toDateTime(ts) + toIntervalDay(730) SETTINGS index_granularity = 8192',
      ),
    ).toBe(730 * 86_400_000);
    expect(
      retentionFromEngineFull(
        "MergeTree ORDER BY a TTL toDateTime(ts) + toIntervalDay(7) TO DISK 'cold', toDateTime(ts) + toIntervalDay(30)",
      ),
    ).toBe(30 * 86_400_000);
    expect(retentionFromEngineFull('MergeTree ORDER BY a SETTINGS index_granularity = 8192')).toBeUndefined();
  });
});

describe('retention check', () => {
  it('warns below 180 days only', () => {
    expect(checkRetention(resolved())).toBeNull();
    expect(checkRetention(resolved({ retention: { deleteAfter: '180d' } }))).toBeNull();
    const w = checkRetention(resolved({ retention: { deleteAfter: '90d' } }));
    expect(w).toMatchObject({
      reason: RETENTION_BELOW_MINIMUM,
      deleteAfterMs: 90 * 86_400_000,
      minimumMs: 180 * 86_400_000,
    });
    expect(w?.message).toContain('90d');
  });
});

describe('legal query', () => {
  it('binds the address and the window, and uses one branch per column', () => {
    const sql = buildLegalQuery({ database: 'logs', table: 'fw' });
    expect(sql).toContain('WHERE `src_ip` = {ip:IPv6} AND `ts` >= fromUnixTimestamp64Milli({from:Int64})');
    expect(sql).toContain(
      'UNION ALL SELECT * FROM `logs`.`fw` WHERE `dst_ip` = {ip:IPv6} AND `src_ip` != {ip:IPv6}',
    );
    expect(buildLegalQuery({ database: 'logs', table: 'fw' }, 'or', 10)).toMatch(
      /\(`src_ip` = \{ip:IPv6\} OR `dst_ip` = \{ip:IPv6\}\).* ORDER BY `ts` LIMIT 10$/,
    );
    expect(legalQueryParams('2001:db8::1', 1, 2)).toEqual({ ip: '2001:db8::1', from: 1, to: 2 });
    expect(() => legalQueryParams("1.2.3.4' OR 1", 1, 2)).toThrow(/not an IPv4/);
    expect(() => legalQueryParams('1.2.3.4', 3, 2)).toThrow(/from <= to/);
  });

  it('asks the NAT question with the idx_nat_src expression when a port is given', () => {
    const sql = buildNatQuery({ database: 'logs', table: 'fw' }, true, 5);
    expect(sql).toBe(
      'SELECT * FROM `logs`.`fw` WHERE `nat_src_ip` = {nat_ip:IPv6} AND `nat_src_port` = {nat_port:UInt16} ' +
        'AND cityHash64(`nat_src_ip`, `nat_src_port`) = cityHash64({nat_ip:IPv6}, {nat_port:UInt16}) ' +
        'AND `ts` >= fromUnixTimestamp64Milli({from:Int64}) AND `ts` <= fromUnixTimestamp64Milli({to:Int64}) ORDER BY `ts` LIMIT 5',
    );
    expect(buildNatQuery({ database: 'logs', table: 'fw' }, false)).not.toContain('nat_port');
    expect(natQueryParams('203.0.113.5', 40001, 1, 2)).toEqual({
      nat_ip: '203.0.113.5',
      nat_port: 40001,
      from: 1,
      to: 2,
    });
    expect(natQueryParams('203.0.113.5', undefined, 1, 2)).toEqual({ nat_ip: '203.0.113.5', from: 1, to: 2 });
    expect(() => natQueryParams('203.0.113.5', 70000, 1, 2)).toThrow(/1\.\.65535/);
    expect(() => natQueryParams('203.0.113.5; DROP', 1, 1, 2)).toThrow(/not an IPv4/);
  });
});

describe('CLI options', () => {
  it('parses values, flags and times', () => {
    const a = parseArgs(['--table', 't', '--all', '--from=2026-01-02T03:04:05Z'], ['table', 'from'], ['all']);
    expect(a.values.get('table')).toBe('t');
    expect(a.flags.has('all')).toBe(true);
    expect(parseTime(a.values.get('from')!, 'from')).toBe(Date.UTC(2026, 0, 2, 3, 4, 5));
    expect(parseTime('2026-01-02 03:04:05', 'from')).toBe(Date.UTC(2026, 0, 2, 3, 4, 5));
    expect(parseTime('1767225600', 'from')).toBe(1767225600000);
    expect(parseTime('1767225600123', 'from')).toBe(1767225600123);
    expect(() => parseArgs(['--nope'], [], [])).toThrow(UsageError);
    expect(() => parseTime('yesterday', 'from')).toThrow(UsageError);
  });
});

describe('line framing', () => {
  it('reassembles lines split across chunks and closes a final unterminated line', async () => {
    const chunks = ['a\tb\nc', 'd\ne', 'f', 'g\nh'].map((s) => Buffer.from(s));
    const lines: string[] = [];
    for await (const line of textLines(Readable.from(chunks))) lines.push(line);
    expect(lines).toEqual(['a\tb', 'cd', 'efg', 'h']);
    let bytes = 0;
    for await (const b of lineBlocks(Readable.from(chunks))) bytes += b.end - b.start;
    expect(bytes).toBe(13);
  });
});

describe('row pass', () => {
  const rows = (p: number, first: number, last: number) =>
    Array.from({ length: last - first + 1 }, (_, i) => `row ${p}/${first + i}\n`);
  const link = (p: number, first: number, last: number, tsMs = 1000): LinkRecord => ({
    pipeline: 'isp/fw',
    table: 'fw',
    partition: p,
    firstOffset: first,
    lastOffset: last,
    rowCount: last - first + 1,
    minTsMs: tsMs,
    maxTsMs: tsMs,
    batchDigest: createHash('sha256')
      .update(rows(p, first, last).join(''))
      .digest('hex'),
    prevLink: '',
    link: '',
    insertedAtMs: 0,
  });
  async function run(lines: string[], links: LinkRecord[], horizonMs?: number): Promise<FindingSink> {
    const sink = new FindingSink();
    const checker = new RowChecker(
      new LinkQueue(
        (async function* () {
          yield* links;
        })(),
      ),
      sink,
      horizonMs,
    );
    // Lines are fed in two blocks to cross a block boundary inside a batch.
    const text = Buffer.from(lines.join(''));
    const cut = text.indexOf(10, Math.floor(text.length / 2)) + 1;
    await checker.feed({ buf: text, start: 0, end: cut });
    if (cut < text.length) await checker.feed({ buf: text, start: cut, end: text.length });
    await checker.finish();
    expect(checker.stats.rows).toBe(lines.length);
    return sink;
  }
  const stream = (...parts: Array<[number, number, number]>) =>
    parts.flatMap(([p, a, b]) => rows(p, a, b).map((r, i) => `${p}\t${a + i}\t${r}`));

  it('verifies intact batches across partitions and block boundaries', async () => {
    const sink = await run(stream([0, 0, 9], [0, 10, 19], [1, 0, 4]), [
      link(0, 0, 9),
      link(0, 10, 19),
      link(1, 0, 4),
    ]);
    expect(sink.findings).toEqual([]);
  });
  it('classifies modified, missing, extra and uncovered rows by batch range', async () => {
    const lines = stream([0, 0, 9], [0, 10, 14], [0, 16, 19], [0, 25, 26], [1, 0, 4], [1, 4, 4]);
    lines[3] = lines[3].replace('row', 'ROW');
    const sink = await run(lines, [link(0, 0, 9), link(0, 10, 19), link(0, 30, 39), link(1, 0, 4)]);
    expect(sink.findings.map((f) => [f.kind, f.partition, f.firstOffset, f.lastOffset, f.foundRows])).toEqual(
      [
        ['modified', 0, 0, 9, 10],
        ['deleted', 0, 10, 19, 9],
        ['uncovered-rows', 0, 25, 26, 2],
        ['deleted', 0, 30, 39, 0],
        ['extra-rows', 1, 0, 4, 6],
      ],
    );
  });
  it('calls batches behind the retention horizon expired', async () => {
    const sink = await run(
      stream([0, 20, 29]),
      [link(0, 0, 9, 100), link(0, 10, 19, 100), link(0, 20, 29, 5000)],
      1000,
    );
    expect(sink.findings).toEqual([]);
    expect(sink.notices.map((n) => [n.kind, n.firstOffset])).toEqual([
      ['expired', 0],
      ['expired', 10],
    ]);
  });
});
