/**
 * The link pass of `verify`: walks the links of the window in chain order and checks that each
 * link's hash matches its fields, that each link continues the one before it (prev_link), and that
 * every chain head named by a signed checkpoint is a stored link with the same hash. Links and
 * heads arrive as ordered streams; only heads that cannot be matched in the stream are kept, and
 * resolved afterwards with point lookups.
 */
import {
  checkContinuity,
  GENESIS_LINK,
  isHexDigest,
  linkVersionOf,
  type LinkRecord,
  type LinkVersion,
} from '../../../common/src/integrity/chain';
import type { FindingSink } from './verify-report';

/** A chain head named by a checkpoint. */
export interface SignedHead {
  partition: number;
  lastOffset: number;
  link: string;
  /** The earliest checkpoint naming it. */
  createdAtMs: number;
}

/** I/O the link pass needs (queries live in verify.ts). */
export interface LinkPassSource {
  links: AsyncIterable<LinkRecord>;
  heads: AsyncIterable<SignedHead>;
  /** The link just before `firstOffset` in a partition, if any. */
  predecessor(partition: number, firstOffset: number): Promise<LinkRecord | undefined>;
  /** Links of a partition with first_offset strictly between the two offsets, in order (at most a few thousand). */
  between(partition: number, afterOffset: number, beforeOffset: number): Promise<LinkRecord[]>;
  /** Links at the given positions, keyed `partition:lastOffset` -> link hashes stored there. */
  lookup(heads: readonly SignedHead[]): Promise<Map<string, string[]>>;
}

/** Counters of the link pass. */
export interface LinkPassStats {
  links: number;
  headsChecked: number;
  headsUnchecked: number;
}

const MAX_UNRESOLVED = 100_000;
const LOOKUP_BATCH = 500;

/** Runs the link pass, recording findings and notices; returns its counters. */
export async function checkLinks(
  src: LinkPassSource,
  sink: FindingSink,
  horizonMs: number | undefined,
  expirySlackMs = 86_400_000,
): Promise<LinkPassStats> {
  const stats: LinkPassStats = { links: 0, headsChecked: 0, headsUnchecked: 0 };
  const heads = src.heads[Symbol.asyncIterator]();
  let head = await heads.next();
  const unresolved: SignedHead[] = [];
  const defer = (h: SignedHead): void => {
    if (unresolved.length < MAX_UNRESOLVED) unresolved.push(h);
    else stats.headsUnchecked++;
  };
  let prev: LinkRecord | undefined;
  let prevVersion: LinkVersion | 0 = 0;
  for await (const l of src.links) {
    if (prev && prev.partition === l.partition && prev.firstOffset === l.firstOffset && prev.link === l.link)
      continue;
    stats.links++;
    const version = checkOwnHash(l, sink);
    if (!prev || prev.partition !== l.partition)
      await checkChainStart(src, l, sink, horizonMs, expirySlackMs);
    else {
      await checkLinkAfter(src, prev, l, sink);
      if (version !== 0 && version < prevVersion) downgraded(sink, l, version, prevVersion);
    }
    prevVersion = version;
    // Heads strictly before this link's end cannot match it or any later link of the stream.
    while (!head.done && before(head.value, l.partition, l.lastOffset)) {
      defer(head.value);
      head = await heads.next();
    }
    while (!head.done && head.value.partition === l.partition && head.value.lastOffset === l.lastOffset) {
      stats.headsChecked++;
      if (head.value.link !== l.link)
        headMismatch(sink, head.value, 'the link stored at this position differs from the signed head');
      head = await heads.next();
    }
    prev = l;
  }
  for (; !head.done; head = await heads.next()) defer(head.value);
  await resolveHeads(src, unresolved, sink, horizonMs, stats);
  if (stats.headsUnchecked > 0)
    sink.notice({
      kind: 'info',
      detail: `${stats.headsUnchecked} signed heads were not checked (too many outside the window)`,
    });
  return stats;
}

function before(h: SignedHead, partition: number, lastOffset: number): boolean {
  return h.partition < partition || (h.partition === partition && h.lastOffset < lastOffset);
}

function where(l: LinkRecord): { partition: number; firstOffset: number; lastOffset: number } {
  return { partition: l.partition, firstOffset: l.firstOffset, lastOffset: l.lastOffset };
}

/** Checks the link's hash against its fields in every known version; returns the version that matched (0: none). */
function checkOwnHash(l: LinkRecord, sink: FindingSink): LinkVersion | 0 {
  const valid = isHexDigest(l.batchDigest) && isHexDigest(l.prevLink) && isHexDigest(l.link);
  const version = valid ? linkVersionOf(l) : 0;
  if (version === 0) {
    sink.finding({
      ...where(l),
      kind: 'link-modified',
      expectedRows: l.rowCount,
      detail: 'the stored link hash does not match the link fields',
    });
  }
  return version;
}

/**
 * A link in an older version after a newer one: a worker of an older build held the partition
 * (a rolling upgrade moves partitions between old and new pods), or someone rewrote the link in
 * the old form. Its hash, continuity and the signed heads are checked as for any link, so this is
 * said, not counted as tampering.
 */
