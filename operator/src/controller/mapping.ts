/**
 * Maps watch events to the pipeline keys to reconcile: a child to its controller owner, a Secret
 * to the pipelines that reference it (an index kept up to date from pipeline events), a pipeline
 * update to itself only when something we act on changed (not our own status writes).
 */
import { API_VERSION, KIND, type LogPipeline } from '../api/types';
import type { OwnerRef } from '../status/views';
import { ReverseIndex } from './reverse-index';

/** The pipeline key of a child's controller owner reference, if it is a LogPipeline. */
export function ownerKey(meta: { namespace: string; ownerReferences: OwnerRef[] }): string | undefined {
  const owner = meta.ownerReferences.find(
    (o) => o.controller && o.kind === KIND && o.apiVersion.split('/')[0] === API_VERSION.split('/')[0],
  );
  return owner ? `${meta.namespace}/${owner.name}` : undefined;
}

/** True when an update of a pipeline needs a reconcile (spec, deletion, finalizers, metadata). */
export function pipelineChanged(oldLp: LogPipeline, lp: LogPipeline): boolean {
  const a = oldLp.metadata;
  const b = lp.metadata;
  return (
    a.generation !== b.generation ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    JSON.stringify(a.finalizers) !== JSON.stringify(b.finalizers) ||
    JSON.stringify(a.labels) !== JSON.stringify(b.labels) ||
    JSON.stringify(a.annotations) !== JSON.stringify(b.annotations) ||
    a.uid !== b.uid
  );
}

/** Secret names a pipeline's raw spec references (no defaults needed: names have none). */
export function secretNamesOf(lp: LogPipeline): string[] {
  const s = lp.spec ?? ({} as LogPipeline['spec']);
  const names = [
    s.clickhouse?.credentialsSecretRef?.name,
    s.clickhouse?.adminCredentialsSecretRef?.name,
    s.kafka?.sasl?.secretRef?.name,
    s.kafka?.tls?.caSecretRef?.name,
    s.integrity?.signingKeySecretRef?.name,
    s.ingest?.syslog?.tls?.secretRef?.name,
    s.ingest?.syslog?.tls?.clientCASecretRef?.name,
  ];
  return [...new Set(names.filter((n): n is string => typeof n === 'string' && n.length > 0))];
}

/** Index "namespace/secret" -> pipeline keys, maintained from pipeline events. */
export class SecretIndex {
  private readonly index = new ReverseIndex();

  /** Records (or replaces) the Secrets `lp` references. */
  set(lp: LogPipeline): void {
    const secrets = secretNamesOf(lp).map((s) => `${lp.metadata.namespace}/${s}`);
    this.index.set(`${lp.metadata.namespace}/${lp.metadata.name}`, secrets);
  }

  /** Forgets a pipeline. */
  remove(pipelineKey: string): void {
    this.index.remove(pipelineKey);
  }

  /** Pipelines referencing Secret `namespace/name`. */
  pipelinesFor(namespace: string, name: string): string[] {
    return this.index.namesFor([`${namespace}/${name}`]);
  }
}
