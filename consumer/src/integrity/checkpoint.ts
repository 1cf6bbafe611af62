/**
 * Signed checkpoints (docs/compliance.md, "Checkpoints"): the chain heads of the partitions a
 * worker owns, as canonical JSON (keys sorted, no whitespace, integers only), signed with the
 * pipeline's Ed25519 key. A checkpoint pins every link up to its heads: rewriting history after
 * it would need the private key (and, with a TSA, a new timestamp from the past).
 */
import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import type { ChainHead } from './chain-state';
import type { CanonicalColumn } from './canonical';

/** The signed content of a checkpoint. */
export interface CheckpointPayload {
  v: 1;
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
}): CheckpointPayload {
  return {
    v: 1,
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
  if (payload?.type !== 'logpipeline-checkpoint' || payload.v !== 1 || !Array.isArray(payload.heads))
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