function downgraded(sink: FindingSink, l: LinkRecord, version: number, prevVersion: number): void {
  sink.notice({
    ...where(l),
    kind: 'info',
    detail: `a version ${version} link follows a version ${prevVersion} link (a worker of an older build, e.g. during a rolling upgrade)`,
  });
}

async function checkLinkAfter(
  src: LinkPassSource,
  prev: LinkRecord,
  l: LinkRecord,
  sink: FindingSink,
): Promise<void> {
  const problem = checkContinuity(prev, l);
  if (problem === 'prev-mismatch' && (await bridged(src, prev, l, sink))) return;
  if (problem === 'overlap') {
    sink.finding({
      ...where(l),
      kind: 'overlap',
      detail: `offsets overlap the previous link ${prev.firstOffset}..${prev.lastOffset}`,
    });
  } else if (problem !== null) {
    sink.finding({
      kind: 'chain-break',
      partition: l.partition,
      firstOffset: prev.lastOffset + 1,
      lastOffset: l.lastOffset,
      detail: `prev_link of the batch ${l.firstOffset}..${l.lastOffset} does not match the link of ${prev.firstOffset}..${prev.lastOffset}: a link between them was removed or altered`,
    });
  }
}

/**
 * The first link of a partition in the window: it must continue the stored link before it. When
 * none is stored, the links before it may have expired — but only if they were inserted before the
 * horizon, and links are inserted in chain order: a first stored link inserted later than
 * horizon + slack means younger history was deleted (the slack allows for a quiet partition).
 */
async function checkChainStart(
  src: LinkPassSource,
  l: LinkRecord,
  sink: FindingSink,
  horizonMs: number | undefined,
  slackMs: number,
): Promise<void> {
  const pred = await src.predecessor(l.partition, l.firstOffset);
  if (pred) {
    if (l.prevLink === GENESIS_LINK) {
      sink.finding({
        ...where(l),
        kind: 'chain-break',
        detail: `chain restarts from genesis after the link of ${pred.firstOffset}..${pred.lastOffset}`,
      });
    } else {
      await checkLinkAfter(src, pred, l, sink);
    }
  } else if (l.prevLink !== GENESIS_LINK) {
    if (horizonMs !== undefined && l.insertedAtMs < horizonMs + slackMs) {
      sink.notice({
        ...where(l),
        kind: 'expired',
        detail:
          'oldest stored link of the partition: the links before it are gone (retention) and cannot be checked',
      });
    } else {
      const age =
        horizonMs === undefined
          ? 'no retention deletes links'
          : 'it was inserted after the retention horizon';
      sink.finding({
        ...where(l),
        kind: 'history-deleted',
        detail: `oldest stored link of the partition continues a link that is gone, yet ${age} (${new Date(l.insertedAtMs).toISOString()}): history before it was deleted`,
      });
    }
  }
}

/**
 * Links whose rows all lie outside the window are not streamed; when they sit between two streamed
 * links, the chain is checked through them instead of reporting a false break.
 */
async function bridged(
  src: LinkPassSource,
  prev: LinkRecord,
  l: LinkRecord,
  sink: FindingSink,
): Promise<boolean> {
  const middle = await src.between(l.partition, prev.firstOffset, l.firstOffset);
  if (middle.length === 0) return false;
  const path = [prev, ...middle, l];
  for (let i = 1; i < path.length; i++)
    if (checkContinuity(path[i - 1], path[i]) !== null || linkVersionOf(path[i]) === 0) return false;
  sink.notice({
    kind: 'info',
    partition: l.partition,
    firstOffset: middle[0].firstOffset,
    lastOffset: middle[middle.length - 1].lastOffset,
    detail: `${middle.length} batches between are outside the time window: chain checked through them, rows not checked`,
  });
  return true;
}

function headMismatch(sink: FindingSink, h: SignedHead, detail: string): void {
  sink.finding({
    kind: 'checkpoint-head-mismatch',
    partition: h.partition,
    firstOffset: h.lastOffset,
    lastOffset: h.lastOffset,
    checkpointAtMs: h.createdAtMs,
    detail,
  });
}

async function resolveHeads(
  src: LinkPassSource,
  heads: SignedHead[],
  sink: FindingSink,
  horizonMs: number | undefined,
  stats: LinkPassStats,
): Promise<void> {
  for (let i = 0; i < heads.length; i += LOOKUP_BATCH) {
    const batch = heads.slice(i, i + LOOKUP_BATCH);
    const found = await src.lookup(batch);
    for (const h of batch) {
      const stored = found.get(`${h.partition}:${h.lastOffset}`);
      stats.headsChecked++;
      if (stored?.includes(h.link)) continue;
      if (stored) headMismatch(sink, h, 'the link stored at this position differs from the signed head');
      else if (horizonMs !== undefined && h.createdAtMs < horizonMs) {
        sink.notice({
          kind: 'expired',
          partition: h.partition,
          firstOffset: h.lastOffset,
          lastOffset: h.lastOffset,
          checkpointAtMs: h.createdAtMs,
          detail: 'signed head older than the retention horizon; its link expired',
        });
      } else
        headMismatch(
          sink,
          h,
          'no link is stored at the position a signed checkpoint names: links (and their rows) were removed',
        );
    }
  }
}
