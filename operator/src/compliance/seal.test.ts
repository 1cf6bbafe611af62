import { createHash, generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { buildDayExportQuery } from './seal-export';
import { addDays, formatDay } from './seal-days';
import { verifySealFiles } from './seal-verify';
import {
  buildSealManifest,
  checkManifest,
  dayWindow,
  incompleteReason,
  lastCompleteDay,
  manifestBytes,
  signManifest,
  type SealFacts,
} from './seal-manifest';

const HOUR = 3_600_000;
const key = generateKeyPairSync('ed25519');

const facts: SealFacts = {
  pipeline: 'isp/fw',
  database: 'logs',
  table: 'fw',
  day: '2026-11-04',
  timeColumn: 'ts',
  columns: [
    { name: 'ts', type: "DateTime64(3, 'UTC')", source: 'ts' },
    { name: 'src_ip', type: 'IPv6' },
  ],
  export: { sha256: 'a'.repeat(64), rows: 3, bytes: 120 },
  heads: [
    {
      partition: 1,
      links: 1,
      first_offset: 5,
      last_offset: 9,
      prev_link: '0'.repeat(64),
      link: 'b'.repeat(64),
    },
    {
      partition: 0,
      links: 2,
      first_offset: 0,
      last_offset: 9,
      prev_link: '0'.repeat(64),
      link: 'c'.repeat(64),
    },
  ],
  checkpoints: [
    { id: 'f'.repeat(64), created_at: 20 },
    { id: 'e'.repeat(64), created_at: 10 },
  ],
  retentionMs: 730 * 24 * HOUR,
  createdAtMs: Date.UTC(2026, 10, 5, 1),
};

describe('days', () => {
  it('parses a UTC calendar day into a half-open window and refuses anything else', () => {
    expect(dayWindow('2026-11-04')).toEqual({
      fromMs: Date.UTC(2026, 10, 4),
      toMs: Date.UTC(2026, 10, 5),
    });
    for (const bad of ['2026-11-31', '2026-1-04', '20261104', '2026-11-04T00:00', "2026-11-04'"])
      expect(() => dayWindow(bad)).toThrow('is not a date YYYY-MM-DD');
  });

  it('a day is complete only after its end plus the grace for late lines', () => {
    const end = Date.UTC(2026, 10, 5);
    expect(incompleteReason('2026-11-04', end + HOUR - 1, HOUR)).toContain('is not complete');
    expect(incompleteReason('2026-11-04', end + HOUR, HOUR)).toBeNull();
    expect(lastCompleteDay(end + HOUR - 1, HOUR)).toBe('2026-11-03');
    expect(lastCompleteDay(end + HOUR, HOUR)).toBe('2026-11-04');
  });
});

describe('days in a time zone', () => {
  it('Europe/Istanbul days start at 21:00 UTC the evening before', () => {
    expect(dayWindow('2026-11-04', 'Europe/Istanbul')).toEqual({
      fromMs: Date.UTC(2026, 10, 3, 21),
      toMs: Date.UTC(2026, 10, 4, 21),
    });
    expect(formatDay(Date.UTC(2026, 10, 3, 21), 'Europe/Istanbul')).toBe('2026-11-04');
    expect(formatDay(Date.UTC(2026, 10, 3, 20, 59, 59), 'Europe/Istanbul')).toBe('2026-11-03');
    // Complete once it ended (21:00 UTC) plus the grace.
    expect(lastCompleteDay(Date.UTC(2026, 10, 4, 21, 59), HOUR, 'Europe/Istanbul')).toBe('2026-11-03');
    expect(lastCompleteDay(Date.UTC(2026, 10, 4, 22), HOUR, 'Europe/Istanbul')).toBe('2026-11-04');
  });

  it('a DST change makes a local day 23 or 25 hours long; unknown zones are refused', () => {
    const spring = dayWindow('2026-03-29', 'Europe/Berlin');
    expect(spring).toEqual({ fromMs: Date.UTC(2026, 2, 28, 23), toMs: Date.UTC(2026, 2, 29, 22) });
    const autumn = dayWindow('2026-10-25', 'Europe/Berlin');
    expect(autumn.toMs - autumn.fromMs).toBe(25 * HOUR);
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
    expect(() => dayWindow('2026-11-04', 'Mars/Olympus')).toThrow('unknown time zone "Mars/Olympus"');
  });
});

describe('manifest', () => {
  it('is canonical, sorted, signed with a raw Ed25519 signature, and verifies only with the right key', () => {
    const m = buildSealManifest(facts, key.privateKey);
    expect(m.chain).toMatchObject({ links: 3 });
    expect(m.time_zone).toBe('UTC');
    expect(buildSealManifest({ ...facts, timeZone: 'Europe/Istanbul' }, key.privateKey)).toMatchObject({
      time_zone: 'Europe/Istanbul',
      from_ms: Date.UTC(2026, 10, 3, 21),
    });
    expect(m.chain.heads.map((h) => h.partition)).toEqual([0, 1]);
    expect(m.checkpoints.map((c) => c.created_at)).toEqual([10, 20]);
    expect(m.export).toMatchObject({ file: 'fw-2026-11-04.tsv.gz', format: 'logpipeline-canonical-tsv-v1' });
    expect(m.retention.horizon_ms).toBe(facts.createdAtMs - facts.retentionMs!);
    const bytes = manifestBytes(m);
    expect(bytes.toString()).not.toMatch(/[\n\r\t]|": |, "/);
    // Same facts, same bytes (whatever the input order).
    expect(
      manifestBytes(buildSealManifest({ ...facts, heads: [...facts.heads].reverse() }, key.privateKey)),
    ).toEqual(bytes);
    const sig = signManifest(bytes, key.privateKey);
    expect(sig).toHaveLength(64);
    expect(checkManifest(bytes, sig, key.publicKey).problem).toBeNull();
    const other = generateKeyPairSync('ed25519');
    expect(checkManifest(bytes, sig, other.publicKey).problem).toContain('not the trusted key');
    const edited = Buffer.from(bytes.toString().replace('"rows":3', '"rows":2'));
    expect(checkManifest(edited, sig, key.publicKey).problem).toBe(
      'Ed25519 signature over the manifest is invalid',
    );
    expect(checkManifest(Buffer.from(JSON.stringify(m, null, 1)), sig, key.publicKey).problem).toBe(
      'manifest is not canonical JSON',
    );
  });
});

describe('buildDayExportQuery', () => {
  it('selects the half-open day in canonical form with a total order', () => {
    const q = buildDayExportQuery({
      database: 'logs',
      table: 'fw',
      columns: facts.columns,
      timeColumn: 'ts',
      ...dayWindow('2026-11-04'),
      hasLine: false,
    });
    expect(q).toContain(
      `WHERE \`ts\` >= fromUnixTimestamp64Milli(toInt64(${Date.UTC(2026, 10, 4)})) AND \`ts\` < fromUnixTimestamp64Milli(toInt64(${Date.UTC(2026, 10, 5)}))`,
    );
    expect(q).toContain('ORDER BY kafka_partition, kafka_offset, l SETTINGS');
    expect(q).toMatch(/FORMAT TabSeparatedRaw$/);
    expect(() =>
      buildDayExportQuery({
        database: 'logs',
        table: 'fw;DROP',
        columns: [],
        timeColumn: 'ts',
        fromMs: 0,
        toMs: 1,
        hasLine: true,
      }),
    ).toThrow();
  });
});

describe('verifySealFiles', () => {
  const rows = '0\t1\t1762214400000\tabc\n0\t2\t1762214400001\tdef\n';
  function writeSeal(dir: string, body: string): void {
    const m = buildSealManifest(
      {
        ...facts,
        export: { sha256: createHash('sha256').update(rows).digest('hex'), rows: 2, bytes: rows.length },
      },
      key.privateKey,
    );
    const bytes = manifestBytes(m);
    fs.writeFileSync(path.join(dir, 'fw-2026-11-04.tsv.gz'), gzipSync(body));
    fs.writeFileSync(path.join(dir, 'fw-2026-11-04.manifest.json'), bytes);
    fs.writeFileSync(path.join(dir, 'fw-2026-11-04.manifest.sig'), signManifest(bytes, key.privateKey));
  }

  it('checks signature and export; a missing token, key or changed export is a finding', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'seal-unit-'));
    try {
      writeSeal(dir, rows);
      const good = await verifySealFiles(dir, { publicKey: key.publicKey });
      expect(good.problems).toEqual(['no timestamp token fw-2026-11-04.manifest.tst']);
      expect(good.export).toMatchObject({ rows: 2, bytes: rows.length });
      const noKey = await verifySealFiles(dir, {});
      expect(noKey.problems).toContain('signature not checked: give --public-key (or --no-signature-check)');
      writeSeal(dir, rows.replace('def', 'deg'));
      const changed = await verifySealFiles(dir, { publicKey: key.publicKey });
      expect(changed.problems.join('\n')).toMatch(/export SHA-256 [0-9a-f]{64} differs/);
      fs.writeFileSync(path.join(dir, 'fw-2026-11-04.tsv.gz'), 'not gzip');
      const broken = await verifySealFiles(dir, { publicKey: key.publicKey });
      expect(broken.problems.join('\n')).toContain('is not a valid gzip stream');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
