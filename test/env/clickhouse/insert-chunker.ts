/**
 * Bounded, deterministic chunking of INSERT bodies. Line-delimited formats escape raw newlines
 * inside values, so a raw '\n' is always a row boundary and each chunk is a valid INSERT payload
 * on its own. Boundaries depend only on the bytes (never on how they arrived over the network),
 * so a retried request with the same body and dedup token produces the same chunks, and the
 * per-chunk dedup tokens derived from it deduplicate exactly like the original.
 */
import { serverError } from './errors';

const LINE_FORMATS = new Set([
  'tabseparated',
  'tsv',
  'tabseparatedraw',
  'tsvraw',
  'jsoneachrow',
  'jsonlines',
  'ndjson',
  'jsonstringseachrow',
  'jsoncompacteachrow',
  'jsoncompactstringseachrow',
  'lineasstring',
]);

/**
 * For a format whose rows are newline-terminated, the number of header lines every chunk must
 * repeat (WithNames: 1, WithNamesAndTypes: 2); undefined for formats that cannot be split on
 * newlines (CSV, RowBinary, Native, Values, Parquet, …).
 */
export function lineFormatHeaderLines(format: string): number | undefined {
  const lower = format.toLowerCase();
  const match = /^(.*?)(withnamesandtypes|withnames)?$/.exec(lower);
  const base = match?.[1] ?? lower;
  if (!LINE_FORMATS.has(base)) return undefined;
  if (match?.[2] === 'withnamesandtypes') return 2;
  return match?.[2] === 'withnames' ? 1 : 0;
}

/** Limits of the chunker. */
export interface ChunkOptions {
  /** A chunk ends at the first newline at or after this many bytes. */
  targetBytes: number;
  /** A row longer than this (no newline found) fails the request. */
  maxRowBytes: number;
  /** Header lines (from the start of the body) repeated at the head of every later chunk. */
  headerLines: number;
}

/** Offset just past the `lines`-th newline of `buf`, or -1 when it has fewer lines. */
function afterLines(buf: Buffer, lines: number): number {
  let pos = 0;
  for (let i = 0; i < lines; i++) {
    const nl = buf.indexOf(10, pos);
    if (nl < 0) return -1;
    pos = nl + 1;
  }
  return pos;
}

/**
 * Re-chunks `source` into payloads of about `targetBytes`, each ending at a row boundary (the
 * last one may lack its final newline). Holds at most one chunk plus one network read.
 */
export async function* chunkLines(source: AsyncIterable<Buffer>, opts: ChunkOptions): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let searchedUpTo = 0; // bytes of `pending` already known to hold no usable newline
  let header: Buffer | undefined;
  for await (const piece of source) {
    if (piece.length === 0) continue;
    pending.push(piece);
    pendingBytes += piece.length;
    while (pendingBytes >= opts.targetBytes) {
      const joined = pending.length === 1 ? pending[0] : Buffer.concat(pending, pendingBytes);
      pending = [joined];
      const cut = joined.indexOf(10, Math.max(opts.targetBytes - 1, searchedUpTo));
      if (cut < 0) {
        if (pendingBytes > opts.targetBytes + opts.maxRowBytes) {
          throw serverError(
            'INCORRECT_DATA',
            `A row of the INSERT body exceeds ${opts.maxRowBytes} bytes without a line break`,
          );
        }
        searchedUpTo = pendingBytes;
        break;
      }
      let chunk = joined.subarray(0, cut + 1);
      if (header === undefined) header = headerOf(chunk, opts.headerLines);
      else if (header.length > 0) chunk = Buffer.concat([header, chunk]);
      yield chunk;
      const rest = joined.subarray(cut + 1);
      pending = rest.length > 0 ? [rest] : [];
      pendingBytes = rest.length;
      searchedUpTo = 0;
    }
  }
  if (pendingBytes === 0) return;
  const tail = pending.length === 1 ? pending[0] : Buffer.concat(pending, pendingBytes);
  if (isBlank(tail)) return;
  yield header && header.length > 0 ? Buffer.concat([header, tail]) : tail;
}

function headerOf(firstChunk: Buffer, lines: number): Buffer {
  if (lines === 0) return Buffer.alloc(0);
  const end = afterLines(firstChunk, lines);
  if (end < 0) throw serverError('INCORRECT_DATA', `The INSERT body has fewer than ${lines} header lines`);
  return Buffer.from(firstChunk.subarray(0, end));
}

/** Collects `source` into one Buffer, failing once it exceeds `maxBytes`. */
export async function collectAll(source: AsyncIterable<Buffer>, maxBytes: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let total = 0;
  for await (const piece of source) {
    total += piece.length;
    if (total > maxBytes) {
      throw serverError(
        'TOO_MANY_BYTES',
        `INSERT bodies in formats that cannot be split on line breaks are limited to ${maxBytes} bytes by the test bed`,
      );
    }
    parts.push(piece);
  }
  return Buffer.concat(parts, total);
}

/** True when `buf` holds nothing but whitespace (an INSERT body with no rows). */
export function isBlank(buf: Buffer): boolean {
  for (const byte of buf) {
    if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) return false;
  }
  return true;
}
