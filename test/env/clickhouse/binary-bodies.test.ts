/**
 * The test-bed server carries what real clients send, whole: Native and RowBinary bodies (whose
 * bytes hold empty lines the engine's inline-data parser would stop at), text bodies with empty
 * rows, and request bodies compressed with gzip, zstd, LZ4 frames or ClickHouse's own
 * `decompress=1` blocks; dedup tokens, written_rows and errors behave as for plain inline data.
 * The server runs in-process on a real engine (chdb) in a temporary directory.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { buildEngineConfig } from './config';
import { Engine } from './engine';
import { handleRequest, type ServerContext } from './handler';
import { SessionRegistry } from './sessions';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const lz4 = require('lz4-napi') as { compressFrameSync(b: Buffer): Buffer; compressSync(b: Buffer): Buffer };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const zstd = require('@mongodb-js/zstd') as { compress(b: Buffer): Promise<Buffer> };

const ROWS = 10_000;

let dir: string;
let engine: Engine;
let server: http.Server;
let base: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lp-ch-binary-'));
  const config = path.join(dir, 'config.xml');
  fs.writeFileSync(config, buildEngineConfig({ dataDir: path.join(dir, 'data'), coldDisk: false }));
  engine = new Engine(path.join(dir, 'data'), config);
  const { version, timezone } = await engine.describe();
  const ctx: ServerContext = {
    engine,
    sessions: new SessionRegistry(engine),
    version,
    timezone,
    displayName: 'unit',
    user: 'default',
    password: '',
    log: () => undefined,
  };
  server = http.createServer((req, res) => void handleRequest(ctx, req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await engine.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Reply {
  status: number;
  text: string;
  writtenRows: number;
}

async function post(
  query: string,
  body: Buffer | string = '',
  headers: Record<string, string> = {},
  params = '',
): Promise<Reply> {
  const res = await fetch(`${base}?query=${encodeURIComponent(query)}${params}`, {
    method: 'POST',
    body: typeof body === 'string' ? body : new Uint8Array(body),
    headers,
  });
  const summary = res.headers.get('x-clickhouse-summary');
  return {
    status: res.status,
    text: await res.text(),
    writtenRows: summary ? Number(JSON.parse(summary).written_rows) : -1,
  };
}

async function scalar(sql: string): Promise<string> {
  const r = await post(sql);
  expect(r.status).toBe(200);
  return r.text.trim();
}

function leb128(n: number): Buffer {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return Buffer.from(out);
}

function str(s: string | Buffer): Buffer {
  const b = typeof s === 'string' ? Buffer.from(s) : s;
  return Buffer.concat([leb128(b.length), b]);
}

/** One Native block: column `a UInt32` = 0..rows-1 (row 2570 is the bytes 0A 0A 00 00). */
function nativeBody(rows: number): Buffer {
  const data = Buffer.alloc(rows * 4);
  for (let i = 0; i < rows; i++) data.writeUInt32LE(i, i * 4);
  return Buffer.concat([leb128(1), leb128(rows), str('a'), str('UInt32'), data]);
}

/** RowBinary rows (a UInt32, s String) with strings full of empty lines. */
function rowBinaryBody(rows: number): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0; i < rows; i++) {
    const a = Buffer.alloc(4);
    a.writeUInt32LE(i);
    parts.push(a, str('\n\n'.repeat(i % 3)));
  }
  return Buffer.concat(parts);
}

