/**
 * What the operator refuses to put into a worker pod, whatever the spec says. Workers receive the
 * integrity signing key and the database passwords as env, so the image that runs them and the env
 * that configures them are part of the trust boundary (docs/operations.md, "Threat model"):
 * - the image must come from an allowlist the operator is started with (the chart's
 *   `worker.allowedImages`, by default only the chart's own worker repository);
 * - env names `LP_*` (the worker's own configuration: LP_CLICKHOUSE_URL would silently redirect rows)
 *   are reserved; admission refuses them (rule `reserved-worker-env`), this re-checks stored objects
 *   (admitted before the rule existed).
 */
import type { ResolvedSpec } from './defaults';

/** Prefix of the env names a pipeline may not set on its workers. */
export const RESERVED_ENV_PREFIX = 'LP_';

/** True when `name` is reserved for the operator. */
export function isReservedEnv(name: string): boolean {
  return name.startsWith(RESERVED_ENV_PREFIX);
}

/** A spec the operator refuses to run: `reason` is the condition reason, the message names the field. */
export class WorkerPolicyError extends Error {
  constructor(
    readonly reason: 'ImageNotAllowed' | 'ReservedEnv',
    message: string,
  ) {
    super(message);
  }
}

/** The repository part of an image reference (no tag, no digest). */
export function imageRepository(image: string): string {
  const at = image.indexOf('@');
  const noDigest = at >= 0 ? image.slice(0, at) : image;
  const colon = noDigest.lastIndexOf(':');
  // A colon before the last slash belongs to a registry port, not a tag.
  return colon > noDigest.lastIndexOf('/') ? noDigest.slice(0, colon) : noDigest;
}

/**
 * True when `image` is allowed: its repository equals an entry, or an entry ending in `/` is a
 * prefix of it (a whole registry path). An empty allowlist allows nothing.
 */
export function imageAllowed(image: string, allowlist: readonly string[]): boolean {
  const repo = imageRepository(image);
  return allowlist.some((entry) => (entry.endsWith('/') ? repo.startsWith(entry) : repo === entry));
}

/** Throws WorkerPolicyError when the resolved spec breaks the image allowlist or sets a reserved env. */
export function checkWorkerPolicy(spec: ResolvedSpec, allowlist: readonly string[]): void {
  if (!imageAllowed(spec.workers.image, allowlist)) {
    throw new WorkerPolicyError(
      'ImageNotAllowed',
      `spec.workers.image "${spec.workers.image}" is not in the operator's worker image allowlist ` +
        `(${allowlist.join(', ') || 'empty'}): workers receive the signing key and database passwords, ` +
        'so only allowed images run them (Helm value worker.allowedImages)',
    );
  }
  const reserved = (spec.workers.env as Array<{ name?: unknown }>)
    .map((e) => e?.name)
    .filter((n): n is string => typeof n === 'string' && isReservedEnv(n));
  if (reserved.length > 0) {
    throw new WorkerPolicyError(
      'ReservedEnv',
      `spec.workers.env sets ${reserved.join(', ')}: names starting with ${RESERVED_ENV_PREFIX} are reserved for the operator`,
    );
  }
}
