/**
 * The daily seal (docs/compliance.md, "Daily sealed evidence"): for one complete day of a table,
 * streams the canonical export through SHA-256, records the chain heads and checkpoints covering
 * the day and the retention in force in a canonical manifest, signs it with Ed25519, has an RFC
 * 3161 TSA timestamp it, and stores the three beside the data in `<table>_seals`. `exportSeal`
 * turns a stored seal back into the plain files an auditor checks with openssl and sha256sum.
 * Idempotent: a day already sealed is never sealed again.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { KeyObject } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { requestTimeStamp, type TsaClientAuth } from '../../../common/src/integrity/tsa-request';
import { buildDayExportQuery, streamDayExport, type ExportDigest } from './seal-export';
import {
  buildSealManifest,
  dayWindow,
  incompleteReason,
  manifestBytes,
  manifestDigest,
  sealFileNames,
  signManifest,
  type SealManifest,
} from './seal-manifest';
import * as S from './seal-store';
import { describeTable } from './verify-table';

/** A seal that cannot be made now, with a CamelCase reason (DayIncomplete, NoSealTable, …). */
export class SealRefused extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** What to seal, with which key and TSA. */
export interface SealOptions {
  database: string;
  table: string;
  day: string;
  /** IANA time zone of the day's boundaries; default UTC. */
  timeZone?: string;
  /** `namespace/name`; default: the one pipeline whose links cover the day. */
  pipeline?: string;
  signingKey: KeyObject;
  /** RFC 3161 TSA; without one the seal carries no token (the CLI requires --no-timestamp for that). */
  tsaUrl?: string;
  tsaAuth?: TsaClientAuth;
  tsaTimeoutMs?: number;
  /** Late lines are awaited this long after the day ends. */
  graceMs: number;
  /** Clock (epoch ms); read for the completeness check and again for created_at, after the export. */
  now?: () => number;
  /** Also write the exported files here (export, manifest, signature, token). */
  outDir?: string;
  tables?: Partial<S.SealTables>;
}

/** The result: a new seal, or the one already stored for the day. */
export interface SealResult {
  status: 'sealed' | 'already-sealed';
  record: S.SealRecord;
  /** Files written with outDir. */
  files?: string[];
}

function tablesOf(opts: { database: string; table: string; tables?: Partial<S.SealTables> }): S.SealTables {
  return { ...S.sealTables(opts.database, opts.table), ...opts.tables };
}

async function resolvePipeline(
  client: ClickHouseClient,
  t: S.SealTables,
  given: string | undefined,
  win: { fromMs: number; toMs: number },
): Promise<string> {
  if (given !== undefined) return given;
  const found = await S.pipelinesOfDay(client, t, win.fromMs, win.toMs);
  if (found.length > 1)
    throw new SealRefused(
      'AmbiguousPipeline',
      `several pipelines write ${t.table}: choose one with --pipeline`,
    );
  return found[0] ?? '';
}

/** Writes the auditor's files of a stored seal (the export file is written by the caller). */
function writeSealFiles(dir: string, record: S.SealRecord, table: string): string[] {
  const names = sealFileNames(table, record.day);
  const files: Array<[string, Buffer]> = [
    [names.manifest, Buffer.from(record.manifest, 'utf8')],
    [names.signature, Buffer.from(record.signature, 'base64')],
  ];
  if (record.tsa_token) files.push([names.token, Buffer.from(record.tsa_token, 'base64')]);
  for (const [name, bytes] of files) fs.writeFileSync(path.join(dir, name), bytes);
  return [names.export, ...files.map(([n]) => n)].map((n) => path.join(dir, n));
}

/** Seals one day of a table; refuses incomplete days, returns the stored seal for a day already sealed. */
export async function sealDay(client: ClickHouseClient, opts: SealOptions): Promise<SealResult> {
  const t = tablesOf(opts);
  const clock = opts.now ?? Date.now;
  const now = clock();
  const win = dayWindow(opts.day, opts.timeZone);
  const early = incompleteReason(opts.day, now, opts.graceMs, opts.timeZone);
  if (early) throw new SealRefused('DayIncomplete', early);
  if (!(await S.sealTableExists(client, t)))
    throw new SealRefused(
      'NoSealTable',
      `${t.database}.${t.sealTable} does not exist: the operator creates it for pipelines with integrity enabled`,
    );
  const existing = await S.readSeal(client, t, opts.day);
  if (existing) return { status: 'already-sealed', record: existing };
  const pipeline = await resolvePipeline(client, t, opts.pipeline, win);
  const desc = await describeTable(client, t.database, t.table);
  const signed = await S.signedColumns(client, t);
  const columns = signed?.columns ?? desc.columns;
  const timeColumn = signed?.timeColumn ?? 'ts';
  if (opts.outDir) fs.mkdirSync(opts.outDir, { recursive: true });
  const exportFile = opts.outDir && path.join(opts.outDir, sealFileNames(t.table, opts.day).export);
  const query = buildDayExportQuery({ ...t, columns, timeColumn, ...win, hasLine: desc.hasLine });
  let record: S.SealRecord;
  try {
    record = await makeRecord(
      client,
      t,
      opts,
      { pipeline, columns, timeColumn, retentionMs: desc.retentionMs, clock },
      query,
      exportFile,
    );
  } catch (err) {
    // No half seal on disk: the export without its manifest, signature and token is no evidence.
    if (exportFile) fs.rmSync(exportFile, { force: true });
    throw err;
  }
  await S.insertSeal(client, t, record);
  const stored = (await S.readSeal(client, t, opts.day)) ?? record;
  const files = opts.outDir ? writeSealFiles(opts.outDir, stored, t.table) : undefined;
  return { status: stored.manifest === record.manifest ? 'sealed' : 'already-sealed', record: stored, files };
}

