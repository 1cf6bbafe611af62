import { createHash, generateKeyPairSync } from 'node:crypto';
import { ChainState } from './chain-state';
import {
  checkContinuity,
  computeLink,
  LINK_VERSION,
  linkVersionOf,
  GENESIS_LINK,
  linkToken,
  linkTsvRow,
  type LinkRecord,
} from '../../../common/src/integrity/chain';
import {
  buildCheckpointPayload,
  canonicalJson,
  checkpointId,
  GENESIS_CHECKPOINT,
  keyFingerprint,
  signCheckpoint,
  verifyCheckpoint,
} from '../../../common/src/integrity/checkpoint';

const COLUMNS = [
  { name: 'ts', type: "DateTime64(3, 'UTC')" },
  { name: 'raw', type: 'String' },
  { name: 'kafka_partition', type: 'UInt16' },
  { name: 'kafka_offset', type: 'UInt64' },
  { name: 'kafka_line', type: 'UInt32' },
];

function tsv(partition: number, first: number, last: number, baseMs = 1767225600000): Buffer {
  let out = '';
  for (let o = first; o <= last; o++) out += `${(baseMs + o) / 1000}\tline ${o}\t${partition}\t${o}\t0\n`;
  return Buffer.from(out);
}

function sealOk(
  state: ChainState,
  partition: number,
  first: number,
  last: number,
  insertedAtMs = 1767225700000,
) {
  const sealed = state.seal({
    partition,
    firstOffset: first,
    lastOffset: last,
    insertedAtMs,
    batchToken: `t/${partition}/${first}-${last}/salt`,
    tsv: tsv(partition, first, last),
  });
  if (typeof sealed === 'string') throw new Error(sealed);
  return sealed;
}

const newState = () => new ChainState({ pipeline: 'isp/fw', table: 'fw', columns: COLUMNS });

describe('link hash', () => {
  const base: Omit<LinkRecord, 'link'> = {
    pipeline: 'isp/fw',
    table: 'fw',
    partition: 3,
    firstOffset: 100,
    lastOffset: 199,
    rowCount: 250,
    minTsMs: 1767225600000,
    maxTsMs: 1767225660000,
    batchDigest: 'ab'.repeat(32),
    prevLink: GENESIS_LINK,
    insertedAtMs: 1767225700123,
  };

  const fields = `${GENESIS_LINK}\n${'ab'.repeat(32)}\nisp/fw\nfw\n3\n100\n199\n250\n1767225600000\n1767225660000\n1767225700123\n`;
  const sha = (text: string) => createHash('sha256').update(text).digest('hex');

  it('is SHA-256 over the documented text, version 2 by default', () => {
    expect(LINK_VERSION).toBe(2);
    expect(computeLink(base)).toBe(sha(`logpipeline-link-v2\n${fields}`));
  });

  it('still computes version 1 byte for byte, and tells the versions apart', () => {
    expect(computeLink(base, 1)).toBe(sha(`logpipeline-link-v1\n${fields}`));
    expect(linkVersionOf({ ...base, link: computeLink(base, 1) })).toBe(1);
    expect(linkVersionOf({ ...base, link: computeLink(base) })).toBe(2);
    expect(linkVersionOf({ ...base, rowCount: 251, link: computeLink(base) })).toBe(0);
  });

  it.each(Object.keys(base))('changes when %s changes', (field) => {
    const v = (base as unknown as Record<string, unknown>)[field];
    const changed = {
      ...base,
      [field]: typeof v === 'number' ? v + 1 : `${v}`.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')),
    };
    expect(computeLink(changed)).not.toBe(computeLink(base));
  });

  it('renders the integrity row as TSV with DateTime64 as seconds.millis', () => {
    expect(linkTsvRow({ ...base, link: computeLink(base) })).toBe(
      `isp/fw\tfw\t3\t100\t199\t250\t1767225600.000\t1767225660.000\t${'ab'.repeat(32)}\t${GENESIS_LINK}\t${computeLink(base)}\t1767225700.123\n`,
    );
  });
});

