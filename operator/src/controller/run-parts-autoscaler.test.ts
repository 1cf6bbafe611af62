import { resolveSpec } from '../api/defaults';
import type { LogPipeline } from '../api/types';
import type { KubeClient } from '../apply/kube-rest';
import type { DeploymentView } from '../status/views';
import type { PartContext, ScalingOutcome, ScalingPart } from './external';
import { runAutoscaler } from './run-parts';

const spec = resolveSpec({
  apiVersion: 'logpipeline.io/v1alpha1',
  kind: 'LogPipeline',
  metadata: { name: 'fw', namespace: 'isp', uid: 'uid-1', generation: 1 },
  spec: {
    kafka: { bootstrapServers: ['kafka:9092'] },
    clickhouse: { url: 'http://ch:8123', database: 'logs', table: 'fw' },
    workers: { autoscaling: { enabled: true, minReplicas: 0, maxReplicas: 3 } },
  },
} as LogPipeline);

/** Records the order in which the scale write and the children for pods are sent and answered. */
function recorder() {
  const order: string[] = [];
  const step = async (what: string) => {
    order.push(`sent ${what}`);
    await new Promise((r) => setImmediate(r));
    order.push(`answered ${what}`);
  };
  const client = {
    request: async () => {
      await step('scale');
      return {};
    },
    watch: async () => undefined,
  } as unknown as KubeClient;
  const forPods = { configMap: () => step('configmap'), pdb: () => step('pdb') };
  return { order, client, forPods };
}

const deployment = (replicas: number) =>
  ({ replicas, metadata: { name: 'fw-worker', namespace: 'isp' } }) as unknown as DeploymentView;
const scaler = (replicas: number): ScalingPart => ({
  evaluate: async () => ({ replicas }) as ScalingOutcome,
});

describe('runAutoscaler and what pods need (issue 18)', () => {
  it('applies the ConfigMap, answered, before the scale write that asks for the first pod', async () => {
    const { order, client, forPods } = recorder();
    const r = await runAutoscaler(scaler(2), client, spec, deployment(0), {} as PartContext, forPods);
    expect(r.deployment.replicas).toBe(2);
    expect(order.indexOf('answered configmap')).toBeLessThan(order.indexOf('sent scale'));
    expect(order.filter((o) => o.startsWith('sent'))).toEqual(['sent configmap', 'sent scale', 'sent pdb']);
  });

  it('sends neither with a scale to zero, nor anything when the count stays', async () => {
    const down = recorder();
    await runAutoscaler(scaler(0), down.client, spec, deployment(2), {} as PartContext, down.forPods);
    expect(down.order.filter((o) => o.startsWith('sent'))).toEqual(['sent scale']);
    const same = recorder();
    await runAutoscaler(scaler(2), same.client, spec, deployment(2), {} as PartContext, same.forPods);
    expect(same.order).toEqual([]);
  });
});
