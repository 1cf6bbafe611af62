/**
 * Line framing over a streamed HTTP response body with bounded memory: the verifier consumes the
 * server's output block by block and never holds more than one block plus one partial line.
 */
import type { Readable } from 'node:stream';

/** A run of whole newline-terminated lines: bytes [start, end) of buf. */
export interface LineBlock {
  buf: Buffer;
  start: number;
  end: number;
}

/**
 * Yields blocks of whole lines in stream order. A line split across chunks is reassembled (only
 * that line is copied). A final line without a newline is yielded with one appended.
 */
export async function* lineBlocks(stream: Readable): AsyncGenerator<LineBlock> {
  let tail: Buffer | null = null;
  for await (const raw of stream) {
    const chunk = raw as Buffer;
    let from = 0;
    if (tail) {
      const nl = chunk.indexOf(10);
      if (nl < 0) {
        tail = Buffer.concat([tail, chunk]);
        continue;
      }
      const joined: Buffer = Buffer.concat([tail, chunk.subarray(0, nl + 1)]);
      tail = null;
      yield { buf: joined, start: 0, end: joined.length };
      from = nl + 1;
    }
    const last = chunk.lastIndexOf(10);
    if (last >= from) {
      yield { buf: chunk, start: from, end: last + 1 };
      from = last + 1;
    }
    if (from < chunk.length) tail = Buffer.from(chunk.subarray(from));
  }
  if (tail && tail.length > 0) {
    const closed = Buffer.concat([tail, Buffer.from('\n')]);
    yield { buf: closed, start: 0, end: closed.length };
  }
}

/** Yields each line as a string (without its newline); for small result sets such as links. */
export async function* textLines(stream: Readable): AsyncGenerator<string> {
  for await (const block of lineBlocks(stream)) {
    let p = block.start;
    while (p < block.end) {
      const nl = block.buf.indexOf(10, p);
      yield block.buf.toString('utf8', p, nl);
      p = nl + 1;
    }
  }
}