describe('ChainState', () => {
  it('chains batches per partition from genesis', () => {
    const s = newState();
    s.restore(0, []);
    s.restore(1, []);
    const a = sealOk(s, 0, 0, 9);
    const b = sealOk(s, 0, 10, 19);
    const c = sealOk(s, 1, 0, 4);
    expect(a.status).toBe('new');
    expect(a.record?.prevLink).toBe(GENESIS_LINK);
    expect(checkContinuity(a.record!, b.record!)).toBeNull();
    expect(c.record?.prevLink).toBe(GENESIS_LINK);
    expect(a.record?.rowCount).toBe(10);
    expect(a.record?.minTsMs).toBe(1767225600000);
    expect(a.record?.maxTsMs).toBe(1767225600009);
    expect(b.token).toBe(linkToken('t/0/10-19/salt'));
    expect(s.heads()).toEqual([
      { partition: 0, lastOffset: 19, link: b.record!.link },
      { partition: 1, lastOffset: 4, link: c.record!.link },
    ]);
  });

  it('continues the chain after a restart from the stored links, and returns stored links for replayed ranges', () => {
    const first = newState();
    first.restore(0, []);
    const links = [sealOk(first, 0, 0, 9), sealOk(first, 0, 10, 19), sealOk(first, 0, 20, 29)].map(
      (x) => x.record!,
    );
    // A new owner restores from ClickHouse (newest first) and re-cuts the last two journaled batches.
    const second = newState();
    second.restore(0, [...links].reverse());
    const replay = sealOk(second, 0, 10, 19);
    expect(replay.status).toBe('replayed');
    expect(replay.record).toEqual(links[1]);
    const next = sealOk(second, 0, 30, 39);
    expect(next.status).toBe('new');
    expect(next.record?.prevLink).toBe(links[2].link);
    // Determinism: a fresh chain fed the same batches produces identical links.
    const third = newState();
    third.restore(0, []);
    expect(
      [sealOk(third, 0, 0, 9), sealOk(third, 0, 10, 19), sealOk(third, 0, 20, 29)].map((x) => x.record),
    ).toEqual(links);
  });

  it('flags a replayed range whose content differs, and overlapping ranges', () => {
    const s = newState();
    s.restore(0, []);
    const a = sealOk(s, 0, 0, 9);
    const changed = s.seal({
      partition: 0,
      firstOffset: 0,
      lastOffset: 9,
      insertedAtMs: 1,
      batchToken: 'x',
      tsv: tsv(0, 0, 9),
    });
    expect(typeof changed !== 'string' && changed.status).toBe('conflict');
    expect(typeof changed !== 'string' && changed.record).toEqual(a.record);
    expect(sealOk(s, 0, 5, 14).status).toBe('overlap');
  });

  it('leaves rows ClickHouse rejected out of the digest', () => {
    const s = newState();
    s.restore(0, []);
    const payload = tsv(0, 0, 4);
    const sealed = s.seal({
      partition: 0,
      firstOffset: 0,
      lastOffset: 4,
      insertedAtMs: 1,
      batchToken: 'x',
      tsv: payload,
      skipRows: [1, 4],
    });
    const lines = payload.toString().split('\n');
    const kept = Buffer.from([lines[0], lines[2], lines[3]].join('\n') + '\n');
    const expected = newState();
    expected.restore(0, []);
    const direct = expected.seal({
      partition: 0,
      firstOffset: 0,
      lastOffset: 4,
      insertedAtMs: 1,
      batchToken: 'x',
      tsv: kept,
    });
    expect(typeof sealed !== 'string' && sealed.record).toEqual(typeof direct !== 'string' && direct.record);
    expect(typeof sealed !== 'string' && sealed.record?.rowCount).toBe(3);
    const bad = newState();
    bad.restore(0, []);
    expect(
      bad.seal({
        partition: 0,
        firstOffset: 0,
        lastOffset: 4,
        insertedAtMs: 1,
        batchToken: 'x',
        tsv: payload,
        skipRows: [9],
      }),
    ).toMatch(/beyond/);
  });

  it('refuses partitions it has not restored and writes no link for empty batches', () => {
    const s = newState();
    expect(
      s.seal({
        partition: 7,
        firstOffset: 0,
        lastOffset: 0,
        insertedAtMs: 0,
        batchToken: 'x',
        tsv: Buffer.alloc(0),
      }),
    ).toMatch(/no restored chain state/);
    s.restore(7, []);
    const empty = s.seal({
      partition: 7,
      firstOffset: 0,
      lastOffset: 0,
      insertedAtMs: 0,
      batchToken: 'x',
      tsv: Buffer.alloc(0),
    });
    expect(typeof empty !== 'string' && empty.status).toBe('empty');
    expect(s.heads()).toEqual([]);
    s.forget([7]);
    expect(s.owns(7)).toBe(false);
  });
});

