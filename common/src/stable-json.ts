/**
 * Stable JSON for change detection: the same value always renders to the same text (object keys
 * sorted at every level, undefined fields dropped), so a hash of it changes only when the content
 * does. Used for rendered worker configs, object digests and status comparison. Not the signed
 * checkpoint form: that is `canonicalJson` in common/src/integrity/checkpoint.ts (integers only,
 * no whitespace, refuses what it cannot encode).
 */
import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every level and undefined fields dropped; `indent` spaces when > 0. */
export function stableJson(value: unknown, indent = 0): string {
  return JSON.stringify(sortKeys(value), null, indent || undefined);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = sortKeys(v);
  }
  return out;
}

/** Lowercase hex SHA-256 of a UTF-8 string, optionally cut to its first `length` digits. */
export function sha256Hex(text: string, length = 64): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, length);
}
