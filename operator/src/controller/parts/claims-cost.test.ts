import * as defaults from '../../api/defaults';
import type { LogPipeline } from '../../api/types';
import { olderTableClaimant, olderTopicClaimant } from './claims';

jest.mock('../../api/defaults', () => {
  const actual = jest.requireActual<typeof defaults>('../../api/defaults');
  return { ...actual, resolveSpec: jest.fn(actual.resolveSpec) };
});

function lp(i: number): LogPipeline {
  const name = `p${i}`;
  return {
    apiVersion: 'logpipeline.io/v1alpha1',
    kind: 'LogPipeline',
    metadata: { namespace: 'ns', name, uid: `uid-${name}`, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: {
      kafka: { bootstrapServers: ['kafka-0:9092'], topic: { name: `ns.${name}` } },
      clickhouse: { url: 'http://ch:8123', database: 'logs', table: name },
    },
    status: { topic: { name: `ns.${name}`, clusterId: 'c' }, table: { serverIdentity: 's' } },
  } as LogPipeline;
}

describe('claims over a fleet', () => {
  it('resolves each cached pipeline once, not once per reconcile of every other pipeline', () => {
    const fleet = Array.from({ length: 200 }, (_, i) => lp(i));
    const specs = fleet.map((p) => defaults.resolveSpec(p));
    const resolve = defaults.resolveSpec as jest.Mock;
    resolve.mockClear();
    // What a restart does: every pipeline's Topic and Table parts check their claims once.
    fleet.forEach((p, i) => {
      expect(olderTopicClaimant(p, specs[i], 'c', fleet)).toBeUndefined();
      expect(olderTableClaimant(p, specs[i], 's', fleet)).toBeUndefined();
    });
    expect(resolve.mock.calls.length).toBeLessThanOrEqual(fleet.length);
    // A changed pipeline is a new object in the informer's cache: judged by its new spec.
    const moved = { ...lp(7), metadata: { ...lp(7).metadata, uid: 'uid-moved', name: 'moved' } };
    moved.metadata.creationTimestamp = '2025-01-01T00:00:00Z';
    moved.spec = { ...moved.spec, clickhouse: { ...moved.spec.clickhouse, table: 'p3' } };
    expect(olderTableClaimant(fleet[3], specs[3], 's', [...fleet, moved])?.metadata.name).toBe('moved');
  });
});
