import { createHash } from 'node:crypto';
import {
  computeLink,
  GENESIS_LINK,
  type LinkRecord,
  type LinkVersion,
} from '../../../common/src/integrity/chain';
import { checkLinks, type LinkPassSource } from './verify-links';
import { FindingSink } from './verify-report';

/** A table whose time column is DateTime: v1 recorded its range as seconds × 10^6, v2 as epoch ms. */
const SECOND = 1767225600;
const hex = (c: string) => c.repeat(64);

function chain(versions: LinkVersion[]): LinkRecord[] {
  const out: LinkRecord[] = [];
  let prevLink = GENESIS_LINK;
  versions.forEach((version, i) => {
    const scale = version === 1 ? 1_000_000 : 1000;
    const fields = {
      pipeline: 'isp/fw',
      table: 'fw',
      partition: 0,
      firstOffset: i * 10,
      lastOffset: i * 10 + 9,
      rowCount: 10,
      minTsMs: (SECOND + i * 60) * scale,
      maxTsMs: (SECOND + i * 60 + 59) * scale,
      batchDigest: hex(String(i + 1)),
      prevLink,
      insertedAtMs: (SECOND + i * 60 + 61) * 1000,
    };
    const link = computeLink(fields, version);
    out.push({ ...fields, link });
    prevLink = link;
  });
  return out;
}

async function findings(links: LinkRecord[]): Promise<FindingSink> {
  const sink = new FindingSink();
  const src: LinkPassSource = {
    links: (async function* () {
      yield* links;
    })(),
    heads: (async function* () {})(),
    predecessor: async () => undefined,
    between: async () => [],
    lookup: async () => new Map(),
  };
  await checkLinks(src, sink, undefined);
  return sink;
}

describe('link versions in verify', () => {
  it('a v1 link is the documented v1 text byte for byte', () => {
    const [l] = chain([1]);
    const text =
      `logpipeline-link-v1\n${GENESIS_LINK}\n${hex('1')}\nisp/fw\nfw\n0\n0\n9\n10\n` +
      `${SECOND * 1_000_000}\n${(SECOND + 59) * 1_000_000}\n${(SECOND + 61) * 1000}\n`;
    expect(l.link).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
  });

  it('verifies an old v1 chain, a v2 chain, and a v1 chain continued in v2 (an upgraded worker)', async () => {
    for (const versions of [
      [1, 1, 1],
      [2, 2],
      [1, 1, 2, 2],
    ] as LinkVersion[][]) {
      const sink = await findings(chain(versions));
      expect({ versions, findings: sink.findings }).toEqual({ versions, findings: [] });
    }
  });

  it('notes a v1 link after a v2 link (an older worker during a rolling upgrade) and names an altered v1 link', async () => {
    const sink = await findings(chain([2, 1]));
    expect(sink.findings).toEqual([]);
    expect(sink.notices.map((n) => [n.kind, n.firstOffset])).toEqual([['info', 10]]);
    expect(sink.notices[0].detail).toMatch(/version 1 link follows a version 2 link/);

    const old = chain([1, 1]);
    const altered = await findings([old[0], { ...old[1], maxTsMs: old[1].maxTsMs + 1 }]);
    expect(altered.findings.map((f) => [f.kind, f.firstOffset])).toEqual([['link-modified', 10]]);
  });
});
