import { resolveSpec } from '../../api/defaults';
import type { LogPipeline, WorkersSpec } from '../../api/types';
import { trackPartitions } from '../../autoscale/partition-stall';
import type { DeploymentView } from '../../status/views';
import { pollIntervalMs, stalledPartitionCause } from './progress-watch';

const spec = (workers: WorkersSpec) =>
  resolveSpec({
    apiVersion: 'logpipeline.io/v1alpha1',
    kind: 'LogPipeline',
    metadata: { name: 'fw', namespace: 'logs', uid: 'u', generation: 1 },
    spec: {
      kafka: { bootstrapServers: ['k:9092'] },
      clickhouse: { url: 'http://ch:8123', database: 'logs', table: 'fw' },
      workers,
    },
  } as LogPipeline);
const dep = (replicas: number) => ({ replicas }) as DeploymentView;

describe('progress watch', () => {
  test('polls at the autoscaler interval, or a quarter of the deadline for watched-only pipelines', () => {
    expect(pollIntervalMs(spec({ autoscaling: { enabled: true, pollInterval: '5s' } }))).toBe(5_000);
    expect(pollIntervalMs(spec({}))).toBe(15_000); // 10m deadline: the 15s default interval
    expect(pollIntervalMs(spec({ progressDeadline: '20s' }))).toBe(5_000);
    expect(pollIntervalMs(spec({ progressDeadline: '1s' }))).toBe(1_000);
  });

  test('names the stalled partition and the last error; nothing while no worker is meant to run', () => {
    const s = spec({ progressDeadline: '1m' });
    const offsets = [{ partition: 2, committed: 40, end: 90, start: 0 }];
    const marks = trackPartitions(trackPartitions(undefined, offsets, 0), offsets, 61_000);
    expect(
      stalledPartitionCause(s, dep(1), marks, offsets, 61_000, 'ClickHouse does not answer: ECONNREFUSED', 0),
    ).toEqual({
      reason: 'PartitionStalled',
      message:
        'partition 2 has not moved for 1m1s (committed offset 40, lag 50), progress deadline 1m; last error: ClickHouse does not answer: ECONNREFUSED',
    });
    expect(stalledPartitionCause(s, dep(1), marks, offsets, 61_000, undefined, 30_000)?.message).toMatch(
      /last error: a journaled batch has waited 30s for its insert/,
    );
    expect(stalledPartitionCause(s, dep(0), marks, offsets, 61_000, undefined, 0)).toBeUndefined();
    expect(stalledPartitionCause(s, dep(1), marks, offsets, 30_000, undefined, 0)).toBeUndefined();
  });
});
