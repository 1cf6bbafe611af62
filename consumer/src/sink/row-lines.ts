/**
 * Maps the rows of an encoded batch back to the lines they came from, for dead-lettering rows
 * ClickHouse rejects with their original bytes. The encoder emits one row per line that parsed,
 * in line order, and reports the lines that did not; so the rows are the batch's lines minus its
 * dead letters. Lines are split exactly like the encoder splits them (LF, trailing CR dropped).
 * Only used on the rare rejection path, so it favours clarity over speed.
 */
import type { DeadLetter, MessageInput } from '../encode/batch-io';
import { TOO_MANY_LINES } from '../parse/reasons';

/** Where one encoded row came from. */
export interface RowSource {
  messageIndex: number;
  lineIndex: number;
  line: Buffer;
}

/** Calls `visit(messageIndex, lineIndex, line)` for every line of `messages`, in order. */
export function forEachLine(
  messages: readonly MessageInput[],
  visit: (m: number, l: number, line: Buffer) => void,
): void {
  for (let m = 0; m < messages.length; m++) {
    const value = messages[m].value;
    if (!value || value.length === 0) {
      visit(m, 0, Buffer.alloc(0));
      continue;
    }
    let pos = 0;
    let lineIndex = 0;
    while (pos < value.length) {
      const nl = value.indexOf(10, pos);
      const end = nl < 0 ? value.length : nl;
      const lineEnd = end > pos && value[end - 1] === 13 ? end - 1 : end;
      visit(m, lineIndex++, value.subarray(pos, lineEnd));
      pos = end + 1;
    }
  }
}

/** Number of lines in one message value, counted the way the encoder splits them. */
export function countLines(value: Buffer | null): number {
  if (!value || value.length === 0) return 1;
  let n = 0;
  let pos = 0;
  while (pos < value.length) {
    const nl = value.indexOf(10, pos);
    n++;
    if (nl < 0) break;
    pos = nl + 1;
  }
  return n;
}

/** True for a line the encoder counts as blank (empty or only spaces and tabs): never a row. */
export function isBlankLine(line: Buffer): boolean {
  for (let i = 0; i < line.length; i++) if (line[i] !== 32 && line[i] !== 9) return false;
  return true;
}

/**
 * The source line of every row, in row order: all lines except blank ones, dead-lettered ones and
 * those past a message's `too_many_lines` cut (one dead letter stands for the whole rest). Returns
 * null when the count disagrees with `rows` (the encoder changed its rules): callers then fall back
 * to whole messages rather than blame the wrong line.
 */
export function rowSources(
  messages: readonly MessageInput[],
  deadLetters: readonly DeadLetter[],
  rows: number,
): RowSource[] | null {
  const skipped = new Set<string>();
  const cutAt = new Map<number, number>();
  for (const d of deadLetters) {
    skipped.add(`${d.messageIndex}:${d.lineIndex}`);
    if (d.reason === TOO_MANY_LINES) cutAt.set(d.messageIndex, d.lineIndex);
  }
  const out: RowSource[] = [];
  forEachLine(messages, (messageIndex, lineIndex, line) => {
    // An undecodable value is one dead letter for the whole message: none of its bytes is a row.
    if (messages[messageIndex].undecodable !== undefined) return;
    if (lineIndex >= (cutAt.get(messageIndex) ?? Infinity) || isBlankLine(line)) return;
    if (!skipped.has(`${messageIndex}:${lineIndex}`)) out.push({ messageIndex, lineIndex, line });
  });
  return out.length === rows ? out : null;
}

/** Byte offsets where each TSV row of `body` starts, plus body.length at the end (rows + 1 entries). */
export function rowBoundaries(body: Buffer): Uint32Array {
  let count = 0;
  for (let i = body.indexOf(10); i >= 0; i = body.indexOf(10, i + 1)) count++;
  // A body not ending in LF still has a last row.
  const trailing = body.length > 0 && body[body.length - 1] !== 10 ? 1 : 0;
  const starts = new Uint32Array(count + trailing + 1);
  let row = 1;
  for (let i = body.indexOf(10); i >= 0; i = body.indexOf(10, i + 1)) starts[row++] = i + 1;
  starts[starts.length - 1] = body.length;
  return starts;
}