describe('checkpoints', () => {
  const { privateKey } = generateKeyPairSync('ed25519');
  const other = generateKeyPairSync('ed25519');
  const payload = buildCheckpointPayload({
    pipeline: 'isp/fw',
    database: 'logs',
    table: 'fw',
    createdAtMs: 1767225600000,
    key: privateKey,
    columns: COLUMNS,
    timeColumn: 'ts',
    heads: [
      { partition: 2, lastOffset: 10, link: 'b'.repeat(64) },
      { partition: 0, lastOffset: 5, link: 'a'.repeat(64) },
    ],
  });
  const text = canonicalJson(payload);
  const sig = signCheckpoint(text, privateKey);

  it('serialises canonically: sorted keys, no whitespace, heads by partition', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 'x', c: null }] })).toBe('{"a":[{"c":null,"d":"x"}],"b":1}');
    expect(text.startsWith('{"columns":[{"name":"ts"')).toBe(true);
    expect(payload.heads.map((h) => h.partition)).toEqual([0, 2]);
    expect(() => canonicalJson({ x: 1.5 })).toThrow(RangeError);
  });

  it('verifies with the signing key and fails with another key, a changed text or a bad signature', () => {
    const pub = other.publicKey;
    expect(verifyCheckpoint(text, sig, privateKey).problem).toBeNull();
    expect(verifyCheckpoint(text, sig, pub).problem).toBe('unknown-key');
    const forged = canonicalJson({ ...payload, key: keyFingerprint(pub) });
    expect(verifyCheckpoint(forged, signCheckpoint(forged, privateKey), pub).problem).toBe('bad-signature');
    const tampered = text.replace('"last_offset":10', '"last_offset":11');
    expect(verifyCheckpoint(tampered, sig, privateKey).problem).toBe('bad-signature');
    expect(verifyCheckpoint(JSON.stringify(payload, null, 1), sig, privateKey).problem).toBe('not-canonical');
    expect(verifyCheckpoint('{', sig, privateKey).problem).toBe('malformed');
  });

  it('v2 links to the previous checkpoint and signs interval and retention; a bad prev is malformed', () => {
    const v2 = buildCheckpointPayload({
      pipeline: 'isp/fw',
      database: 'logs',
      table: 'fw',
      createdAtMs: 1767225900000,
      key: privateKey,
      columns: COLUMNS,
      timeColumn: 'ts',
      heads: [{ partition: 0, lastOffset: 9, link: 'c'.repeat(64) }],
      prev: checkpointId(text),
      intervalMs: 300_000,
      retentionMs: 730 * 86_400_000,
    });
    expect(v2).toMatchObject({
      v: 2,
      prev: checkpointId(text),
      interval_ms: 300_000,
      retention_ms: 63_072_000_000,
    });
    expect(checkpointId(text)).toBe(createHash('sha256').update(text).digest('hex'));
    const t2 = canonicalJson(v2);
    expect(verifyCheckpoint(t2, signCheckpoint(t2, privateKey), privateKey).problem).toBeNull();
    const bad = canonicalJson({ ...v2, prev: 'x' });
    expect(verifyCheckpoint(bad, signCheckpoint(bad, privateKey), privateKey).problem).toBe('malformed');
    // v1 (no prev) still verifies; genesis is 64 zeros.
    expect(payload.v).toBe(1);
    expect(GENESIS_CHECKPOINT).toBe('0'.repeat(64));
  });
});
