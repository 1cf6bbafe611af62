/**
 * Splits a request into its SQL statement and (for INSERT) a byte stream of inline data, the way
 * ClickHouse's HTTP interface does: the statement is the `query` URL parameter followed by the
 * body, and an INSERT's data starts where its `FORMAT name` / `VALUES` ends. Only the statement
 * part is buffered; the data stays a stream.
 */
import { serverError } from './errors';
import { scanStatement, type StatementScan } from './sql-scan';

/** A statement read from a request. */
export interface Statement {
  /** SQL text: the whole statement, or an INSERT's header (up to and including the format name). */
  text: string;
  scan: StatementScan;
  /** INSERT inline data (already decompressed), still streaming from the request. */
  data?: AsyncIterable<Buffer>;
}

/** Largest statement text the server buffers (INSERT data is excluded: it is streamed). */
export const MAX_STATEMENT_BYTES = 64 * 1024 * 1024;

async function* concatStreams(head: Buffer, rest: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
  if (head.length > 0) yield head;
  for (let next = await nextPiece(rest); !next.done; next = await nextPiece(rest)) yield next.value;
}

async function nextPiece(it: AsyncIterator<Buffer>): Promise<IteratorResult<Buffer>> {
  try {
    return await it.next();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (code.startsWith('Z_') || code === 'ERR_BROTLI_DECOMPRESSION_FAILED') {
      throw serverError('CANNOT_DECOMPRESS', `Cannot decompress the request body: ${(err as Error).message}`);
    }
    throw err;
  }
}

/**
 * Reads just enough of `body` to know the statement: an INSERT header (the rest of the body is
 * returned as `data`) or, for anything else, the whole body.
 */
export async function readStatement(
  urlQuery: string | undefined,
  body: AsyncIterable<Buffer>,
): Promise<Statement> {
  const it = body[Symbol.asyncIterator]();
  let buf: Buffer = urlQuery === undefined ? Buffer.alloc(0) : Buffer.from(`${urlQuery}\n`, 'utf8');
  let ended = false;
  for (;;) {
    const scan = scanStatement(buf.toString('latin1'), ended);
    if (scan.insert && scan.complete) {
      const { headerEnd, dataStart } = scan.insert;
      return {
        text: buf.subarray(0, headerEnd).toString('utf8'),
        scan,
        data: concatStreams(buf.subarray(dataStart), it),
      };
    }
    if (ended) return { text: buf.toString('utf8'), scan };
    if (scan.keyword !== '' && scan.keyword !== 'INSERT') {
      // Not an INSERT: no data part, the whole body is the statement.
      buf = await readRest(buf, it);
      ended = true;
      continue;
    }
    const next = await nextPiece(it);
    if (next.done) ended = true;
    else buf = checkSize(Buffer.concat([buf, next.value]));
  }
}

async function readRest(head: Buffer, it: AsyncIterator<Buffer>): Promise<Buffer> {
  const parts = [head];
  let total = head.length;
  for (let next = await nextPiece(it); !next.done; next = await nextPiece(it)) {
    parts.push(next.value);
    total += next.value.length;
    checkSize({ length: total });
  }
  return Buffer.concat(parts, total);
}

function checkSize<T extends { length: number }>(buf: T): T {
  if (buf.length > MAX_STATEMENT_BYTES) {
    throw serverError(
      'TOO_MANY_BYTES',
      `The query text exceeds ${MAX_STATEMENT_BYTES} bytes (INSERT data must follow FORMAT <name>)`,
    );
  }
  return buf;
}
