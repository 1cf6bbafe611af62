import { resolveSpec } from '../api/defaults';
import type { LogPipeline } from '../api/types';
import { renderWorkerConfig } from './configmap';
import { buildDeployment, secretsHash } from './deployment';
import { SECRETS_HASH_ANNOTATION } from './labels';

const lp: LogPipeline = {
  apiVersion: 'logpipeline.io/v1alpha1',
  kind: 'LogPipeline',
  metadata: { name: 'fw', namespace: 'logs', uid: 'uid-1' },
  spec: {
    kafka: { bootstrapServers: ['kafka:9092'] },
    clickhouse: {
      url: 'http://ch:8123',
      database: 'logs',
      table: 'fw',
      credentialsSecretRef: { name: 'ch' },
    },
    workers: {
      env: [
        { name: 'LP_CLICKHOUSE_URL', value: 'http://evil:8123' },
        { name: 'TZ', value: 'UTC' },
      ],
    },
  },
};
const columns = [{ name: 'ts', type: 'DateTime64(3)', source: 'timestamp' }];

describe('secrets hash in the pod template', () => {
  it('changes with any referenced Secret version and ignores order', () => {
    const a = secretsHash([
      { name: 'ch', resourceVersion: '10' },
      { name: 'key', resourceVersion: '11' },
    ]);
    expect(
      secretsHash([
        { name: 'key', resourceVersion: '11' },
        { name: 'ch', resourceVersion: '10' },
      ]),
    ).toBe(a);
    expect(
      secretsHash([
        { name: 'ch', resourceVersion: '12' },
        { name: 'key', resourceVersion: '11' },
      ]),
    ).not.toBe(a);
  });

  it('is annotated on the pod template only when given, so a rotation rolls the workers', () => {
    const spec = resolveSpec(lp);
    const config = renderWorkerConfig(spec, columns);
    const withHash = buildDeployment(spec, config, 'abc');
    expect(withHash.spec.template.metadata.annotations[SECRETS_HASH_ANNOTATION]).toBe('abc');
    const without = buildDeployment(spec, config);
    expect(SECRETS_HASH_ANNOTATION in without.spec.template.metadata.annotations).toBe(false);
  });

  it('never passes a reserved LP_ env from the spec to the container', () => {
    const spec = resolveSpec(lp);
    const env = buildDeployment(spec, renderWorkerConfig(spec, columns)).spec.template.spec.containers[0].env;
    expect(env.filter((e) => e.name === 'LP_CLICKHOUSE_URL')).toEqual([]);
    expect(env.find((e) => e.name === 'TZ')?.value).toBe('UTC');
  });
});
