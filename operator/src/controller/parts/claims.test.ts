import { resolveSpec } from '../../api/defaults';
import type { LogPipeline } from '../../api/types';
import { normalizedBrokers, olderTableClaimant, olderTopicClaimant } from './claims';

function lp(name: string, created: string, brokers: string[], extra: Partial<LogPipeline> = {}): LogPipeline {
  return {
    apiVersion: 'logpipeline.io/v1alpha1',
    kind: 'LogPipeline',
    metadata: { namespace: 'ns', name, uid: `uid-${name}`, creationTimestamp: created },
    spec: {
      kafka: { bootstrapServers: brokers, topic: { name: 'fw.logs' } },
      clickhouse: { url: 'http://ch:8123', database: 'logs', table: 'fw' },
    },
    ...extra,
  };
}

describe('normalizedBrokers', () => {
  it('ignores order, case, duplicates and localhost vs 127.0.0.1', () => {
    expect(normalizedBrokers(['Kafka-1:9092', 'kafka-0:9092', 'kafka-1:9092'])).toBe(
      'kafka-0:9092,kafka-1:9092',
    );
    expect(normalizedBrokers(['localhost:9092'])).toBe(normalizedBrokers(['127.0.0.1:9092']));
  });
});

describe('olderTopicClaimant', () => {
  const owner = lp('owner', '2026-01-01T00:00:00Z', ['kafka-0:9092'], {
    status: { topic: { name: 'fw.logs', clusterId: 'cluster-A' } },
  });

  it('compares the recorded cluster id, not the spelling of the bootstrap list', () => {
    const newer = lp('newer', '2026-02-01T00:00:00Z', ['kafka-1.kafka.svc:9092']);
    expect(olderTopicClaimant(newer, resolveSpec(newer), 'cluster-A', [owner, newer])?.metadata.name).toBe(
      'owner',
    );
    expect(olderTopicClaimant(newer, resolveSpec(newer), 'cluster-B', [owner, newer])).toBeUndefined();
  });

  it('falls back to normalized brokers for a pipeline that recorded nothing yet', () => {
    const fresh = lp('fresh', '2026-01-01T00:00:00Z', ['LOCALHOST:9092']);
    const newer = lp('newer', '2026-02-01T00:00:00Z', ['127.0.0.1:9092']);
    expect(olderTopicClaimant(newer, resolveSpec(newer), 'x', [fresh])?.metadata.name).toBe('fresh');
  });

  it('never names a newer pipeline or itself', () => {
    const newer = lp('newer', '2026-02-01T00:00:00Z', ['kafka-0:9092']);
    expect(olderTopicClaimant(owner, resolveSpec(owner), 'cluster-A', [owner, newer])).toBeUndefined();
  });

  it('also counts the dead-letter topic', () => {
    const dlqUser = lp('dlq', '2026-02-01T00:00:00Z', ['kafka-0:9092']);
    dlqUser.spec.kafka.topic = { name: 'fw.logs.dlq' };
    expect(olderTopicClaimant(dlqUser, resolveSpec(dlqUser), 'cluster-A', [owner])?.metadata.name).toBe(
      'owner',
    );
  });
});

describe('olderTableClaimant', () => {
  it('names the older pipeline on the same table and server identity', () => {
    const owner = lp('owner', '2026-01-01T00:00:00Z', ['k:1'], {
      status: { table: { database: 'logs', table: 'fw', serverIdentity: 'server:1' } },
    });
    const newer = lp('newer', '2026-02-01T00:00:00Z', ['k:1']);
    newer.spec.clickhouse.url = 'http://other-spelling:8123';
    expect(olderTableClaimant(newer, resolveSpec(newer), 'server:1', [owner])?.metadata.name).toBe('owner');
    expect(olderTableClaimant(newer, resolveSpec(newer), 'server:2', [owner])).toBeUndefined();
  });
});

describe('claim checks in a creation storm (issue 18)', () => {
  it('resolve each cached pipeline once, not once per check (no quadratic resolveSpec)', () => {
    let specReads = 0;
    const fleet = Array.from({ length: 50 }, (_, i) => {
      const p = lp(`p${i}`, `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`, ['kafka-0:9092']);
      const spec = p.spec;
      // Counts every read of the raw spec (resolveSpec reads it; the claim checks do not).
      Object.defineProperty(p, 'spec', { get: () => (specReads++, spec) });
      return p;
    });
    const specs = fleet.map((p) => resolveSpec(p));
    const round = () => {
      for (let i = 0; i < fleet.length; i++) {
        olderTopicClaimant(fleet[i], specs[i], 'c', fleet);
        olderTableClaimant(fleet[i], specs[i], 'host:x', fleet);
      }
    };
    round();
    const afterFirst = specReads;
    round();
    round();
    expect(specReads).toBe(afterFirst);
    // All name the same topic and table: the oldest other one is the claimant.
    expect(olderTopicClaimant(fleet[9], specs[9], 'c', fleet)?.metadata.name).toBe('p0');
    // A changed pipeline is a new object (the informer replaces it): resolved afresh.
    const raw = lp('p0', '2026-01-01T00:00:00Z', ['kafka-0:9092']);
    const renamed = { ...raw, spec: { ...raw.spec, kafka: { ...raw.spec.kafka, topic: { name: 'x' } } } };
    expect(olderTopicClaimant(fleet[9], specs[9], 'c', [renamed, ...fleet.slice(1)])?.metadata.name).toBe(
      'p1',
    );
  });
});
