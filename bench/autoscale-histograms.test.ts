import { withRequestScope, countKubeRequest } from '../operator/src/apply/request-counts';
import { OperatorMetrics } from '../operator/src/observability/metrics';
import { fleetPhase } from './autoscale-histograms';

describe('fleetPhase', () => {
  it('turns two scrapes into per-reconcile request and queue-wait distributions', async () => {
    const m = new OperatorMetrics();
    const before = await m.registry.metrics();
    for (let i = 0; i < 9; i++)
      m.observeReconcileRequests((await withRequestScope(async () => undefined)).scope);
    const busy = await withRequestScope(async () => {
      for (let i = 0; i < 7; i++) countKubeRequest('PATCH', '/apis/apps/v1/namespaces/a/deployments/w');
    });
    m.observeReconcileRequests(busy.scope);
    m.fleet.observeQueueWait('bulk', 2);
    const after = await m.registry.metrics();
    const phase = fleetPhase(before, after);
    expect(phase.requestsPerReconcile.kube).toEqual({ count: 10, mean: 0.7, p50: 0, p90: 0 });
    expect(phase.requestsPerReconcile.kafka).toEqual({ count: 10, mean: 0, p50: 0, p90: 0 });
    expect(phase.queueWaitSeconds.bulk).toEqual({ count: 1, mean: 2, p50: 5, p90: 5 });
    expect(phase.queueWaitSeconds.fast).toBeUndefined();
  });
});
