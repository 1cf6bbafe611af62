/**
 * Signed checkpoints (docs/compliance.md, "Checkpoints"): the chain heads of the partitions a
 * worker owns, as canonical JSON (keys sorted, no whitespace, integers only), signed with the
 * pipeline's Ed25519 key. A checkpoint pins every link up to its heads: rewriting history after
 * it would need the private key (and, with a TSA, a new timestamp from the past).
 */
import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import type { CanonicalColumn } from './canonical-ops';

/** A chain head as signed into checkpoints. */
export interface ChainHead {
  partition: number;
  lastOffset: number;
  link: string;
}

/** prev of the first checkpoint of a chain (64 zeros). */
export const GENESIS_CHECKPOINT = '0'.repeat(64);

/**
 * The signed content of a checkpoint. v1: heads only. v2 (written since) adds `prev` (the id of the
 * previous checkpoint of this pipeline and table, so a deleted checkpoint is detected),
 * `interval_ms` (the writer's checkpoint interval, so verify can bound the gaps between them) and
 * `retention_ms` (the retention in force, so verify never accepts a silently shortened horizon).
 */
export interface CheckpointPayload {
  v: 1 | 2;
  type: 'logpipeline-checkpoint';
  pipeline: string;
  database: string;
  table: string;
  /** Epoch ms; equals the row's created_at. */
  created_at: number;
  /** Fingerprint of the signing key (keyFingerprint). */
  key: string;
  /** The canonical column list the batch digests were computed over. */
  columns: CanonicalColumn[];
  time_column: string;
  heads: Array<{ partition: number; last_offset: number; link: string }>;
  /** v2: checkpointId() of the previous checkpoint, or GENESIS_CHECKPOINT. */
  prev?: string;
  /** v2: the writer's checkpoint interval. */
  interval_ms?: number;
  /** v2: the table's delete-after retention in force when signing (absent: none known). */
  retention_ms?: number;
  /**
   * Ranges the writer stored without a link since its previous checkpoint, and why (absent: none).
   * The operator reads them into the ChainLinked condition (operator/src/compliance/chain-watch.ts).
   */
  unlinked?: UnlinkedRange[];
}

/** A batch stored without its integrity link: the offsets it covers and the cause (one line). */
export interface UnlinkedRange {
  partition: number;
  first_offset: number;
  last_offset: number;
  reason: string;
}

/** A checkpoint's id: hex SHA-256 of its canonical text (what `prev` and sealed manifests name). */
export function checkpointId(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

/** Canonical JSON: object keys sorted by UTF-16 code units, no whitespace; only safe integers as numbers. */
export function canonicalJson(value: unknown): string {
  const v = value as Json;
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw new RangeError(`canonical JSON allows only safe integers, got ${v}`);
    return String(v);
  }
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (typeof v === 'object') {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`).join(',')}}`;
  }
  throw new RangeError(`canonical JSON cannot encode ${typeof v}`);
}

/** `sha256:<hex>` of the key's SubjectPublicKeyInfo DER (accepts a private or public key). */
export function keyFingerprint(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return `sha256:${createHash('sha256')
    .update(pub.export({ type: 'spki', format: 'der' }))
    .digest('hex')}`;
}

/** Loads an Ed25519 private key from PEM (PKCS#8); throws when it is not Ed25519. */
export function loadSigningKey(pem: string): KeyObject {
  const key = createPrivateKey(pem);
  if (key.asymmetricKeyType !== 'ed25519')
    throw new RangeError(`signing key must be Ed25519, got ${key.asymmetricKeyType}`);
  return key;
}

/** Loads an Ed25519 public key from PEM (SPKI, or derives it from a private key PEM). */
export function loadVerifyKey(pem: string): KeyObject {
  const key = createPublicKey(pem);
  if (key.asymmetricKeyType !== 'ed25519')
    throw new RangeError(`public key must be Ed25519, got ${key.asymmetricKeyType}`);
  return key;
}

/** Builds the payload of a checkpoint (heads sorted by partition). */
export function buildCheckpointPayload(args: {
  pipeline: string;
  database: string;
  table: string;
  createdAtMs: number;
  key: KeyObject;
  columns: readonly CanonicalColumn[];
  timeColumn: string;
  heads: readonly ChainHead[];
  /** Previous checkpoint id (GENESIS_CHECKPOINT for the first); undefined writes a v1 payload. */
  prev?: string;
  intervalMs?: number;
  retentionMs?: number;
}): CheckpointPayload {
  const v2 =
    args.prev === undefined
      ? {}
      : {
          prev: args.prev,
          interval_ms: args.intervalMs ?? 0,
          ...(args.retentionMs !== undefined ? { retention_ms: args.retentionMs } : {}),
        };
  return {
    v: args.prev === undefined ? 1 : 2,
    type: 'logpipeline-checkpoint',
    pipeline: args.pipeline,
    database: args.database,
    table: args.table,
    created_at: args.createdAtMs,
    key: keyFingerprint(args.key),
    columns: args.columns.map((c) => ({ name: c.name, type: c.type })),
    time_column: args.timeColumn,
    heads: [...args.heads]
      .sort((a, b) => a.partition - b.partition)
      .map((h) => ({ partition: h.partition, last_offset: h.lastOffset, link: h.link })),
    ...v2,
  };
}

/** Signs the canonical JSON text with Ed25519; returns base64. */
export function signCheckpoint(text: string, key: KeyObject): string {
  return sign(null, Buffer.from(text, 'utf8'), key).toString('base64');
}

/** SHA-256 of the canonical JSON text: the message imprint sent to the TSA. */
export function checkpointDigest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Why a stored checkpoint does not verify, or null when it does. */
export type CheckpointProblem = null | 'malformed' | 'not-canonical' | 'unknown-key' | 'bad-signature';

/**
 * Checks a stored checkpoint against a trusted public key: the text must parse, be canonical,
 * name this key's fingerprint, and carry a valid signature. Returns the payload when it verifies.
 */
export function verifyCheckpoint(
  text: string,
  signatureB64: string,
  trusted: KeyObject,
): { problem: CheckpointProblem; payload?: CheckpointPayload } {
  let payload: CheckpointPayload;
  try {
    payload = JSON.parse(text) as CheckpointPayload;
  } catch {
    return { problem: 'malformed' };
  }
  if (payload?.type !== 'logpipeline-checkpoint' || !Array.isArray(payload.heads))
    return { problem: 'malformed' };
  if (payload.v !== 1 && payload.v !== 2) return { problem: 'malformed' };
  if (payload.v === 2 && !(typeof payload.prev === 'string' && /^[0-9a-f]{64}$/.test(payload.prev)))
    return { problem: 'malformed' };
  let canonical: string;
  try {
    canonical = canonicalJson(payload);
  } catch {
    return { problem: 'malformed' };
  }
  if (canonical !== text) return { problem: 'not-canonical', payload };
  if (payload.key !== keyFingerprint(trusted)) return { problem: 'unknown-key', payload };
  const ok = verify(null, Buffer.from(text, 'utf8'), trusted, Buffer.from(signatureB64, 'base64'));
  return ok ? { problem: null, payload } : { problem: 'bad-signature', payload };
}