/** Streams the export, gathers the chain facts, and signs and timestamps the manifest (created_at = after the export). */
async function makeRecord(
  client: ClickHouseClient,
  t: S.SealTables,
  opts: SealOptions,
  facts: {
    pipeline: string;
    columns: SealManifest['columns'];
    timeColumn: string;
    retentionMs?: number;
    clock: () => number;
  },
  query: string,
  exportFile: string | undefined,
): Promise<S.SealRecord> {
  const win = dayWindow(opts.day, opts.timeZone);
  const { pipeline, columns, timeColumn } = facts;
  const digest = await streamDayExport(client, query, exportFile);
  const manifest = buildSealManifest(
    {
      pipeline,
      database: t.database,
      table: t.table,
      day: opts.day,
      timeZone: opts.timeZone,
      timeColumn,
      columns,
      export: digest,
      heads: await S.chainHeadsOfDay(client, t, pipeline || undefined, win.fromMs, win.toMs),
      checkpoints: await S.checkpointsOfDay(client, t, win.fromMs, win.toMs),
      retentionMs: facts.retentionMs,
      createdAtMs: facts.clock(),
    },
    opts.signingKey,
  );
  return signAndTimestamp(manifest, digest, opts);
}

async function signAndTimestamp(
  manifest: SealManifest,
  digest: ExportDigest,
  opts: SealOptions,
): Promise<S.SealRecord> {
  const bytes = manifestBytes(manifest);
  const signature = signManifest(bytes, opts.signingKey);
  let token = '';
  if (opts.tsaUrl) {
    try {
      const reply = await requestTimeStamp(
        opts.tsaUrl,
        manifestDigest(bytes),
        opts.tsaTimeoutMs ?? 30_000,
        opts.tsaAuth,
      );
      token = reply.token.toString('base64');
    } catch (err) {
      // No seal without its timestamp: a token cannot be added later without re-dating the manifest.
      throw new SealRefused('TimestampFailed', `TSA ${opts.tsaUrl}: ${(err as Error).message}`);
    }
  }
  return {
    day: manifest.day,
    pipeline: manifest.pipeline,
    table_name: manifest.table,
    created_at_ms: manifest.created_at,
    export_sha256: digest.sha256,
    row_count: digest.rows,
    manifest: bytes.toString('utf8'),
    signature: signature.toString('base64'),
    tsa_token: token,
  };
}

/** Result of exportSeal: the files, and whether the rows in ClickHouse still give the sealed export. */
export interface ExportResult {
  files: string[];
  record: S.SealRecord;
  /** The regenerated export's digest, and whether it matches the manifest. */
  digest: ExportDigest;
  matches: boolean;
}

/**
 * Writes a stored seal as files into `outDir`: the export regenerated from the table (same rows,
 * same bytes), the manifest, its signature and its timestamp token. A regenerated export that
 * differs from the manifest means the rows changed after sealing; `matches` is then false.
 */
export async function exportSeal(
  client: ClickHouseClient,
  opts: { database: string; table: string; day: string; outDir: string; tables?: Partial<S.SealTables> },
): Promise<ExportResult> {
  const t = tablesOf(opts);
  const record = await S.readSeal(client, t, opts.day);
  if (!record) throw new SealRefused('NotSealed', `${t.database}.${t.table} has no seal for ${opts.day}`);
  const manifest = JSON.parse(record.manifest) as SealManifest;
  const desc = await describeTable(client, t.database, t.table);
  fs.mkdirSync(opts.outDir, { recursive: true });
  const query = buildDayExportQuery({
    ...t,
    columns: manifest.columns,
    timeColumn: manifest.time_column,
    fromMs: manifest.from_ms,
    toMs: manifest.to_ms,
    hasLine: desc.hasLine,
  });
  const digest = await streamDayExport(client, query, path.join(opts.outDir, manifest.export.file));
  const files = writeSealFiles(opts.outDir, record, t.table);
  const matches =
    digest.sha256 === manifest.export.sha256 &&
    digest.rows === manifest.export.rows &&
    digest.bytes === manifest.export.bytes;
  return { files, record, digest, matches };
}
