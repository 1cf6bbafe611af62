import { Registry } from 'prom-client';
import { AutoscalerMetrics } from './metrics';

describe('AutoscalerMetrics', () => {
  it('exports lag, rate and replicas per pipeline, counts scales and holds, and forgets a pipeline', async () => {
    const registry = new Registry();
    const m = new AutoscalerMetrics(registry);
    m.observe('ns', 'a', {
      total: 1200,
      maxPartition: 700,
      smoothed: 900,
      ratePerSecond: 55.5,
      desired: 2,
      current: 1,
    });
    m.observe('ns', 'b', {
      total: 0,
      maxPartition: 0,
      smoothed: 0,
      ratePerSecond: 0,
      desired: 0,
      current: 0,
    });
    m.scaled('ns', 'a', 'up');
    m.scaled('ns', 'a', 'up');
    m.held('ns', 'a', 'inserts_stalled');
    const text = await registry.metrics();
    expect(text).toContain('logpipeline_autoscaler_lag_messages{namespace="ns",name="a"} 1200');
    expect(text).toContain('logpipeline_autoscaler_lag_max_partition_messages{namespace="ns",name="a"} 700');
    expect(text).toContain('logpipeline_autoscaler_lag_smoothed_messages{namespace="ns",name="a"} 900');
    expect(text).toContain(
      'logpipeline_autoscaler_consume_rate_messages_per_second{namespace="ns",name="a"} 55.5',
    );
    expect(text).toContain('logpipeline_autoscaler_desired_replicas{namespace="ns",name="a"} 2');
    expect(text).toContain('logpipeline_autoscaler_current_replicas{namespace="ns",name="a"} 1');
    expect(text).toContain(
      'logpipeline_autoscaler_scale_events_total{namespace="ns",name="a",direction="up"} 2',
    );
    expect(text).toContain(
      'logpipeline_autoscaler_holds_total{namespace="ns",name="a",reason="inserts_stalled"} 1',
    );
    m.forget('ns', 'a');
    const after = await registry.metrics();
    expect(after).not.toContain('name="a"');
    expect(after).toContain('logpipeline_autoscaler_lag_messages{namespace="ns",name="b"} 0');
  });
});
