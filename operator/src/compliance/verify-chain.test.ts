import { GENESIS_LINK, makeLink, type LinkRecord } from '../../../common/src/integrity/chain';
import { GENESIS_CHECKPOINT } from '../../../common/src/integrity/checkpoint';
import type { CheckpointPassResult } from './verify-checkpoints';
import {
  checkCheckpointGaps,
  checkCheckpointPrevs,
  GAP_SLACK_MS,
  type CheckpointChainSource,
} from './verify-chain';
import { checkLinks, type LinkPassSource } from './verify-links';
import { FindingSink } from './verify-report';

const MIN = 60_000;
const id = (c: string) => c.repeat(64);

function pass(p: Partial<CheckpointPassResult>): CheckpointPassResult {
  return {
    checkpoints: 0,
    verified: 0,
    timestamps: 0,
    columnSets: [],
    ids: new Set(),
    prevs: [],
    times: [],
    ...p,
  };
}

function source(stored: string[], inserted: number[]): CheckpointChainSource {
  return {
    existing: async (ids) => new Set(ids.filter((i) => stored.includes(i))),
    insertedBetween: async (after, before) => {
      const hit = inserted.filter((t) => t > after && t < before);
      return { count: hit.length, firstMs: Math.min(...hit), lastMs: Math.max(...hit) };
    },
  };
}

describe('checkpoint chain', () => {
  it('accepts genesis, predecessors in the pass and stored ones; reports a missing predecessor', async () => {
    const sink = new FindingSink();
    const cp = pass({
      ids: new Set([id('a')]),
      prevs: [
        { prev: GENESIS_CHECKPOINT, createdAtMs: 1 },
        { prev: id('a'), createdAtMs: 2 },
        { prev: id('b'), createdAtMs: 3 },
        { prev: id('c'), createdAtMs: 4 },
      ],
    });
    await checkCheckpointPrevs(cp, source([id('b')], []), sink);
    expect(sink.findings.map((f) => [f.kind, f.checkpointAtMs])).toEqual([['checkpoint-missing', 4]]);
  });

  it('reports a stretch longer than two intervals (+ slack) only when links were inserted in it', async () => {
    const interval = 5 * MIN;
    const allowed = 2 * interval + GAP_SLACK_MS;
    const t0 = 1_000_000_000;
    const times = [t0, t0 + interval, t0 + interval + allowed + MIN, t0 + 2 * allowed + 10 * MIN];
    const now = times[3] + allowed + MIN;
    // Links inside the second stretch (and one due in the next checkpoint, which does not count).
    const inserted = [times[1] + 30_000, times[3] + allowed + 30_000];
    const sink = new FindingSink();
    await checkCheckpointGaps(pass({ intervalMs: interval, times }), source([], inserted), sink, now);
    expect(sink.findings.map((f) => [f.kind, f.checkpointAtMs])).toEqual([['checkpoint-gap', times[1]]]);
    // The tail stretch up to now counts too.
    const tail = new FindingSink();
    await checkCheckpointGaps(
      pass({ intervalMs: interval, times: [t0] }),
      source([], [t0 + MIN]),
      tail,
      t0 + 3 * allowed,
    );
    expect(tail.findings.map((f) => f.kind)).toEqual(['checkpoint-gap']);
    expect(tail.findings[0].detail).toMatch(/to now/);
  });
});

describe('a chain whose oldest links are gone', () => {
  const link = (insertedAtMs: number): LinkRecord =>
    makeLink({
      pipeline: 'isp/fw',
      table: 'fw',
      partition: 0,
      firstOffset: 100,
      lastOffset: 109,
      rowCount: 10,
      minTsMs: insertedAtMs,
      maxTsMs: insertedAtMs,
      batchDigest: id('d'),
      prevLink: id('e'),
      insertedAtMs,
    });
  async function run(l: LinkRecord, horizon: number | undefined): Promise<FindingSink> {
    const sink = new FindingSink();
    const src: LinkPassSource = {
      links: (async function* () {
        yield l;
      })(),
      heads: (async function* () {})(),
      predecessor: async () => undefined,
      between: async () => [],
      lookup: async () => new Map(),
    };
    await checkLinks(src, sink, horizon, 86_400_000);
    return sink;
  }

  it('is expired only near the horizon; younger means deleted history', async () => {
    const horizon = 1_700_000_000_000;
    expect((await run(link(horizon + 3_600_000), horizon)).notices.map((n) => n.kind)).toEqual(['expired']);
    const young = await run(link(horizon + 2 * 86_400_000), horizon);
    expect(young.findings.map((f) => [f.kind, f.firstOffset])).toEqual([['history-deleted', 100]]);
    const noRetention = await run(link(horizon), undefined);
    expect(noRetention.findings.map((f) => f.kind)).toEqual(['history-deleted']);
  });

  it('a genesis link has nothing before it', async () => {
    const first = makeLink({ ...link(1), prevLink: GENESIS_LINK });
    const sink = await run(first, undefined);
    expect([...sink.findings, ...sink.notices]).toEqual([]);
  });
});
