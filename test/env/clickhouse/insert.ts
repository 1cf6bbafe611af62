/**
 * INSERT with inline data: line-delimited formats are streamed into the engine in bounded chunks
 * cut at row boundaries; other formats (CSV, RowBinary, Native, Values, …) are collected up to a
 * cap and inserted in one piece. With `insert_deduplication_token`, a body split into several
 * chunks gives chunk i the token `<token>_<i>` (the suffix scheme ClickHouse uses for the blocks
 * of one INSERT), so a retried request deduplicates chunk by chunk; a single chunk keeps the
 * token unchanged.
 *
 * The engine's raw insert hands `header + data` to its multi-statement parser, which ends inline
 * data at the first empty line ("\n\n") and parses the rest as SQL: a Native or RowBinary body is
 * cut there (a UInt32 0x0A0A is enough: "Rows read: 2570. Rows expected: 10000"), and so is a text
 * body with an empty row. Such a payload is written to a temporary file and inserted as
 * `INSERT INTO t [(cols)] SELECT * FROM file(tmp, 'Format')`; the structure comes from the
 * insertion table, and the dedup token and written-row counters work as for inline data.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
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
    add(totals, await insertPayload(conn, header, format, chunk));
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

/** Formats whose payload is binary: it may hold an empty line anywhere. */
const BINARY_FORMAT =
  /^(RowBinary|Native|Parquet|Arrow|ORC|Avro|Protobuf|MsgPack|CapnProto|BSONEachRow|Npy)/i;

/** True when the engine's inline-data parser would cut `data` at an empty line. */
export function needsFileInsert(format: string, data: Buffer): boolean {
  return BINARY_FORMAT.test(format) || data[0] === 10 || data.includes('\n\n') || data.includes('\n\r\n');
}

/** The header's statement with its `FORMAT name` replaced by `SELECT * FROM file(path, 'name')`. */
export function fileInsertStatement(header: string, file: string): string | undefined {
  const m = /\bFORMAT\s+([A-Za-z0-9_]+)\s*$/i.exec(header);
  if (!m) return undefined;
  return `${header.slice(0, m.index)}SELECT * FROM file(${quoteLiteral(file)}, ${quoteLiteral(m[1])})`;
}

let spooled = 0;

/** Inserts one payload inline, or through a temporary file when inline data would be cut. */
async function insertPayload(
  conn: EngineConnection,
  header: string,
  format: string,
  data: Buffer,
): Promise<InsertOutput> {
  const file = path.join(
    os.tmpdir(),
    `lp-ch-insert-${process.pid}-${++spooled}-${randomBytes(4).toString('hex')}`,
  );
  const sql = needsFileInsert(format, data) ? fileInsertStatement(header, file) : undefined;
  if (sql === undefined) return conn.insert(header, data);
  await fs.writeFile(file, data);
  try {
    // Through the raw-insert entry with no inline data, so the engine reports the rows written.
    return await conn.insert(sql, Buffer.alloc(0));
  } finally {
    await fs.rm(file, { force: true });
  }
}

function add(totals: Summary, out: InsertOutput): void {
  totals.writtenRows = (totals.writtenRows ?? 0) + out.rowsWritten;
  totals.writtenBytes = (totals.writtenBytes ?? 0) + out.bytesWritten;
  totals.readRows = totals.writtenRows;
  totals.readBytes = totals.writtenBytes;
  totals.elapsedNs = (totals.elapsedNs ?? 0) + out.elapsedNs;
}
