/** Which Secrets a pipeline references, and why (for the SecretNotFound message). */
import type { ResolvedSpec } from '../api/defaults';
import { secretsHash } from '../desired/deployment';
import type { SecretView } from '../status/views';

/** One referenced Secret. */
export interface SecretRef {
  name: string;
  purpose: string;
}

/** Every Secret `spec` needs, deduplicated by name (first purpose wins). */
export function referencedSecrets(spec: ResolvedSpec): SecretRef[] {
  const refs: SecretRef[] = [];
  const add = (name: string | undefined, purpose: string) => {
    if (name && !refs.some((r) => r.name === name)) refs.push({ name, purpose });
  };
  add(spec.clickhouse.credentials?.secretName, 'ClickHouse credentials');
  add(spec.clickhouse.adminCredentials?.secretName, 'ClickHouse admin credentials');
  add(spec.kafka.sasl?.secretName, 'Kafka SASL credentials');
  if (spec.kafka.tls?.enabled) add(spec.kafka.tls.caSecretName, 'Kafka CA bundle');
  if (spec.integrity.enabled) add(spec.integrity.signingKey?.secretName, 'integrity signing key');
  if (spec.integrity.enabled) add(spec.integrity.tsaCredentialsSecret, 'TSA credentials');
  return refs;
}

/**
 * Hash of the referenced Secrets' cached resourceVersions, for the pod template (a rotation rolls
 * the workers); undefined when the spec references none.
 */
export function secretsVersion(
  spec: ResolvedSpec,
  secrets: { get(namespace: string, name: string): SecretView | undefined },
): string | undefined {
  const refs = referencedSecrets(spec);
  if (refs.length === 0) return undefined;
  return secretsHash(
    refs.map((r) => ({
      name: r.name,
      resourceVersion: secrets.get(spec.namespace, r.name)?.metadata.resourceVersion ?? '',
    })),
  );
}
