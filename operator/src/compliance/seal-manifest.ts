/**
 * The daily seal's manifest (docs/compliance.md, "Daily sealed evidence"): canonical JSON describing
 * one day's canonical export of a table — its SHA-256 and row count, the hash-chain heads and the
 * checkpoints that cover the day, the retention horizon in force — signed with the pipeline's
 * Ed25519 key and timestamped by an RFC 3161 TSA. Pure: no I/O. Days: seal-days.ts.
 */
import { createHash, sign, verify, type KeyObject } from 'node:crypto';
import type { CanonicalColumn } from '../../../common/src/integrity/canonical-ops';
import { canonicalJson, keyFingerprint } from '../../../common/src/integrity/checkpoint';
import { dayWindow } from './seal-days';

export { DAY_MS, dayWindow, formatDay, incompleteReason, lastCompleteDay } from './seal-days';

/** Name of the export format; its definition is docs/compliance.md, "Canonical export". */
export const EXPORT_FORMAT = 'logpipeline-canonical-tsv-v1';

/** A partition's chain over the day: the first and last link whose batch has rows on the day. */
export interface SealChainHead {
  partition: number;
  links: number;
  first_offset: number;
  last_offset: number;
  /** The link of the first batch's predecessor chain position (its prev_link) and of the last batch. */
  prev_link: string;
  link: string;
}

/** A checkpoint covering the day: its id (SHA-256 of the signed heads text) and creation time. */
export interface SealCheckpointRef {
  id: string;
  created_at: number;
}

/** The signed content of a seal. */
export interface SealManifest {
  v: 1;
  type: 'logpipeline-seal';
  pipeline: string;
  database: string;
  table: string;
  /** YYYY-MM-DD in time_zone. */
  day: string;
  /** IANA time zone of the day's boundaries (UTC unless configured). */
  time_zone: string;
  /** The day's window on the time column: from_ms <= t < to_ms. */
  from_ms: number;
  to_ms: number;
  time_column: string;
  columns: Array<{ name: string; type: string }>;
  export: {
    format: typeof EXPORT_FORMAT;
    /** File name of the gzip-compressed export in an exported seal. */
    file: string;
    compression: 'gzip';
    /** SHA-256 (hex) of the uncompressed export: `gzip -dc <file> | sha256sum`. */
    sha256: string;
    rows: number;
    bytes: number;
  };
  chain: { links: number; heads: SealChainHead[] };
  checkpoints: SealCheckpointRef[];
  retention: { delete_after_ms: number | null; horizon_ms: number | null };
  created_at: number;
  /** Fingerprint of the signing key (`sha256:<hex of SPKI DER>`), as in checkpoints. */
  key: string;
}

/** File names of an exported seal (the auditor's set). */
export function sealFileNames(table: string, day: string) {
  const base = `${table}-${day}`;
  return {
    export: `${base}.tsv.gz`,
    manifest: `${base}.manifest.json`,
    signature: `${base}.manifest.sig`,
    token: `${base}.manifest.tst`,
  };
}

/** What buildSealManifest needs besides the key. */
export interface SealFacts {
  pipeline: string;
  database: string;
  table: string;
  day: string;
  /** Default UTC. */
  timeZone?: string;
  timeColumn: string;
  columns: readonly CanonicalColumn[];
  export: { sha256: string; rows: number; bytes: number };
  heads: readonly SealChainHead[];
  checkpoints: readonly SealCheckpointRef[];
  retentionMs?: number;
  createdAtMs: number;
}

/** Builds the manifest (heads sorted by partition, checkpoints by time then id). */
export function buildSealManifest(facts: SealFacts, key: KeyObject): SealManifest {
  const timeZone = facts.timeZone ?? 'UTC';
  const { fromMs, toMs } = dayWindow(facts.day, timeZone);
  const heads = [...facts.heads].sort((a, b) => a.partition - b.partition);
  return {
    v: 1,
    type: 'logpipeline-seal',
    pipeline: facts.pipeline,
    database: facts.database,
    table: facts.table,
    day: facts.day,
    time_zone: timeZone,
    from_ms: fromMs,
    to_ms: toMs,
    time_column: facts.timeColumn,
    columns: facts.columns.map((c) => ({ name: c.name, type: c.type })),
    export: {
      format: EXPORT_FORMAT,
      file: sealFileNames(facts.table, facts.day).export,
      compression: 'gzip',
      ...facts.export,
    },
    chain: { links: heads.reduce((n, h) => n + h.links, 0), heads: heads.map((h) => ({ ...h })) },
    checkpoints: [...facts.checkpoints].sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1)),
    retention: {
      delete_after_ms: facts.retentionMs ?? null,
      horizon_ms: facts.retentionMs === undefined ? null : facts.createdAtMs - facts.retentionMs,
    },
    created_at: facts.createdAtMs,
    key: keyFingerprint(key),
  };
}

/** The manifest's exact bytes (canonical JSON, UTF-8, no trailing newline): what is signed and timestamped. */
export function manifestBytes(manifest: SealManifest): Buffer {
  return Buffer.from(canonicalJson(manifest), 'utf8');
}

/** SHA-256 of the manifest bytes: the RFC 3161 message imprint. */
export function manifestDigest(bytes: Buffer): Buffer {
  return createHash('sha256').update(bytes).digest();
}

/** Raw 64-byte Ed25519 signature of the manifest bytes (what `openssl pkeyutl -verify -rawin` checks). */
export function signManifest(bytes: Buffer, key: KeyObject): Buffer {
  return sign(null, bytes, key);
}

/** Why manifest bytes and signature do not verify against a trusted key, or the parsed manifest. */
export function checkManifest(
  bytes: Buffer,
  signature: Buffer,
  trusted: KeyObject | undefined,
): { problem: string | null; manifest?: SealManifest } {
  let manifest: SealManifest;
  try {
    manifest = JSON.parse(bytes.toString('utf8')) as SealManifest;
  } catch {
    return { problem: 'manifest is not JSON' };
  }
  if (manifest?.type !== 'logpipeline-seal' || manifest.v !== 1) return { problem: 'not a seal manifest' };
  try {
    if (canonicalJson(manifest) !== bytes.toString('utf8'))
      return { problem: 'manifest is not canonical JSON', manifest };
  } catch (err) {
    return { problem: `manifest is not canonical JSON: ${(err as Error).message}`, manifest };
  }
  if (!trusted) return { problem: null, manifest };
  if (manifest.key !== keyFingerprint(trusted))
    return { problem: `manifest names key ${manifest.key}, not the trusted key`, manifest };
  const ok = verify(null, bytes, trusted, signature);
  return ok
    ? { problem: null, manifest }
    : { problem: 'Ed25519 signature over the manifest is invalid', manifest };
}
