import { OperatorMetrics } from '../observability/metrics';
import { recordObserverRound } from './observer-rounds';

describe('observer round metrics', () => {
  it('exports round durations and requests per round by API, zero for an API a round did not use', async () => {
    const metrics = new OperatorMetrics();
    recordObserverRound(
      'kafka',
      0.02,
      new Map([
        ['OffsetFetch', 1],
        ['FindCoordinator', 1],
      ]),
    );
    recordObserverRound('kafka', 0.01, new Map([['OffsetFetch', 1]]));
    const text = await metrics.registry.metrics();
    const value = (series: string) =>
      Number(
        text
          .split('\n')
          .find((l) => l.startsWith(series))
          ?.split(' ')
          .pop(),
      );
    expect(value('logpipeline_operator_observer_round_seconds_count{system="kafka"}')).toBeGreaterThanOrEqual(
      2,
    );
    const sum = (api: string) =>
      value(`logpipeline_operator_observer_round_requests_sum{system="kafka",api="${api}"}`);
    const count = (api: string) =>
      value(`logpipeline_operator_observer_round_requests_count{system="kafka",api="${api}"}`);
    // Both rounds observed both APIs: the mean per round is sum / count.
    expect(count('OffsetFetch')).toBe(count('FindCoordinator'));
    expect(sum('OffsetFetch') / count('OffsetFetch')).toBe(1);
    expect(sum('FindCoordinator') / count('FindCoordinator')).toBe(0.5);
  });
});
