/**
 * The canonical export of one day of a table (docs/compliance.md, "Canonical export"): every row
 * whose time column lies in the day, one line each — `<kafka_partition>\t<kafka_offset>\t<canonical
 * row>` in the integrity hash's canonical form — ordered by (kafka_partition, kafka_offset,
 * kafka_line, line). The order is total, so the same rows always give the same bytes. The server
 * renders and sorts (external sort past 256 MB); this process streams the bytes through SHA-256
 * (and gzip into a file when asked) holding one block at a time, so a day of hundreds of millions
 * of rows needs no more memory than a small one.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { Transform, Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import type { ClickHouseClient } from '@clickhouse/client';
import type { CanonicalColumn } from '../../../common/src/integrity/canonical-ops';
import { qualifiedName, quoteIdentifier } from '../../../common/src/sql/identifiers';
import { canonicalExpression, SORT_SETTINGS } from './canonical-sql';

/** What the export of a day amounts to. */
export interface ExportDigest {
  /** SHA-256 (hex) of the uncompressed export. */
  sha256: string;
  rows: number;
  bytes: number;
}

function msLiteral(ms: number): string {
  if (!Number.isSafeInteger(ms)) throw new RangeError(`time bound ${ms} is not an integer of milliseconds`);
  return `fromUnixTimestamp64Milli(toInt64(${ms}))`;
}

/** The streamed SELECT of a day's canonical export (half-open window fromMs <= t < toMs). */
export function buildDayExportQuery(args: {
  database: string;
  table: string;
  columns: readonly CanonicalColumn[];
  timeColumn: string;
  fromMs: number;
  toMs: number;
  hasLine: boolean;
}): string {
  const parts = args.columns.map(canonicalExpression);
  const line = `concat(toString(kafka_partition), '\\t', toString(kafka_offset), '\\t', ${parts.join(", '\\t', ")})`;
  const t = quoteIdentifier(args.timeColumn, 'column');
  // The line itself is the last key: rows of one packed message without kafka_line still sort the same way every time.
  const order = args.hasLine
    ? 'kafka_partition, kafka_offset, kafka_line, l'
    : 'kafka_partition, kafka_offset, l';
  return (
    `SELECT ${line} AS l FROM ${qualifiedName(args.database, args.table)} ` +
    `WHERE ${t} >= ${msLiteral(args.fromMs)} AND ${t} < ${msLiteral(args.toMs)} ` +
    `ORDER BY ${order} ${SORT_SETTINGS} FORMAT TabSeparatedRaw`
  );
}

/** A pass-through stream that hashes and counts the bytes and lines flowing through it. */
class Digesting extends Transform {
  private readonly hash = createHash('sha256');
  rows = 0;
  bytes = 0;

  override _transform(
    chunk: Buffer,
    _enc: BufferEncoding,
    done: (err?: Error | null, data?: Buffer) => void,
  ) {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) this.rows++;
    done(null, chunk);
  }

  digest(): ExportDigest {
    return { sha256: this.hash.digest('hex'), rows: this.rows, bytes: this.bytes };
  }
}

/** A sink that drops what it is given (the hash-only pass of a scheduled seal needs no file). */
function discard(): Writable {
  return new Writable({ write: (_chunk, _enc, done) => done() });
}

/**
 * Streams the export query: hashes the canonical bytes, and when `gzipFile` is given writes them
 * gzip-compressed there (level 6, no name, mtime 0: the same rows give the same file with the same
 * zlib). Memory stays bounded by the stream buffers.
 */
export async function streamDayExport(
  client: ClickHouseClient,
  query: string,
  gzipFile?: string,
): Promise<ExportDigest> {
  const body = (await client.exec({ query })).stream as Readable;
  const digesting = new Digesting();
  if (gzipFile) {
    await pipeline(body, digesting, createGzip({ level: 6 }), fs.createWriteStream(gzipFile));
  } else {
    await pipeline(body, digesting, discard());
  }
  return digesting.digest();
}

/** Hashes (and counts the lines of) a gzip-compressed export file, decompressing as a stream. */
export async function digestExportFile(gzipFile: string): Promise<ExportDigest> {
  const digesting = new Digesting();
  await pipeline(fs.createReadStream(gzipFile), createGunzip(), digesting, discard());
  return digesting.digest();
}
