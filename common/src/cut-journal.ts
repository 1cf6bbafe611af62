/**
 * The cut journal: batch boundaries stored in the Kafka offset-commit metadata of a partition.
 * A batch's range and ingest time are committed (next to the unchanged watermark) BEFORE its
 * INSERT is sent, so whoever reads the partition next — this worker after a crash or another one
 * after a rebalance — re-cuts exactly the same ranges with the same ingest times, producing the
 * same deduplication tokens; ClickHouse then drops whatever was already inserted. Without it a
 * re-read after a crash would cut at different offsets (fetch sizes and timers differ) and
 * duplicate rows. Pure encode/decode.
 */

/** One journaled batch: inclusive offset range and the ingest time fixed at cut. */
export interface JournalEntry {
  firstOffset: number;
  lastOffset: number;
  ingestMs: number;
  /**
   * Last offset of the range that names the batch's dedup token when it differs from lastOffset:
   * a replayed range cut short keeps its planned token (written `first-last/tokenLast@ingest`).
   */
  tokenLastOffset?: number;
}

const PREFIX = 'lp1;';
/** Kafka's default offset.metadata.max.bytes; encode never produces more. */
export const MAX_METADATA_BYTES = 4096;
/** Longest possible entry: three offsets below 2^53 (16 digits), a 13-digit epoch ms, 4 separators. */
const MAX_ENTRY_CHARS = 16 + 1 + 16 + 1 + 16 + 1 + 13 + 1;
/**
 * Entries that always fit in MAX_METADATA_BYTES whatever their values. The worker caps a
 * partition's outstanding batches below this (resolveTuning), so the journal is bounded by
 * construction and encodeJournal never has to leave an entry out.
 */
export const MAX_JOURNAL_ENTRIES = Math.floor((MAX_METADATA_BYTES - PREFIX.length) / MAX_ENTRY_CHARS);

/**
 * Encodes outstanding batches (oldest first) as commit metadata. Never throws: should more entries
 * come than fit (the outstanding cap prevents it), the oldest that fit are kept — a journal that
 * is short only means less deduplication for the next owner, while an exception would stop every
 * commit of the partition.
 */
export function encodeJournal(entries: readonly JournalEntry[]): string {
  let out = PREFIX;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    const tokenLast =
      e.tokenLastOffset !== undefined && e.tokenLastOffset !== e.lastOffset ? `/${e.tokenLastOffset}` : '';
    const part = `${i === 0 ? '' : ','}${e.firstOffset}-${e.lastOffset}${tokenLast}@${e.ingestMs}`;
    if (out.length + part.length > MAX_METADATA_BYTES) break;
    out += part;
  }
  return out;
}

const ENTRY = /^(\d+)-(\d+)(?:\/(\d+))?@(\d+)$/;

/**
 * Decodes commit metadata into the batches to re-cut from `committedOffset` on. Foreign or
 * malformed metadata, and entries already below the committed offset, yield nothing: the reader
 * then cuts freely, which is only ever less deduplication, never loss.
 */
export function decodeJournal(metadata: string | null | undefined, committedOffset: number): JournalEntry[] {
  if (!metadata || !metadata.startsWith(PREFIX)) return [];
  const body = metadata.slice(PREFIX.length);
  if (body === '') return [];
  const entries: JournalEntry[] = [];
  let floor = committedOffset;
  for (const part of body.split(',')) {
    const m = ENTRY.exec(part);
    if (!m) return [];
    const entry: JournalEntry = {
      firstOffset: Number(m[1]),
      lastOffset: Number(m[2]),
      ingestMs: Number(m[4]),
    };
    if (m[3] !== undefined) entry.tokenLastOffset = Number(m[3]);
    if (entry.lastOffset < entry.firstOffset) return [];
    if (entry.lastOffset < committedOffset) continue;
    // A range straddling the committed offset or overlapping its predecessor is not ours to trust.
    if (entry.firstOffset < floor) return [];
    entries.push(entry);
    floor = entry.lastOffset + 1;
  }
  return entries;
}
