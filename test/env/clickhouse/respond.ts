/**
 * The response side of the HTTP interface: the X-ClickHouse-* headers the client reads, the
 * Content-Type per format, optional gzip/deflate/br response compression, error responses, and
 * backpressure-aware writes that give up when the client goes away.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline, type Writable } from 'node:stream';
import zlib from 'node:zlib';
import { formatErrorText, httpStatusFor, type ServerError } from './errors';

/** What the server states about itself and the current query in every response. */
export interface ResponseMeta {
  queryId: string;
  format: string;
  version: string;
  timezone: string;
  displayName: string;
}

/** Progress counters in the shape of X-ClickHouse-Summary. */
export interface Summary {
  readRows?: number;
  readBytes?: number;
  writtenRows?: number;
  writtenBytes?: number;
  resultRows?: number;
  resultBytes?: number;
  elapsedNs?: number;
}

/** The X-ClickHouse-Summary header value (all counters as decimal strings, like the server). */
export function summaryHeader(s: Summary): string {
  return JSON.stringify({
    read_rows: String(s.readRows ?? 0),
    read_bytes: String(s.readBytes ?? 0),
    written_rows: String(s.writtenRows ?? 0),
    written_bytes: String(s.writtenBytes ?? 0),
    total_rows_to_read: String(s.readRows ?? 0),
    result_rows: String(s.resultRows ?? 0),
    result_bytes: String(s.resultBytes ?? 0),
    elapsed_ns: String(s.elapsedNs ?? 0),
  });
}

const BINARY_FORMATS =
  /^(RowBinary|Native|Parquet|Arrow|ArrowStream|ORC|Avro|Protobuf|MsgPack|CapnProto|BSONEachRow|NPY|RawBLOB)/i;

/** The Content-Type ClickHouse sends for an output format. */
export function contentTypeFor(format: string): string {
  if (/^(TabSeparated|TSV)/i.test(format)) return 'text/tab-separated-values; charset=UTF-8';
  if (/^CSV/i.test(format)) return 'text/csv; charset=UTF-8; header=absent';
  if (/^(JSON|NDJSON)/i.test(format)) return 'application/json; charset=UTF-8';
  if (BINARY_FORMATS.test(format)) return 'application/octet-stream';
  return 'text/plain; charset=UTF-8';
}

/** Headers common to every query response. */
export function queryHeaders(meta: ResponseMeta, summary: Summary): Record<string, string> {
  return {
    'Content-Type': contentTypeFor(meta.format),
    'X-ClickHouse-Server-Display-Name': meta.displayName,
    'X-ClickHouse-Query-Id': meta.queryId,
    'X-ClickHouse-Format': meta.format,
    'X-ClickHouse-Timezone': meta.timezone,
    'X-ClickHouse-Summary': summaryHeader(summary),
  };
}

/** The response encoding to use: only when the query enabled HTTP compression and the client accepts it. */
export function chooseEncoding(
  settings: Record<string, string>,
  acceptEncoding: string | undefined,
): string | undefined {
  if (settings.enable_http_compression !== '1' || !acceptEncoding) return undefined;
  const offered = acceptEncoding.split(',').map((e) => e.split(';')[0].trim().toLowerCase());
  return offered.find((e) => e === 'gzip' || e === 'deflate' || e === 'br');
}

/** Starts a 200 response and returns the stream to write the body into (compressing if asked). */
export function openBody(
  res: ServerResponse,
  headers: Record<string, string>,
  encoding: string | undefined,
  level?: number,
): Writable {
  if (!encoding) {
    res.writeHead(200, headers);
    return res;
  }
  res.writeHead(200, { ...headers, 'Content-Encoding': encoding });
  const opts = level === undefined || !Number.isFinite(level) ? {} : { level };
  const compressor =
    encoding === 'gzip'
      ? zlib.createGzip(opts)
      : encoding === 'deflate'
        ? zlib.createDeflate(opts)
        : zlib.createBrotliCompress();
  pipeline(compressor, res, () => undefined);
  return compressor;
}

/** Writes `chunk`, waiting for drain; rejects when the client disconnects first. */
export function writeChunk(out: Writable, chunk: Buffer | string): Promise<void> {
  if (out.destroyed) return Promise.reject(new Error('client disconnected'));
  if (out.write(chunk)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const finish = (err?: Error) => {
      out.off('drain', onDrain);
      out.off('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => finish();
    const onClose = () => finish(new Error('client disconnected'));
    out.on('drain', onDrain);
    out.on('close', onClose);
  });
}

/** Sends a ClickHouse-style error response (when headers are not out yet). */
export function sendError(res: ServerResponse, err: ServerError, meta: ResponseMeta): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = `${formatErrorText(err, meta.version)}\n`;
  res.writeHead(httpStatusFor(err.type), {
    'Content-Type': 'text/plain; charset=UTF-8',
    'X-ClickHouse-Server-Display-Name': meta.displayName,
    'X-ClickHouse-Query-Id': meta.queryId,
    'X-ClickHouse-Exception-Code': String(err.code),
    'X-ClickHouse-Timezone': meta.timezone,
    'Content-Length': String(Buffer.byteLength(body)),
  });
  res.end(body);
}

/** Sends a small plain-text response (health endpoints, unknown paths). */
export function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=UTF-8',
    'Content-Length': String(Buffer.byteLength(text)),
  });
  res.end(text);
}

/** Drains and discards the rest of a request body so the keep-alive connection stays usable. */
export function discardBody(req: IncomingMessage): void {
  if (!req.readableEnded) req.resume();
}
