import { resolveSpec } from './defaults';
import type { LogPipeline } from './types';
import { checkWorkerPolicy, imageAllowed, imageRepository, isReservedEnv } from './worker-policy';

const lp = (workers: object): LogPipeline => ({
  apiVersion: 'logpipeline.io/v1alpha1',
  kind: 'LogPipeline',
  metadata: { name: 'fw', namespace: 'logs' },
  spec: {
    kafka: { bootstrapServers: ['kafka:9092'] },
    clickhouse: { url: 'http://ch:8123', database: 'logs', table: 'fw' },
    workers,
  },
});

describe('worker policy', () => {
  it('parses repositories with registry ports, tags and digests', () => {
    expect(imageRepository('ghcr.io/a/b:1.0')).toBe('ghcr.io/a/b');
    expect(imageRepository('registry:5000/a/b')).toBe('registry:5000/a/b');
    expect(imageRepository('registry:5000/a/b:2@sha256:00')).toBe('registry:5000/a/b');
  });

  it('allows exact repositories and registry paths ending in /', () => {
    const list = ['ghcr.io/logpipeline/logpipeline-worker', 'mirror.corp/lp/'];
    expect(imageAllowed('ghcr.io/logpipeline/logpipeline-worker:0.2.0', list)).toBe(true);
    expect(imageAllowed('ghcr.io/logpipeline/logpipeline-worker-evil:1', list)).toBe(false);
    expect(imageAllowed('mirror.corp/lp/worker@sha256:ab', list)).toBe(true);
    expect(imageAllowed('evil.io/worker:1', list)).toBe(false);
    expect(imageAllowed('anything', [])).toBe(false);
  });

  it('refuses a foreign image and reserved env with the field and a reason', () => {
    const allow = ['ghcr.io/logpipeline/logpipeline-worker'];
    expect(() => checkWorkerPolicy(resolveSpec(lp({})), allow)).not.toThrow();
    expect(() => checkWorkerPolicy(resolveSpec(lp({ image: 'evil.io/x:1' })), allow)).toThrow(
      expect.objectContaining({
        reason: 'ImageNotAllowed',
        message: expect.stringContaining('spec.workers.image'),
      }),
    );
    expect(() =>
      checkWorkerPolicy(resolveSpec(lp({ env: [{ name: 'LP_KAFKA_BROKERS', value: 'x:9092' }] })), allow),
    ).toThrow(
      expect.objectContaining({
        reason: 'ReservedEnv',
        message: expect.stringContaining('LP_KAFKA_BROKERS'),
      }),
    );
    expect(isReservedEnv('NODE_OPTIONS')).toBe(false);
  });
});
