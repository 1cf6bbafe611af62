import type { LogPipeline } from '../../operator/src/api/types';
import { describeConditions, isReady } from './ready';

function lp(
  conditions: Array<[string, 'True' | 'False' | 'Unknown', string, number?]>,
  generation = 2,
): LogPipeline {
  return {
    apiVersion: 'logpipeline.io/v1alpha1',
    kind: 'LogPipeline',
    metadata: { name: 'fw', namespace: 'demo', generation },
    spec: {
      kafka: { bootstrapServers: ['k:9092'] },
      clickhouse: { url: 'http://c', database: 'd', table: 't' },
    },
    status: {
      conditions: conditions.map(([type, status, reason, observedGeneration]) => ({
        type,
        status,
        reason,
        message: '',
        lastTransitionTime: '',
        observedGeneration,
      })),
    },
  };
}

describe('readiness', () => {
  it('is Ready only when Ready=True for the current generation', () => {
    expect(isReady(undefined)).toBe(false);
    expect(isReady(lp([['TopicReady', 'True', 'TopicCreated']]))).toBe(false);
    expect(isReady(lp([['Ready', 'False', 'WorkersNotReady', 2]]))).toBe(false);
    expect(isReady(lp([['Ready', 'True', 'Ready', 1]]))).toBe(false);
    expect(isReady(lp([['Ready', 'True', 'Ready', 2]]))).toBe(true);
  });

  it('describes the conditions on one line', () => {
    expect(describeConditions(undefined)).toBe('no status yet (is the operator running?)');
    expect(
      describeConditions(
        lp([
          ['TopicReady', 'True', 'TopicCreated'],
          ['TableReady', 'False', 'Unreachable'],
        ]),
      ),
    ).toBe('TopicReady=True(TopicCreated) TableReady=False(Unreachable)');
  });
});
