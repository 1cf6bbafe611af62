import { resolveSpec } from '../api/defaults';
import type { LogPipeline } from '../api/types';
import { silentLogger } from '../../../common/src/log';
import { leftBehind, retainReason, type FinalizeDeps } from './finalize';

const lp: LogPipeline = {
  apiVersion: 'logpipeline.io/v1alpha1',
  kind: 'LogPipeline',
  metadata: { name: 'fw', namespace: 'isp', deletionTimestamp: '2026-01-01T00:00:00Z' },
  spec: {
    kafka: { bootstrapServers: ['kafka:9092'] },
    clickhouse: {
      url: 'http://ch:8123',
      database: 'logs',
      table: 'fw',
      adminCredentialsSecretRef: { name: 'admin' },
    },
    deletionPolicy: 'Delete',
  },
  status: { topic: { name: 'isp.fw', clusterId: 'c1' }, table: { database: 'logs', table: 'fw' } },
};

function deps(secrets: string[], nowIso: string): FinalizeDeps {
  return {
    client: {} as never,
    parts: new Map(),
    status: {} as never,
    partContext: () => ({}) as never,
    log: silentLogger,
    secrets: {
      get: (ns, name) =>
        secrets.includes(name) ? { metadata: { namespace: ns, name, resourceVersion: '1' } } : undefined,
    },
    deleteTimeoutMs: 60_000,
    now: () => new Date(nowIso),
  };
}

describe('finalize fallback to Retain', () => {
  const spec = resolveSpec(lp);
  it('runs Delete while the Secrets exist and the deletion is recent', () => {
    expect(retainReason(deps(['admin'], '2026-01-01T00:00:30Z'), lp, spec)).toBeUndefined();
  });
  it('retains when a needed Secret is gone', () => {
    expect(retainReason(deps([], '2026-01-01T00:00:01Z'), lp, spec)).toBe(
      'Secret "admin" (ClickHouse admin credentials) already deleted',
    );
  });
  it('retains when the deletion has been failing past the bound', () => {
    expect(retainReason(deps(['admin'], '2026-01-01T00:01:01Z'), lp, spec)).toMatch(/after 60s/);
  });
  it('names what is left behind', () => {
    expect(leftBehind(lp)).toBe(
      'Kafka topic isp.fw (cluster c1), ClickHouse table logs.fw and its companion tables',
    );
    expect(leftBehind({ ...lp, status: {} })).toBe('nothing recorded in status');
  });
});
