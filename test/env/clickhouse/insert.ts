/**
 * INSERT with inline data: line-delimited formats are streamed into the engine in bounded chunks
 * cut at row boundaries; other formats (CSV, RowBinary, Native, Values, …) are collected up to a
 * cap and inserted in one piece. With `insert_deduplication_token`, a body split into several
 * chunks gives chunk i the token `<token>_<i>` (the suffix scheme ClickHouse uses for the blocks
 * of one INSERT), so a retried request deduplicates chunk by chunk; a single chunk keeps the
 * token unchanged.
 */
import type { EngineConnection, InsertOutput } from './engine';
import { quoteLiteral } from './http-params';
import { chunkLines, collectAll, isBlank, lineFormatHeaderLines } from './insert-chunker';
import type { Summary } from './respond';
import { headerSetsDedupToken } from './sql-scan';

/** Bytes per engine INSERT for line-delimited bodies. */
export const CHUNK_TARGET_BYTES = 32 * 1024 * 1024;
/** Longest single row accepted in a line-delimited body. */
export const MAX_ROW_BYTES = 64 * 1024 * 1024;
/** Largest body accepted in formats that cannot be split. */
export const MAX_UNSPLIT_BYTES = 512 * 1024 * 1024;

/** Inserts `data` under `header` (the client's `INSERT … FORMAT x` text); returns the summary counters. */
export async function runInsert(
  conn: EngineConnection,
  header: string,
  format: string,
  data: AsyncIterable<Buffer>,
  dedupToken: string | undefined,
): Promise<Summary> {
  const headerLines = lineFormatHeaderLines(format);
  const totals: Summary = { readRows: 0, readBytes: 0, writtenRows: 0, writtenBytes: 0, elapsedNs: 0 };
  const insertChunk = async (chunk: Buffer, token: string | undefined) => {
    if (token !== undefined)
      await conn.execute(`SET insert_deduplication_token = ${quoteLiteral(token)}`, 'TabSeparated');
    add(totals, await conn.insert(header, chunk));
  };
  if (headerLines === undefined || headerSetsDedupToken(header)) {
    const all = await collectAll(data, MAX_UNSPLIT_BYTES);
    const empty =
      all.length === 0 ||
      (!/^(RowBinary|Native|Parquet|Arrow|ORC|Avro|Protobuf|MsgPack)/i.test(format) && isBlank(all));
    if (!empty) await insertChunk(all, dedupToken);
    return totals;
  }
  // One chunk of look-ahead: whether a chunk is the only one decides its token.
  let held: Buffer | undefined;
  let index = 0;
  for await (const chunk of chunkLines(data, {
    targetBytes: CHUNK_TARGET_BYTES,
    maxRowBytes: MAX_ROW_BYTES,
    headerLines,
  })) {
    if (isBlank(chunk)) continue;
    if (held) await insertChunk(held, dedupToken === undefined ? undefined : `${dedupToken}_${index++}`);
    held = chunk;
  }
  if (held)
    await insertChunk(held, dedupToken === undefined || index === 0 ? dedupToken : `${dedupToken}_${index}`);
  return totals;
}

function add(totals: Summary, out: InsertOutput): void {
  totals.writtenRows = (totals.writtenRows ?? 0) + out.rowsWritten;
  totals.writtenBytes = (totals.writtenBytes ?? 0) + out.bytesWritten;
  totals.readRows = totals.writtenRows;
  totals.readBytes = totals.writtenBytes;
  totals.elapsedNs = (totals.elapsedNs ?? 0) + out.elapsedNs;
}