describe('binary and empty-line bodies', () => {
  beforeAll(async () => {
    await scalar('CREATE TABLE nat (a UInt32) ENGINE = MergeTree ORDER BY a');
    await scalar(
      "CREATE TABLE rb (a UInt32, s String, d String DEFAULT 'dflt') ENGINE = MergeTree ORDER BY a " +
        'SETTINGS non_replicated_deduplication_window = 100',
    );
    await scalar('CREATE TABLE txt (s String) ENGINE = MergeTree ORDER BY tuple()');
  });

  it('inserts a Native body whole, with the statement in the body like clickhouse-connect', async () => {
    const body = Buffer.concat([Buffer.from('INSERT INTO nat (a) FORMAT Native\n'), nativeBody(ROWS)]);
    const r = await post('', body);
    expect(r).toMatchObject({ status: 200, writtenRows: ROWS });
    expect(await scalar('SELECT count(), sum(a) FROM nat')).toBe(`${ROWS}\t${(ROWS * (ROWS - 1)) / 2}`);
  });

  it('inserts RowBinary with a column list, filling DEFAULTs, and deduplicates by token', async () => {
    const body = rowBinaryBody(ROWS);
    const insert = 'INSERT INTO rb (a, s) FORMAT RowBinary';
    const params = '&insert_deduplication_token=batch-1';
    expect(await post(insert, body, {}, params)).toMatchObject({ status: 200, writtenRows: ROWS });
    expect(await post(insert, body, {}, params)).toMatchObject({ status: 200 });
    const newlines = Array.from({ length: ROWS }, (_, i) => 2 * (i % 3)).reduce((x, y) => x + y, 0);
    expect(await scalar("SELECT count(), sum(length(s)), countIf(d = 'dflt') FROM rb")).toBe(
      `${ROWS}\t${newlines}\t${ROWS}`,
    );
  });

  it('keeps empty rows of a text body instead of stopping at them', async () => {
    expect(await post('INSERT INTO txt FORMAT TabSeparated', 'one\n\nthree\n')).toMatchObject({
      status: 200,
      writtenRows: 3,
    });
    expect(await scalar("SELECT arrayStringConcat(groupArray(s), '|') FROM txt")).toBe('one||three');
  });

  it('reports a truncated binary body as the engine error and stores nothing', async () => {
    await scalar('TRUNCATE TABLE nat');
    const r = await post('INSERT INTO nat FORMAT Native', nativeBody(ROWS).subarray(0, 1000));
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.text).toMatch(/Code: \d+\. DB::Exception: .*(Cannot read all data|ATTEMPT_TO_READ_AFTER_EOF)/s);
    expect(await scalar('SELECT count() FROM nat')).toBe('0');
  });
});

describe('compressed request bodies', () => {
  const body = Buffer.concat([Buffer.from('INSERT INTO cmp FORMAT Native\n'), nativeBody(ROWS)]);

  /** A ClickHouse compressed block (checksum not verified by the bed). */
  function block(method: number, payload: Buffer, raw: number): Buffer {
    const h = Buffer.alloc(25);
    h[16] = method;
    h.writeUInt32LE(payload.length + 9, 17);
    h.writeUInt32LE(raw, 21);
    return Buffer.concat([h, payload]);
  }

  beforeEach(async () => {
    await scalar('DROP TABLE IF EXISTS cmp');
    await scalar('CREATE TABLE cmp (a UInt32) ENGINE = MergeTree ORDER BY a');
  });

  it.each([
    ['gzip', async () => zlib.gzipSync(body)],
    ['deflate', async () => zlib.deflateSync(body)],
    ['br', async () => zlib.brotliCompressSync(body)],
    ['zstd', async () => zstd.compress(body)],
    ['lz4', async () => lz4.compressFrameSync(body)],
  ])('decodes Content-Encoding %s', async (encoding, compress) => {
    const r = await post('', await compress(), { 'Content-Encoding': encoding });
    expect(r).toMatchObject({ status: 200, writtenRows: ROWS });
    expect(await scalar('SELECT count(), sum(a) FROM cmp')).toBe(`${ROWS}\t${(ROWS * (ROWS - 1)) / 2}`);
  });

  it('decodes decompress=1 blocks (LZ4 and uncompressed)', async () => {
    const half = Math.floor(body.length / 2);
    const first = body.subarray(0, half);
    const lzBlock = lz4.compressSync(first).subarray(4); // lz4-napi prefixes the size; drop it
    const framed = Buffer.concat([
      block(0x82, lzBlock, first.length),
      block(0x02, body.subarray(half), body.length - half),
    ]);
    const r = await post('', framed, {}, '&decompress=1');
    expect(r).toMatchObject({ status: 200, writtenRows: ROWS });
  });

  it('refuses an unknown Content-Encoding with NOT_IMPLEMENTED', async () => {
    const r = await post('', body, { 'Content-Encoding': 'xz' });
    expect(r.status).toBe(501);
    expect(r.text).toContain('NOT_IMPLEMENTED');
  });
});
