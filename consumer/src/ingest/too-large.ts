/**
 * Kafka refusing a send as too large (MESSAGE_TOO_LARGE / RECORD_LIST_TOO_LARGE: the record batch
 * of a partition exceeds the topic's max.message.bytes). The receiver reads that limit at start; when
 * someone lowers it later, retrying the same send would stall Kafka intake for good, so the sink
 * (kafka-sink.ts) sends fewer values per record batch and splits a value refused alone in two by
 * lines (bisecting down to single lines; a line is never cut). Pure; the rare path, so clarity first.
 */
import { decodeValue, encodeValue, type ValueEncoding } from '../../../common/src/kafka/value-codec';
import type { OutgoingMessage } from './kafka-sink';

const TOO_LARGE_TYPES = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE']);

/** True when kafkajs's error (or one it wraps as `cause`) is the broker refusing a batch as too large. */
export function isTooLarge(err: unknown): boolean {
  let e = err as { type?: unknown; cause?: unknown } | undefined;
  for (let depth = 0; e && depth < 4; depth++) {
    if (typeof e.type === 'string' && TOO_LARGE_TYPES.has(e.type)) return true;
    e = e.cause as typeof e;
  }
  return false;
}

const LF = 0x0a;
const NOOP = () => undefined;

/**
 * `m` as two messages of about half its lines each (same sender, headers and first-line time), or
 * null when it holds one line. Values are re-encoded with `encoding` (m's own codec) or copied.
 */
export function splitOutgoing(
  m: OutgoingMessage,
  encoding?: ValueEncoding,
): [OutgoingMessage, OutgoingMessage] | null {
  if (m.lines < 2) return null;
  const plain = encoding ? decodeValue(m.value, m.headers, m.plainBytes) : m.value;
  const mid = plain.length >> 1;
  let cut = plain.indexOf(LF, mid);
  if (cut < 0) cut = plain.lastIndexOf(LF, mid);
  if (cut < 0) return null;
  const half = (body: Buffer, lines: number): OutgoingMessage => ({
    sender: m.sender,
    lines,
    firstLineMs: m.firstLineMs,
    plainBytes: body.length,
    value: encoding ? encodeValue(body, encoding) : Buffer.from(body),
    headers: { ...m.headers },
    release: NOOP,
  });
  const left = plain.subarray(0, cut);
  let leftLines = 1;
  for (let i = left.indexOf(LF); i >= 0; i = left.indexOf(LF, i + 1)) leftLines++;
  return [half(left, leftLines), half(plain.subarray(cut + 1), m.lines - leftLines)];
}
